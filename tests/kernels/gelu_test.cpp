// Tests for include/cputrain/kernels/gelu.hpp: the exact (erf) GELU against 0.5 x (1 + erf(x / sqrt 2)) in double,
// its derivative against the exact formula and central differences, bf16 input, odd lengths, in-place use; the
// one-run helpers on pieces at any alignment give the whole-tensor result bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/core/bf16.hpp"
#include "cputrain/kernels/gelu.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace gelu_test {

using cputrain::bf16;
using cputrain::kernels::gelu_backward;
using cputrain::kernels::gelu_backward_run;
using cputrain::kernels::gelu_forward;
using cputrain::kernels::gelu_forward_run;

namespace {

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_derivative(double x) {
  return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
}

using aligned = std::vector<float, Eigen::aligned_allocator<float>>;

aligned random_values(std::size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  aligned v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

bool same_bits(const aligned& a, const aligned& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("gelu_forward is the exact erf GELU (not the tanh approximation) to float precision") {
  // A dense sweep of [-8, 8] plus random points, an odd length (several tasks and a vector tail).
  aligned x;
  for (int i = -8000; i <= 8000; ++i) x.push_back(static_cast<float>(i) * 1e-3f);
  const auto extra = random_values(4097, 1, -6.0f, 6.0f);
  x.insert(x.end(), extra.begin(), extra.end());
  aligned y(x.size());
  gelu_forward(x.data(), x.size(), y.data());
  double worst_relative = 0, worst_negative = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = gelu(x[i]);
    const double err = std::abs(y[i] - want);
    if (x[i] >= -1.0f) {
      // No cancellation in 1 + erf: float accuracy relative to the value (|y| > 1e-5 except right at 0).
      worst_relative = std::max(worst_relative, err / std::max(std::abs(want), 1e-30));
    } else {
      // For x << 0, 1 + erf(x / sqrt 2) is a difference of nearly equal terms: even a correctly rounded float erf
      // leaves an error of |x| / 2 times erf's absolute error (2^-25 at best). Allow erf 10 ulp of 1, i.e. 6e-7.
      worst_negative = std::max(worst_negative, err / (1e-6 * std::abs(want) + 3e-7 * std::abs(x[i])));
    }
  }
  CHECK(worst_relative < 1e-6);
  CHECK(worst_negative < 1.0);
  // The tanh approximation differs by 4e-4 at x = 3: make sure this is not it.
  const float three = 3.0f;
  float y3 = 0;
  gelu_forward(&three, 1, &y3);
  const double tanh_approx = 0.5 * 3.0 * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (3.0 + 0.044715 * 27.0)));
  CHECK(std::abs(y3 - gelu(3.0)) < 1e-6 * 3.0);
  CHECK(std::abs(y3 - tanh_approx) > 3e-4);
}

TEST_CASE("gelu_forward at the edges: 0, large positive and large negative inputs") {
  const aligned x{0.0f, 20.0f, 1e10f, -20.0f, -1e10f};
  aligned y(x.size());
  gelu_forward(x.data(), x.size(), y.data());
  CHECK(y[0] == 0.0f);
  CHECK(y[1] == 20.0f);
  CHECK(y[2] == 1e10f);
  CHECK(y[3] == 0.0f);  // -0 compares equal
  CHECK(y[4] == 0.0f);
  for (float v : y) CHECK(std::isfinite(v));
}

TEST_CASE("gelu_backward matches the exact derivative and central differences of the double GELU") {
  const std::size_t n = 3 * 4096 + 7;
  const auto x = random_values(n, 2, -6.0f, 6.0f);
  const auto dy = random_values(n, 3, -1.0f, 1.0f);
  aligned dx(n);
  gelu_backward(dy.data(), x.data(), n, dx.data());
  double worst = 0, worst_fd = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double xi = x[i];
    const double exact = dy[i] * gelu_derivative(xi);
    const double h = 1e-5;
    const double numeric = dy[i] * (gelu(xi + h) - gelu(xi - h)) / (2 * h);
    // dx is a product of float terms of size <= ~1.13 |dy|: compare on that scale.
    const double scale = std::max(std::abs(static_cast<double>(dy[i])), 1e-3);
    worst = std::max(worst, std::abs(dx[i] - exact) / scale);
    worst_fd = std::max(worst_fd, std::abs(dx[i] - numeric) / scale);
  }
  CHECK(worst < 1e-6);
  CHECK(worst_fd < 1e-4);
}

