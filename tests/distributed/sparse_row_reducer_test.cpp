// Tests for include/cputrain/distributed/sparse_row_reducer.hpp, run as a singleton and under mpirun with 2 and 3 ranks
// (tests/mpi/CMakeLists.txt). Each rank uses a different, overlapping set of rows, with gradients only there, as
// an embedding's backward leaves them; the result must equal the dense all-reduce of the whole table divided by
// the world size, bit for bit, and the rows nobody used must stay zero. Values are multiples of 1/8 below 2^10,
// so every sum is exact in float whatever order MPI adds in.
#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "cputrain/mpi/communicator.hpp"
#include "cputrain/distributed/sparse_row_reducer.hpp"
#include "support/checks.hpp"

using cputrain::dist::mpi_communicator;
using cputrain::dist::sparse_row_reducer;
using cputrain::test::says;

namespace {

constexpr std::size_t rows = 50, width = 7;

// The rows rank r's batch uses: every (r + 2)-th row, and row 0 (the padding token) on every rank.
std::vector<std::int32_t> ids_of(int rank) {
  std::vector<std::int32_t> ids{0};
  for (std::size_t row = 3; row < rows; row += static_cast<std::size_t>(rank) + 2) {
    ids.push_back(static_cast<std::int32_t>(row));
    ids.push_back(static_cast<std::int32_t>(row));  // a token twice in a batch
  }
  return ids;
}

std::vector<float> gradient_of(int rank) {
  std::vector<float> g(rows * width, 0.0f);
  for (const std::int32_t id : ids_of(rank)) {
    for (std::size_t k = 0; k < width; ++k) {
      g[static_cast<std::size_t>(id) * width + k] =
          static_cast<float>((static_cast<std::size_t>(id) * 13 + k * 5 + static_cast<std::size_t>(rank) * 7) % 97) / 8.0f;
    }
  }
  return g;
}

}  // namespace

TEST_CASE("the used rows are averaged exactly as a dense all-reduce averages them, and the others stay zero") {
  mpi_communicator comm;
  std::vector<float> dense = gradient_of(comm.rank());
  comm.all_reduce_sum(std::span<float>(dense));
  for (float& x : dense) x /= static_cast<float>(comm.size());

  for (int step = 0; step < 3; ++step) {  // the marks are cleared after each step
    std::vector<float> table = gradient_of(comm.rank());
    sparse_row_reducer<mpi_communicator> reducer(comm, table, width);
    CHECK(reducer.rows() == rows);
    reducer.mark(ids_of(comm.rank()));
    const std::size_t sent = reducer.reduce();
    CHECK(table == dense);
    // The union of every rank's rows was sent, and no other.
    std::vector<bool> used(rows, false);
    for (int r = 0; r < comm.size(); ++r) {
      for (const std::int32_t id : ids_of(r)) used[static_cast<std::size_t>(id)] = true;
    }
    std::size_t expected = 0;
    for (const bool u : used) expected += u ? 1 : 0;
    CHECK(sent == (comm.size() == 1 ? 0 : expected));
    for (std::size_t row = 0; row < rows; ++row) {
      if (!used[row]) {
        for (std::size_t k = 0; k < width; ++k) CHECK(table[row * width + k] == 0.0f);
      }
    }
  }
}

TEST_CASE("with average off the used rows hold the plain sum over ranks") {
  mpi_communicator comm;
  std::vector<float> dense = gradient_of(comm.rank());
  comm.all_reduce_sum(std::span<float>(dense));
  std::vector<float> table = gradient_of(comm.rank());
  sparse_row_reducer<mpi_communicator> reducer(comm, table, width, false);
  reducer.mark(ids_of(comm.rank()));
  (void)reducer.reduce();
  CHECK(table == dense);
}

TEST_CASE("a reducer reused for several steps sends only what each step marked") {
  mpi_communicator comm;
  std::vector<float> table(rows * width, 0.0f);
  sparse_row_reducer<mpi_communicator> reducer(comm, table, width);
  reducer.mark(std::vector<std::int32_t>{1, 2, 3});
  (void)reducer.reduce();
  reducer.mark(std::vector<std::int32_t>{4});
  CHECK(reducer.reduce() == (comm.size() == 1 ? 0u : 1u));
}

TEST_CASE("bad tables and rows are refused") {
  mpi_communicator comm;
  std::vector<float> table(10, 0.0f);
  CHECK_THROWS_MATCHES(sparse_row_reducer<mpi_communicator>(comm, table, 3), cputrain::usage_error,
                       says("not a whole number of rows of width 3"));
  sparse_row_reducer<mpi_communicator> reducer(comm, table, 5);
  CHECK_THROWS_MATCHES(reducer.mark(std::vector<std::int32_t>{2}), cputrain::usage_error, says("row 2 of a table of 2"));
  CHECK_THROWS_MATCHES(reducer.mark(std::vector<std::int32_t>{-1}), cputrain::usage_error, says("row -1"));
}
