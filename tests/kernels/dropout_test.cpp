// Tests for include/cputrain/kernels/dropout.hpp: the kept fraction, the scale of kept values, backward's mask,
// the mask's independence of thread count, its dependence on seed and stream, pieces with first_index, in-place use
// and the probability's range; the one-run helpers for fused kernels (dropout_apply, dropout_add) against the
// whole-tensor kernel.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/core/error.hpp"
#include "cputrain/kernels/dropout.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace dropout_test {

using cputrain::kernels::counter_random;
using cputrain::kernels::dropout_add;
using cputrain::kernels::dropout_apply;
using cputrain::kernels::dropout_backward;
using cputrain::kernels::dropout_forward;
using cputrain::kernels::dropout_keeps;
using cputrain::kernels::dropout_scale;
using cputrain::kernels::dropout_stream;

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.5f, 2.0f);  // never zero, so a zero output means "dropped"
  std::vector<float> v(n);
  for (auto& x : v) x = std::bernoulli_distribution(0.5)(rng) ? dist(rng) : -dist(rng);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<bool> mask_of(const std::vector<float>& y) {
  std::vector<bool> m(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) m[i] = y[i] != 0.0f;
  return m;
}

std::vector<float> ones_through_dropout(std::size_t n, float p, std::uint64_t seed, std::uint64_t stream) {
  const std::vector<float> ones(n, 1.0f);
  std::vector<float> y(n);
  dropout_forward(ones.data(), n, p, seed, stream, y.data());
  return y;
}

/// |count - n q| within `sigmas` binomial standard deviations.
bool within_binomial(std::size_t count, std::size_t n, double q, double sigmas = 6.0) {
  const double mean = static_cast<double>(n) * q, sd = std::sqrt(static_cast<double>(n) * q * (1 - q));
  return std::abs(static_cast<double>(count) - mean) <= sigmas * sd;
}

}  // namespace

TEST_CASE("dropout keeps a fraction 1 - p of 1e6 elements, each scaled by exactly 1 / (1 - p), the rest 0") {
  const std::size_t n = 1000000;
  const auto x = random_values(n, 1);
  for (float p : {0.1f, 0.5f, 0.9f}) {
    std::vector<float> y(n);
    dropout_forward(x.data(), n, p, 42, 7, y.data());
    const float scale = 1.0f / (1.0f - p);
    CHECK(dropout_scale(p) == scale);
    std::size_t kept = 0, pairs = 0;
    bool exact = true;
    for (std::size_t i = 0; i < n; ++i) {
      if (y[i] != 0.0f) {
        ++kept;
        exact = exact && y[i] == x[i] * scale;
        if (i > 0 && y[i - 1] != 0.0f) ++pairs;
      }
    }
    INFO("p=" << p << " kept=" << kept);
    CHECK(exact);
    CHECK(within_binomial(kept, n, 1.0 - p));
    // Neighbours are independent: both kept with probability (1 - p)^2.
    CHECK(within_binomial(pairs, n - 1, (1.0 - p) * (1.0 - p)));
  }
}

TEST_CASE("dropout with p = 0 copies exactly, dropout_keeps with p = 0 always keeps") {
  const std::size_t n = 10000;
  const auto x = random_values(n, 2);
  std::vector<float> y(n);
  dropout_forward(x.data(), n, 0.0f, 1, 1, y.data());
  CHECK(same_bits(x, y));
  for (std::uint64_t i = 0; i < 1000; ++i) REQUIRE(dropout_keeps(3, 4, i, 0.0f));
}

TEST_CASE("dropout_backward applies the forward's mask and scale to the incoming gradient") {
  const std::size_t n = 50000;
  const auto x = random_values(n, 3), dy = random_values(n, 4);
  const float p = 0.3f;
  std::vector<float> y(n), dx(n);
  dropout_forward(x.data(), n, p, 9, 123, y.data());
  dropout_backward(dy.data(), n, p, 9, 123, dx.data());
  const float scale = dropout_scale(p);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (y[i] != 0.0f) {
      ++kept;
      REQUIRE(dx[i] == dy[i] * scale);
    } else {
      REQUIRE(dx[i] == 0.0f);
    }
    REQUIRE((y[i] != 0.0f) == dropout_keeps(9, 123, i, p));
  }
  CHECK(within_binomial(kept, n, 1.0 - p));
}