TEST_CASE("gelu_backward with x kept as bf16 reads the bf16 values") {
  const std::size_t n = 2 * 4096 + 13;
  auto x = random_values(n, 4, -4.0f, 4.0f);
  const auto dy = random_values(n, 5, -1.0f, 1.0f);
  std::vector<bf16> kept(n);
  for (std::size_t i = 0; i < n; ++i) {
    kept[i] = bf16(x[i]);
    x[i] = static_cast<float>(kept[i]);
  }
  aligned from_bf16(n), from_float(n);
  gelu_backward(dy.data(), kept.data(), n, from_bf16.data());
  gelu_backward(dy.data(), x.data(), n, from_float.data());
  CHECK(same_bits(from_bf16, from_float));
  for (std::size_t i = 0; i < n; i += 101) {
    CHECK(std::abs(from_bf16[i] - dy[i] * gelu_derivative(x[i])) < 1e-6 * std::max(1.0f, std::abs(dy[i])));
  }
}

TEST_CASE("gelu in place (y == x forward, dx == dy backward) equals out of place, short lengths") {
  for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{4096 * 2 + 5}}) {
    const auto x = random_values(n, 6, -5.0f, 5.0f);
    const auto dy = random_values(n, 7, -1.0f, 1.0f);
    aligned y(n), dx(n);
    gelu_forward(x.data(), n, y.data());
    gelu_backward(dy.data(), x.data(), n, dx.data());
    auto y_in = x;
    gelu_forward(y_in.data(), n, y_in.data());
    auto dx_in = dy;
    gelu_backward(dx_in.data(), x.data(), n, dx_in.data());
    INFO("n=" << n);
    CHECK(same_bits(y_in, y));
    CHECK(same_bits(dx_in, dx));
    for (std::size_t i = 0; i < n; ++i) REQUIRE(std::abs(y[i] - gelu(x[i])) < 2e-6 * std::max(1.0, gelu(x[i])));
  }
}

TEST_CASE("gelu is bit-identical in arenas of 1 and 2 threads") {
  const std::size_t n = 100000;
  const auto x = random_values(n, 8, -5.0f, 5.0f);
  const auto dy = random_values(n, 9, -1.0f, 1.0f);
  aligned y1(n), y2(n), d1(n), d2(n);
  tbb::task_arena(1).execute([&] {
    gelu_forward(x.data(), n, y1.data());
    gelu_backward(dy.data(), x.data(), n, d1.data());
  });
  tbb::task_arena(2).execute([&] {
    gelu_forward(x.data(), n, y2.data());
    gelu_backward(dy.data(), x.data(), n, d2.data());
  });
  CHECK(same_bits(y1, y2));
  CHECK(same_bits(d1, d2));
}

TEST_CASE("gelu on pieces of any length at any alignment equals the whole tensor bit for bit (no scalar tails)") {
  const std::size_t n = 4096 + 1000;
  const auto x = random_values(n, 10, -6.0f, 6.0f);
  const auto dy = random_values(n, 11, -1.0f, 1.0f);
  aligned y(n), dx(n);
  gelu_forward(x.data(), n, y.data());
  gelu_backward(dy.data(), x.data(), n, dx.data());
  for (std::size_t offset : {std::size_t{1}, std::size_t{3}, std::size_t{15}}) {
    // Copies that start `offset` floats past a 64-byte boundary, cut into runs of awkward lengths.
    aligned xs(n + offset), dys(n + offset), ys(n + offset), dxs(n + offset);
    std::copy(x.begin(), x.end(), xs.begin() + static_cast<std::ptrdiff_t>(offset));
    std::copy(dy.begin(), dy.end(), dys.begin() + static_cast<std::ptrdiff_t>(offset));
    std::size_t start = 0, len = 1;
    while (start < n) {
      const std::size_t run = std::min(len, n - start), at = offset + start;
      gelu_forward_run(xs.data() + at, run, ys.data() + at);
      gelu_backward_run(dys.data() + at, xs.data() + at, run, dxs.data() + at);
      start += run;
      len = len * 3 + 2;  // 1, 5, 17, 53, ...: tails of every length
    }
    INFO("offset=" << offset);
    CHECK(std::memcmp(ys.data() + offset, y.data(), n * sizeof(float)) == 0);
    CHECK(std::memcmp(dxs.data() + offset, dx.data(), n * sizeof(float)) == 0);
  }
}

TEST_CASE("gelu_backward_run widens bf16 in full blocks and in the tail alike") {
  const std::size_t n = 16 * 5 + 9;
  auto x = random_values(n, 12, -4.0f, 4.0f);
  const auto dy = random_values(n, 13, -1.0f, 1.0f);
  std::vector<bf16> kept(n);
  for (std::size_t i = 0; i < n; ++i) {
    kept[i] = bf16(x[i]);
    x[i] = static_cast<float>(kept[i]);
  }
  aligned from_bf16(n), from_float(n);
  gelu_backward_run(dy.data(), kept.data(), n, from_bf16.data());
  gelu_backward_run(dy.data(), x.data(), n, from_float.data());
  CHECK(same_bits(from_bf16, from_float));
  for (std::size_t i = 0; i < n; ++i) {
    REQUIRE(std::abs(from_bf16[i] - dy[i] * gelu_derivative(x[i])) < 1e-6 * std::max(1.0f, std::abs(dy[i])));
  }
}

}  // namespace gelu_test
