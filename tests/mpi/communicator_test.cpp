// Runs as a singleton (a world of one) and under mpirun with 2 and 3 ranks (tests/mpi/CMakeLists.txt). Each rank
// contributes values that depend on its rank, so a sum that dropped or doubled a rank, or a broadcast from the
// wrong root, gives numbers that differ from the expected ones. Collectives come before the checks, and checks are
// CHECKs (not REQUIREs) after a collective, so a failure on one rank does not leave the others waiting.
#include <catch2/catch.hpp>

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "cputrain/mpi/communicator.hpp"
#include "support/checks.hpp"
#include "cputrain/mpi/environment.hpp"

using cputrain::dist::mpi_communicator;
using cputrain::test::says;

namespace {

static_assert(cputrain::parallel::communicator<mpi_communicator>);

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Rank r's i-th value: integers below 2^20, so sums over a few ranks are exact in float whatever MPI's order.
float value(int rank, std::size_t i) {
  return static_cast<float>((rank + 1) * 1000 + static_cast<int>(i % 977)) - (rank == 1 ? 5000.0f : 0.0f);
}

std::string rank_string(int rank) {
  if (rank == 1) return {};  // one rank sends nothing
  std::string s(static_cast<std::size_t>(rank * 7 + 3), static_cast<char>('a' + rank));
  s[s.size() / 2] = '\0';  // strings are bytes, not C strings
  return s;
}

}  // namespace

TEST_CASE("mpi_communicator: rank and size are MPI_COMM_WORLD's, every rank distinct") {
  mpi_communicator comm;
  CHECK(comm.size() == world_size());
  CHECK(comm.rank() == world_rank());
  // Each rank sets its own bit: a sum of 2^rank is 2^size - 1 only if the ranks are 0..size-1, each once.
  const double bits = comm.all_reduce_sum(static_cast<double>(std::int64_t{1} << comm.rank()));
  CHECK(bits == static_cast<double>((std::int64_t{1} << comm.size()) - 1));
}

TEST_CASE("mpi_communicator: local_rank and local_size on one machine equal rank and size") {
  mpi_communicator comm;
  CHECK(comm.local_rank() == comm.rank());
  CHECK(comm.local_size() == comm.size());
}

TEST_CASE("mpi_communicator: all_reduce_sum sums rank-dependent floats in place, exactly") {
  mpi_communicator comm;
  // The last length is more than one of the pieces all_reduce_sum sends (2^21 floats), and not a multiple of it.
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1'000'003},
                              cputrain::dist::detail::all_reduce_piece * 2 + 5}) {
    INFO("n = " << n);
    // A view into a larger buffer: the floats around it must not change.
    std::vector<float> storage(n + 2, -3.5f);
    const std::span<float> buffer(storage.data() + 1, n);
    for (std::size_t i = 0; i < n; ++i) buffer[i] = value(comm.rank(), i);
    comm.all_reduce_sum(buffer);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      float expected = 0;
      for (int r = 0; r < comm.size(); ++r) expected += value(r, i);
      if (buffer[i] != expected) ++wrong;
    }
    CHECK(wrong == 0);
    if (n > 0) {
      float expected_first = 0;
      for (int r = 0; r < comm.size(); ++r) expected_first += value(r, 0);
      CHECK(buffer[0] == expected_first);
    }
    CHECK(storage.front() == -3.5f);
    CHECK(storage.back() == -3.5f);
  }
}

TEST_CASE("mpi_communicator: the scalar all-reduces sum doubles and take the int64 maximum") {
  mpi_communicator comm;
  const int n = comm.size();
  const double sum = comm.all_reduce_sum(comm.rank() + 0.25);
  CHECK(sum == n * (n - 1) / 2.0 + 0.25 * n);
  // The largest value is the last rank's, beyond 32 bits; the others are negative.
  const std::int64_t mine = comm.rank() == n - 1 ? (std::int64_t{5} << 40) + comm.rank() : -1 - comm.rank();
  CHECK(comm.all_reduce_max(mine) == (std::int64_t{5} << 40) + (n - 1));
  CHECK(comm.all_reduce_max(-std::int64_t{7} * (comm.rank() + 1)) == -7);
}

