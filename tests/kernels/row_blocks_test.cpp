// Tests for include/cputrain/kernels/row_blocks.hpp: every row visited once in fixed-size blocks, and column
// reductions that are exact block-ordered float sums, bit-identical for any thread count (nested calls included).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/kernels/row_blocks.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace row_blocks_test {

using cputrain::kernels::for_row_blocks;
using cputrain::kernels::reduce_columns;
using cputrain::kernels::rows_per_block;

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

/// What reduce_columns promises: per block, a float sum of its rows in row order, then the blocks' sums added into
/// out in block order.
std::vector<float> block_ordered_sum(const std::vector<float>& m, std::size_t rows, std::size_t cols,
                                     std::size_t block, std::vector<float> out) {
  for (std::size_t first = 0; first < rows; first += block) {
    std::vector<float> partial(cols, 0.0f);
    for (std::size_t r = first; r < std::min(rows, first + block); ++r) {
      for (std::size_t j = 0; j < cols; ++j) partial[j] += m[r * cols + j];
    }
    for (std::size_t j = 0; j < cols; ++j) out[j] += partial[j];
  }
  return out;
}

std::vector<float> column_sums(const std::vector<float>& m, std::size_t rows, std::size_t cols, std::size_t block,
                               std::vector<float> out) {
  reduce_columns(rows, cols, block, out.data(), [&](std::size_t first, std::size_t end, float* partial) {
    for (std::size_t r = first; r < end; ++r) {
      for (std::size_t j = 0; j < cols; ++j) partial[j] += m[r * cols + j];
    }
  });
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("for_row_blocks visits every row exactly once, in blocks of the given size") {
  for (auto [rows, block] : {std::pair<std::size_t, std::size_t>{1, 1}, {10, 3}, {12, 4}, {1000, 7}, {5, 100}}) {
    std::vector<std::atomic<int>> seen(rows);
    std::mutex m;
    std::set<std::pair<std::size_t, std::size_t>> calls;
    for_row_blocks(rows, block, [&](std::size_t first, std::size_t end) {
      {
        std::lock_guard<std::mutex> lock(m);
        calls.emplace(first, end);
      }
      for (std::size_t r = first; r < end; ++r) seen[r]++;
    });
    INFO("rows=" << rows << " block=" << block);
    for (std::size_t r = 0; r < rows; ++r) REQUIRE(seen[r] == 1);
    REQUIRE(calls.size() == (rows + block - 1) / block);
    for (auto [first, end] : calls) {
      CHECK(first % block == 0);
      CHECK(end == std::min(rows, first + block));
    }
  }
}

TEST_CASE("for_row_blocks: no rows means no call, block 0 is taken as 1") {
  int calls = 0;
  for_row_blocks(0, 16, [&](std::size_t, std::size_t) { ++calls; });
  CHECK(calls == 0);
  std::vector<std::atomic<int>> seen(5);
  std::atomic<int> blocks{0};
  for_row_blocks(5, 0, [&](std::size_t first, std::size_t end) {
    CHECK(end == first + 1);
    ++blocks;
    seen[first]++;
  });
  CHECK(blocks == 5);
  for (auto& s : seen) CHECK(s == 1);
}

TEST_CASE("rows_per_block gives about 16 Ki floats per block and at least one row") {
  CHECK(rows_per_block(768) == 16384 / 768);
  CHECK(rows_per_block(1) == 16384);
  CHECK(rows_per_block(0) == 16384);
  CHECK(rows_per_block(16384) == 1);
  CHECK(rows_per_block(100000) == 1);
}

TEST_CASE("reduce_columns adds the block-ordered float column sums into out") {
  const std::size_t rows = 1001, cols = 37, block = 13;
  const auto m = random_values(rows * cols, 1);
  const auto initial = random_values(cols, 2);
  const auto got = column_sums(m, rows, cols, block, initial);
  CHECK(same_bits(got, block_ordered_sum(m, rows, cols, block, initial)));
  // and that is the column sum (to float rounding), added to what out held
  for (std::size_t j = 0; j < cols; ++j) {
    double exact = initial[j];
    for (std::size_t r = 0; r < rows; ++r) exact += m[r * cols + j];
    CHECK(std::abs(got[j] - exact) < 1e-3);
  }
}

TEST_CASE("reduce_columns is bit-identical in arenas of 1 and 2 threads and across repeated calls") {
  const std::size_t rows = 3000, cols = 768;
  const std::size_t block = rows_per_block(cols);
  const auto m = random_values(rows * cols, 3);
  const std::vector<float> zero(cols, 0.0f);
  std::vector<float> one, two, again;
  tbb::task_arena(1).execute([&] { one = column_sums(m, rows, cols, block, zero); });
  tbb::task_arena(2).execute([&] { two = column_sums(m, rows, cols, block, zero); });
  tbb::task_arena(2).execute([&] { again = column_sums(m, rows, cols, block, zero); });
  CHECK(same_bits(one, two));
  CHECK(same_bits(two, again));
  CHECK(same_bits(one, block_ordered_sum(m, rows, cols, block, zero)));
}

TEST_CASE("reduce_columns called inside another reduce_columns (the per-thread buffer is not shared)") {
  const std::size_t rows = 200, cols = 9, block = 7;
  const auto m = random_values(rows * cols, 4);
  const std::vector<float> zero(cols, 0.0f);
  const auto expected = block_ordered_sum(m, rows, cols, block, zero);
  for (int threads : {1, 2}) {
    std::vector<float> got(cols, 0.0f);
    tbb::task_arena(threads).execute([&] {
      reduce_columns(rows, cols, block, got.data(), [&](std::size_t first, std::size_t end, float* partial) {
        // The inner reduction sums rows [first, end) one row per block (so the same float sum in row order) and
        // runs in parallel, so it may nest on the same thread as the outer one.
        std::vector<float> inner(cols, 0.0f);
        reduce_columns(end - first, cols, 1, inner.data(), [&](std::size_t f, std::size_t e, float* p) {
          for (std::size_t r = first + f; r < first + e; ++r) {
            for (std::size_t j = 0; j < cols; ++j) p[j] += m[r * cols + j];
          }
        });
        for (std::size_t j = 0; j < cols; ++j) partial[j] += inner[j];
      });
    });
    INFO("threads=" << threads);
    CHECK(same_bits(got, expected));
  }
}

TEST_CASE("reduce_columns with no rows or no columns leaves out untouched") {
  std::vector<float> out{1.5f, -2.0f};
  int calls = 0;
  reduce_columns(0, 2, 4, out.data(), [&](std::size_t, std::size_t, float*) { ++calls; });
  reduce_columns(5, 0, 4, out.data(), [&](std::size_t, std::size_t, float*) { ++calls; });
  CHECK(calls == 0);
  CHECK(out == std::vector<float>{1.5f, -2.0f});
}

}  // namespace row_blocks_test
