// Tests for include/cputrain/kernels/bias.hpp: the bias is added to every row, its gradient (the column sums) is
// accumulated, matches central differences, and is bit-identical for any thread count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/kernels/bias.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace bias_test {

using cputrain::kernels::add_bias;
using cputrain::kernels::bias_backward;

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("add_bias adds the bias to every row, and nothing else") {
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{1, 1}, {3, 5}, {1000, 77}}) {
    const auto y0 = random_values(rows * cols, 1), bias = random_values(cols, 2);
    auto y = y0;
    add_bias(y.data(), bias.data(), rows, cols);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t j = 0; j < cols; ++j) REQUIRE(y[r * cols + j] == y0[r * cols + j] + bias[j]);
    }
  }
}

TEST_CASE("bias_backward accumulates the column sums and matches central differences") {
  const std::size_t rows = 300, cols = 41;
  const auto y0 = random_values(rows * cols, 3), w = random_values(rows * cols, 4);  // L = sum(w * (y0 + b))
  auto bias = random_values(cols, 5);
  const auto initial = random_values(cols, 6);
  auto dbias = initial;
  bias_backward(w.data(), rows, cols, dbias.data());
  auto objective = [&] {
    auto y = y0;
    add_bias(y.data(), bias.data(), rows, cols);
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i) l += static_cast<double>(w[i]) * y[i];
    return l;
  };
  for (std::size_t j = 0; j < cols; ++j) {
    double exact = 0;
    for (std::size_t r = 0; r < rows; ++r) exact += w[r * cols + j];
    const double added = static_cast<double>(dbias[j]) - initial[j];
    CHECK(std::abs(added - exact) < 1e-4);
    // Central differences through the float kernel: h large enough that float rounding of y is negligible.
    const float saved = bias[j], h = 0.0625f;
    bias[j] = saved + h;
    const double up = objective();
    bias[j] = saved - h;
    const double down = objective();
    bias[j] = saved;
    const double numeric = (up - down) / (2.0 * h);
    CHECK(std::abs(added - numeric) < 1e-3 * std::max(1.0, std::abs(numeric)));
  }
}

TEST_CASE("bias_backward is bit-identical in arenas of 1 and 2 threads") {
  const std::size_t rows = 3000, cols = 768;
  const auto dy = random_values(rows * cols, 7);
  std::vector<float> one(cols, 0.0f), two(cols, 0.0f), again(cols, 0.0f);
  tbb::task_arena(1).execute([&] { bias_backward(dy.data(), rows, cols, one.data()); });
  tbb::task_arena(2).execute([&] { bias_backward(dy.data(), rows, cols, two.data()); });
  tbb::task_arena(2).execute([&] { bias_backward(dy.data(), rows, cols, again.data()); });
  CHECK(same_bits(one, two));
  CHECK(same_bits(two, again));
  for (std::size_t j = 0; j < cols; j += 101) {
    double s = 0;
    for (std::size_t r = 0; r < rows; ++r) s += dy[r * cols + j];
    CHECK(std::abs(one[j] - s) < 1e-3);
  }
}

TEST_CASE("bias kernels with no rows do nothing") {
  std::vector<float> dbias{1.0f, 2.0f}, bias{3.0f, 4.0f};
  bias_backward(nullptr, 0, 2, dbias.data());
  add_bias(nullptr, bias.data(), 0, 2);
  CHECK(dbias == std::vector<float>{1.0f, 2.0f});
}

}  // namespace bias_test