TEST_CASE("mpi_communicator: broadcast gives every rank the root's floats, from the last rank and from rank 0") {
  mpi_communicator comm;
  for (const int root : {comm.size() - 1, 0}) {
    INFO("root " << root);
    std::vector<float> buffer(10'001);
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = value(comm.rank(), i);
    comm.broadcast(buffer, root);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < buffer.size(); ++i) wrong += buffer[i] != value(root, i) ? 1 : 0;
    CHECK(wrong == 0);
  }
}

TEST_CASE("mpi_communicator: barrier returns on every rank") {
  mpi_communicator comm;
  comm.barrier();
  comm.barrier();
  CHECK(comm.all_reduce_max(1) == 1);
}

TEST_CASE("mpi_communicator: gather_strings gives the root every rank's bytes in rank order, others nothing") {
  mpi_communicator comm;
  for (const int root : {comm.size() - 1, 0}) {
    INFO("root " << root);
    const std::vector<std::string> all = comm.gather_strings(rank_string(comm.rank()), root);
    if (comm.rank() == root) {
      REQUIRE(all.size() == static_cast<std::size_t>(comm.size()));
      for (int r = 0; r < comm.size(); ++r) {
        INFO("rank " << r);
        CHECK(all[static_cast<std::size_t>(r)] == rank_string(r));
      }
    } else {
      CHECK(all.empty());
    }
  }
}

TEST_CASE("mpi_communicator: gatherv concatenates every rank's floats at the root in rank order, sizes differing") {
  mpi_communicator comm;
  // Rank r sends 5r floats: rank 0 sends none.
  const auto count = [](int r) { return static_cast<std::size_t>(5 * r); };
  std::vector<float> mine(count(comm.rank()));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = value(comm.rank(), i);
  const int root = comm.size() - 1;
  const std::vector<float> all = comm.gatherv(mine, root);
  if (comm.rank() == root) {
    std::vector<float> expected;
    for (int r = 0; r < comm.size(); ++r) {
      for (std::size_t i = 0; i < count(r); ++i) expected.push_back(value(r, i));
    }
    CHECK(all == expected);
  } else {
    CHECK(all.empty());
  }
  // Root 0 with an empty contribution of its own.
  const std::vector<float> at_zero = comm.gatherv(mine, 0);
  if (comm.rank() == 0) {
    std::size_t total = 0;
    for (int r = 0; r < comm.size(); ++r) total += count(r);
    CHECK(at_zero.size() == total);
    if (comm.size() > 1) CHECK(at_zero.front() == value(1, 0));
  } else {
    CHECK(at_zero.empty());
  }
}