TEST_CASE("dropout masks are identical in arenas of 1 and 2 threads") {
  const std::size_t n = 300000;
  const auto x = random_values(n, 5);
  std::vector<float> y1(n), y2(n), d1(n), d2(n);
  tbb::task_arena(1).execute([&] {
    dropout_forward(x.data(), n, 0.1f, 77, 5, y1.data());
    dropout_backward(x.data(), n, 0.1f, 77, 5, d1.data());
  });
  tbb::task_arena(2).execute([&] {
    dropout_forward(x.data(), n, 0.1f, 77, 5, y2.data());
    dropout_backward(x.data(), n, 0.1f, 77, 5, d2.data());
  });
  CHECK(same_bits(y1, y2));
  CHECK(same_bits(d1, d2));
  CHECK(same_bits(y1, d1));
}

TEST_CASE("different seeds or streams give different, independent masks") {
  const std::size_t n = 200000;
  const float p = 0.5f;
  const auto base = mask_of(ones_through_dropout(n, p, 1, 0));
  for (auto [seed, stream] : {std::pair<std::uint64_t, std::uint64_t>{1, 1}, {2, 0}, {0, 1}, {0, 0}, {1, 2}}) {
    const auto other = mask_of(ones_through_dropout(n, p, seed, stream));
    std::size_t agree = 0;
    for (std::size_t i = 0; i < n; ++i) agree += base[i] == other[i];
    INFO("seed=" << seed << " stream=" << stream);
    CHECK(within_binomial(agree, n, 0.5));  // independent masks agree half the time at p = 0.5
  }
  // Nor is another stream's mask this one shifted by a few elements.
  const auto next = mask_of(ones_through_dropout(n, p, 1, 1));
  for (std::size_t shift = 1; shift < 64; ++shift) {
    std::size_t agree = 0;
    for (std::size_t i = 0; i + shift < n; ++i) agree += base[i + shift] == next[i];
    REQUIRE(within_binomial(agree, n - shift, 0.5));
  }
  // Small seeds and streams, as a trainer uses them, never start on the same counter value.
  std::set<std::uint64_t> first_draws;
  for (std::uint64_t seed = 0; seed < 32; ++seed) {
    for (std::uint64_t stream = 0; stream < 256; ++stream) first_draws.insert(counter_random(seed, stream, 0));
  }
  CHECK(first_draws.size() == 32 * 256);
}

TEST_CASE("dropout of a piece with first_index reproduces that slice of the whole tensor's mask") {
  const std::size_t n = 40000;
  const auto x = random_values(n, 6);
  std::vector<float> whole(n);
  dropout_forward(x.data(), n, 0.25f, 11, 3, whole.data());
  for (auto [first, len] : {std::pair<std::size_t, std::size_t>{0, 100}, {1000, 4000}, {12345, 20000}, {39999, 1}}) {
    std::vector<float> piece(len), back(len);
    dropout_forward(x.data() + first, len, 0.25f, 11, 3, piece.data(), first);
    dropout_backward(x.data() + first, len, 0.25f, 11, 3, back.data(), first);
    INFO("first=" << first << " len=" << len);
    CHECK(std::memcmp(piece.data(), whole.data() + first, len * sizeof(float)) == 0);
    CHECK(same_bits(piece, back));
  }
  // Without the offset, a piece gets another mask.
  std::vector<float> unshifted(20000);
  dropout_forward(x.data() + 12345, 20000, 0.25f, 11, 3, unshifted.data());
  CHECK(std::memcmp(unshifted.data(), whole.data() + 12345, 20000 * sizeof(float)) != 0);
}

TEST_CASE("dropout in place (y == x, dx == dy) equals out of place") {
  const std::size_t n = 30000;
  const auto x = random_values(n, 7);
  std::vector<float> y(n), d(n);
  dropout_forward(x.data(), n, 0.2f, 5, 6, y.data());
  dropout_backward(x.data(), n, 0.2f, 5, 6, d.data());
  auto in_place = x, in_place_back = x;
  dropout_forward(in_place.data(), n, 0.2f, 5, 6, in_place.data());
  dropout_backward(in_place_back.data(), n, 0.2f, 5, 6, in_place_back.data());
  CHECK(same_bits(in_place, y));
  CHECK(same_bits(in_place_back, d));
}

TEST_CASE("dropout probabilities outside 0 <= p < 1 are usage errors") {
  std::vector<float> x(4, 1.0f), y(4);
  for (float p : {1.0f, 1.5f, -0.1f, -1e-30f, std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::infinity()}) {
    INFO("p=" << p);
    CHECK_THROWS_AS(dropout_forward(x.data(), 4, p, 0, 0, y.data()), cputrain::usage_error);
    CHECK_THROWS_AS(dropout_backward(x.data(), 4, p, 0, 0, y.data()), cputrain::usage_error);
  }
  // Even with no elements: a bad probability is a bug in the caller whatever the tensor.
  CHECK_THROWS_AS(dropout_forward(x.data(), 0, 1.0f, 0, 0, y.data()), cputrain::usage_error);
  CHECK_NOTHROW(dropout_forward(x.data(), 4, 0.999f, 0, 0, y.data()));
  CHECK_NOTHROW(dropout_forward(x.data(), 4, -0.0f, 0, 0, y.data()));
}

