// Runs as a singleton and under mpirun with 2 and 3 ranks (cputrain_add_mpi_test). Each rank's values are
// multiples of 1/4 below 2^10 in magnitude, so bf16 rounds most of them (8 significant bits) and their sums are
// exact in fp32: the expected result, bf16(sum of bf16(values)), is computed here without any MPI, and a
// reduction that added in the wrong order, rounded twice, kept fp32 or dropped a shard would differ.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "cputrain/distributed/bf16_bucket_exchange.hpp"
#include "cputrain/mpi/communicator.hpp"
#include "support/checks.hpp"

using cputrain::bf16;
using cputrain::dist::bf16_bucket_exchange;
using cputrain::dist::mpi_communicator;
using cputrain::test::says;

namespace {

float value(int rank, std::size_t i) {
  const auto k = static_cast<int>((i * 53 + static_cast<std::size_t>(rank) * 977) % 8191);
  return static_cast<float>(k - 4095) * 0.25f;
}

std::vector<float> values(int rank, std::size_t length) {
  std::vector<float> v(length);
  for (std::size_t i = 0; i < length; ++i) v[i] = value(rank, i);
  return v;
}

float round_bf16(float x) { return static_cast<float>(bf16(x)); }

std::vector<float> expected(std::size_t length, int size, bool average) {
  std::vector<float> e(length);
  for (std::size_t i = 0; i < length; ++i) {
    float sum = 0;
    for (int r = 0; r < size; ++r) sum += round_bf16(value(r, i));
    e[i] = round_bf16(average ? sum / static_cast<float>(size) : sum);
  }
  return e;
}

// memcmp must not see the null data() of an empty vector, even for 0 bytes.
bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

// Every rank's result, gathered at rank 0, must equal rank 0's bit for bit.
bool same_on_every_rank(mpi_communicator& comm, std::span<const float> mine) {
  const std::vector<float> all = comm.gatherv(mine, 0);
  bool same = true;
  if (comm.rank() == 0 && !mine.empty()) {
    for (int r = 0; r < comm.size(); ++r) {
      same = same && std::memcmp(all.data() + static_cast<std::size_t>(r) * mine.size(), mine.data(),
                                 mine.size_bytes()) == 0;
    }
  }
  return comm.all_reduce_max(same ? 0 : 1) == 0;
}

}  // namespace

TEST_CASE("bf16_bucket_exchange: the sum of every rank's bf16 values, rounded once, the same bits everywhere") {
  mpi_communicator comm;
  const int size = comm.size();
  // Empty, shorter than the world, not a multiple of it, and longer than one piece (two collectives each).
  for (const std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{1001},
                                   bf16_bucket_exchange::piece_elements + 7}) {
    for (const bool average : {true, false}) {
      INFO("length " << length << ", average " << average << ", " << size << " ranks");
      bf16_bucket_exchange exchange(size, length);
      std::vector<float> bucket = values(comm.rank(), length);
      exchange.all_reduce(comm, bucket, average);
      CHECK(same_bits(bucket, expected(length, size, average)));
      CHECK(same_on_every_rank(comm, bucket));
    }
  }
}

TEST_CASE("bf16_bucket_exchange: within 2^-7 of the fp32 average, relative to the mean magnitude") {
  // The stated tolerance (docs/distributed.md): each rank's value and the average are rounded to bf16 once, each
  // rounding within 2^-8 of what it rounds (bf16 keeps 8 significant bits).
  mpi_communicator comm;
  const int size = comm.size();
  const std::size_t length = 5000;
  bf16_bucket_exchange exchange(size, length);
  std::vector<float> bucket = values(comm.rank(), length);
  exchange.all_reduce(comm, bucket, true);
  std::size_t rounded = 0;
  for (std::size_t i = 0; i < length; ++i) {
    double sum = 0;
    double magnitude = 0;
    for (int r = 0; r < size; ++r) {
      sum += value(r, i);
      magnitude += std::fabs(value(r, i));
    }
    const double exact = sum / size;
    INFO("element " << i);
    REQUIRE(std::fabs(bucket[i] - exact) <= std::ldexp(magnitude / size, -7) * (1 + std::ldexp(1.0, -8)));
    if (bucket[i] != static_cast<float>(exact)) ++rounded;
  }
  CHECK(rounded > length / 2);  // it did travel as bf16: most values above 256 in magnitude lost bits
}

TEST_CASE("bf16_bucket_exchange: a NaN on one rank reaches every rank") {
  mpi_communicator comm;
  bf16_bucket_exchange exchange(comm.size(), 10);
  std::vector<float> bucket = values(comm.rank(), 10);
  if (comm.rank() == comm.size() - 1) bucket[7] = std::numeric_limits<float>::quiet_NaN();
  exchange.all_reduce(comm, bucket, true);
  CHECK(std::isnan(bucket[7]));
  CHECK(std::isfinite(bucket[6]));
}

TEST_CASE("bf16_bucket_exchange: sends half the bytes of a ring all-reduce in fp32") {
  // A ring all-reduce sends 2 (n - 1) / n x length x 4 bytes from each rank.
  for (const int n : {2, 3, 4, 64}) {
    const std::size_t length = static_cast<std::size_t>(n) * 1000;
    const std::size_t fp32 = 2 * static_cast<std::size_t>(n - 1) * length * 4 / static_cast<std::size_t>(n);
    CHECK(bf16_bucket_exchange::sent_bytes(length, n) * 2 == fp32);
  }
  CHECK(bf16_bucket_exchange::sent_bytes(10, 3) == 2 * 2 * 4 * 2);  // shards of 4: two padded elements travel too
  CHECK(bf16_bucket_exchange::sent_bytes(12345, 1) == 0);
  CHECK(bf16_bucket_exchange::shard_length(10, 3) == 4);
  CHECK(bf16_bucket_exchange::shard_length(0, 3) == 0);
}

TEST_CASE("bf16_bucket_exchange: a wrong world size or a bucket too long is refused before any MPI call") {
  mpi_communicator comm;
  CHECK_THROWS_AS(bf16_bucket_exchange(0, 10), cputrain::usage_error);
  bf16_bucket_exchange other_world(comm.size() + 1, 10);
  std::vector<float> bucket(10, 1.0f);
  CHECK_THROWS_MATCHES(other_world.all_reduce(comm, bucket, true), cputrain::usage_error,
                       says("made for " + std::to_string(comm.size() + 1) + " ranks"));
  bf16_bucket_exchange small(comm.size(), 4 * comm.size());
  std::vector<float> long_bucket(static_cast<std::size_t>(8 * comm.size() + 1), 1.0f);
  CHECK_THROWS_MATCHES(small.all_reduce(comm, long_bucket, true), cputrain::usage_error,
                       says("longer than the largest it was made for"));
}