TEST_CASE("mpi_communicator: broadcast_bytes gives every rank the root's string, whatever their own lengths") {
  mpi_communicator comm;
  const int root = comm.size() - 1;
  const auto root_bytes = [] {
    std::string s(100'003, '\0');
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>((i * 31 + 7) % 256);
    return s;
  }();
  // Other ranks start longer, shorter or empty, so the string must be resized either way.
  std::string bytes = comm.rank() == root ? root_bytes : std::string(comm.rank() == 0 ? 200'000 : 3, 'x');
  comm.broadcast_bytes(bytes, root);
  CHECK(bytes == root_bytes);

  std::string empty = comm.rank() == 0 ? std::string() : std::string("left over");
  comm.broadcast_bytes(empty, 0);
  CHECK(empty.empty());
}

TEST_CASE("mpi_communicator: all_to_all sends block b to rank b, all_gather lays every rank's block in rank order") {
  mpi_communicator comm;
  const int n = comm.size();
  const int me = comm.rank();
  const std::size_t block = 3;
  // Integers below 256 are exact in bf16: block b of rank r holds 100 r + 10 b + j.
  const auto code = [](int r, int b, std::size_t j) { return static_cast<float>(100 * r + 10 * b + static_cast<int>(j)); };
  std::vector<cputrain::bf16> out(block * static_cast<std::size_t>(n));
  std::vector<cputrain::bf16> in(out.size());
  for (int b = 0; b < n; ++b) {
    for (std::size_t j = 0; j < block; ++j) out[static_cast<std::size_t>(b) * block + j] = cputrain::bf16(code(me, b, j));
  }
  comm.all_to_all(std::span<const cputrain::bf16>(out), in);
  for (int r = 0; r < n; ++r) {
    for (std::size_t j = 0; j < block; ++j) {
      CHECK(static_cast<float>(in[static_cast<std::size_t>(r) * block + j]) == code(r, me, j));
    }
  }
  const std::vector<cputrain::bf16> mine(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(block));
  comm.all_gather(std::span<const cputrain::bf16>(mine), in);
  for (int r = 0; r < n; ++r) {
    for (std::size_t j = 0; j < block; ++j) CHECK(static_cast<float>(in[static_cast<std::size_t>(r) * block + j]) == code(r, 0, j));
  }
  // Lengths that are not the same multiple of the ranks are refused before any MPI call, on every rank.
  std::vector<cputrain::bf16> longer(block * static_cast<std::size_t>(n) + 1);
  CHECK_THROWS_MATCHES(comm.all_to_all(std::span<const cputrain::bf16>(out), longer), cputrain::usage_error,
                       says("both must be the same multiple of the " + std::to_string(n) + " ranks"));
  CHECK_THROWS_AS(comm.all_gather(std::span<const cputrain::bf16>(mine), longer), cputrain::usage_error);
  if (n > 1) CHECK_THROWS_AS(comm.all_to_all(std::span<const cputrain::bf16>(longer), longer), cputrain::usage_error);
  comm.barrier();
}

TEST_CASE("mpi_communicator: a root that is not a rank throws usage_error naming it, on every rank") {
  mpi_communicator comm;
  const int n = comm.size();
  std::vector<float> buffer(4, 1.0f);
  std::string bytes = "abc";
  for (const int root : {-1, n}) {
    INFO("root " << root);
    CHECK_THROWS_MATCHES(comm.broadcast(buffer, root), cputrain::usage_error,
                         says("broadcast: root " + std::to_string(root) +
                                                   " is not a rank of this communicator (its ranks are 0.." +
                                                   std::to_string(n - 1) + ")"));
    CHECK_THROWS_AS(comm.gather_strings("x", root), cputrain::usage_error);
    CHECK_THROWS_AS(comm.gatherv(buffer, root), cputrain::usage_error);
    CHECK_THROWS_AS(comm.broadcast_bytes(bytes, root), cputrain::usage_error);
  }
  CHECK(bytes == "abc");
  CHECK(buffer == std::vector<float>(4, 1.0f));
  // The communicator still works: nothing was left half-done.
  comm.all_reduce_sum(buffer);
  CHECK(buffer == std::vector<float>(4, static_cast<float>(n)));
}

TEST_CASE("mpi_communicator: on MPI_COMM_SELF each rank is a world of one") {
  mpi_communicator self(MPI_COMM_SELF);
  CHECK(self.rank() == 0);
  CHECK(self.size() == 1);
  CHECK(self.local_rank() == 0);
  CHECK(self.local_size() == 1);
  std::vector<float> buffer = {1.5f, -2.0f};
  self.all_reduce_sum(buffer);
  CHECK(buffer == std::vector<float>{1.5f, -2.0f});
  CHECK(self.gather_strings("only me", 0) == std::vector<std::string>{"only me"});
}

TEST_CASE("mpi_communicator: communicators are separate duplicates") {
  mpi_communicator a;
  mpi_communicator b;
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(a.native_handle(), MPI_COMM_WORLD, &result);
  CHECK(result == MPI_CONGRUENT);  // same processes in the same order, but not the same communicator
  MPI_Comm_compare(a.native_handle(), b.native_handle(), &result);
  CHECK(result == MPI_CONGRUENT);
}

TEST_CASE("mpi_communicator: MPI_COMM_NULL is refused") {
  CHECK_THROWS_MATCHES(mpi_communicator(MPI_COMM_NULL), cputrain::usage_error,
                       says("MPI_COMM_NULL"));
}

TEST_CASE("mpi_environment: a second one finds MPI running, reports its level and leaves it running") {
  int argc = 0;
  char** argv = nullptr;
  int level = 0;
  {
    cputrain::dist::mpi_environment again(argc, argv);
    CHECK_FALSE(again.initialized_here());
    level = again.provided_level();
    CHECK(level >= MPI_THREAD_SERIALIZED);
  }
  int finalized = 1;
  MPI_Finalized(&finalized);
  CHECK(finalized == 0);
  int queried = -1;
  MPI_Query_thread(&queried);
  CHECK(queried == level);
  CHECK(cputrain::dist::mpi_thread_level_name(MPI_THREAD_FUNNELED) == "MPI_THREAD_FUNNELED");
  CHECK(cputrain::dist::mpi_thread_level_name(MPI_THREAD_MULTIPLE) == "MPI_THREAD_MULTIPLE");
}