TEST_CASE("counter_random is a compile-time pure function of (seed, stream, index)") {
  static_assert(counter_random(1, 2, 3) == counter_random(1, 2, 3));
  static_assert(counter_random(1, 2, 3) != counter_random(1, 2, 4));
  static_assert(counter_random(1, 2, 3) != counter_random(1, 3, 3));
  static_assert(counter_random(1, 2, 3) != counter_random(2, 2, 3));
  static_assert(dropout_keeps(1, 2, 3, 0.0f));
  // The top bits are uniform: the mean of many 24-bit uniforms is 1/2.
  double sum = 0;
  const std::size_t n = 1 << 20;
  for (std::uint64_t i = 0; i < n; ++i) sum += static_cast<double>(counter_random(5, 6, i) >> 40) * 0x1p-24;
  CHECK(std::abs(sum / n - 0.5) < 6 * std::sqrt(1.0 / 12.0 / n));
}

TEST_CASE("dropout_apply on rows reproduces dropout_forward over the whole tensor, rows across 1024-element chunks") {
  const std::size_t rows = 7, cols = 1500;  // rows straddle the helpers' 1024-element chunks
  const auto x = random_values(rows * cols, 8);
  for (float p : {0.0f, 0.1f, 0.6f}) {
    std::vector<float> whole(x.size()), by_rows(x.size());
    dropout_forward(x.data(), x.size(), p, 21, 4, whole.data());
    const dropout_stream mask(21, 4);
    for (std::size_t r = 0; r < rows; ++r) {
      dropout_apply(mask, r * cols, cols, p, x.data() + r * cols, by_rows.data() + r * cols);
    }
    INFO("p=" << p);
    CHECK(same_bits(by_rows, whole));
    if (p > 0) CHECK(std::count(whole.begin(), whole.end(), 0.0f) > 0);
  }
}

TEST_CASE("dropout_add is dropout_forward then an addition, bit for bit, in place or not") {
  const std::size_t rows = 5, cols = 2100;
  const auto x = random_values(rows * cols, 9), residual = random_values(rows * cols, 10);
  for (float p : {0.0f, 0.1f, 0.5f}) {
    std::vector<float> want(x.size());
    dropout_forward(x.data(), x.size(), p, 3, 17, want.data());
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += residual[i];
    const dropout_stream mask(3, 17);
    std::vector<float> got(x.size()), into_x = x, into_residual = residual;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t o = r * cols;
      dropout_add(mask, o, cols, p, x.data() + o, residual.data() + o, got.data() + o);
      dropout_add(mask, o, cols, p, into_x.data() + o, residual.data() + o, into_x.data() + o);
      dropout_add(mask, o, cols, p, x.data() + o, into_residual.data() + o, into_residual.data() + o);
    }
    INFO("p=" << p);
    CHECK(same_bits(got, want));
    CHECK(same_bits(into_x, want));
    CHECK(same_bits(into_residual, want));
    // Dropped elements are the residual alone; kept ones are not (x is never 0).
    std::size_t dropped = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const bool kept = cputrain::kernels::dropout_keeps(3, 17, i, p);
      dropped += kept ? 0 : 1;
      REQUIRE((got[i] == residual[i]) == !kept);
    }
    CHECK((p == 0.0f ? dropped == 0 : within_binomial(dropped, got.size(), p)));
  }
}

TEST_CASE("dropout_add rounds the scaled value before adding: not one fused multiply-add") {
  // x * 1/(1-p) is inexact for p = 0.1; adding a residual that cancels most of it exposes a single rounding.
  const float p = 0.1f, scale = dropout_scale(p);
  const std::size_t n = 4096;
  std::vector<float> x(n), residual(n), got(n);
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(1.0f, 2.0f);
  std::size_t differs_from_fma = 0;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = u(rng);
    residual[i] = -(x[i] * scale);  // the rounded product, negated
  }
  dropout_add(dropout_stream(5, 6), 0, n, p, x.data(), residual.data(), got.data());
  for (std::size_t i = 0; i < n; ++i) {
    if (!cputrain::kernels::dropout_keeps(5, 6, i, p)) continue;
    REQUIRE(got[i] == 0.0f);  // round(x * scale) + -round(x * scale)
    differs_from_fma += std::fma(x[i], scale, residual[i]) != 0.0f ? 1 : 0;
  }
  CHECK(differs_from_fma > n / 4);  // a fused multiply-add would have left the product's rounding error
}

}  // namespace dropout_test
