// Tests for include/cputrain/kernels/softmax.hpp: the attention softmax against a double reference (scale before
// the additive mask, one mask row per sequence shared by its heads), masked keys, numerical range, and the
// backward against central differences.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/core/bf16.hpp"
#include "cputrain/kernels/softmax.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace softmax_test {

using cputrain::bf16;
using cputrain::kernels::attention_mask_min;
using cputrain::kernels::attention_softmax_backward;
using cputrain::kernels::attention_softmax_forward;

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// softmax(scores * scale + mask[(group / heads)]) per row, in double. A mask entry equal to attention_mask_min is
/// a padded key (probability 0 unless the whole row is padded).
std::vector<double> reference_forward(const std::vector<double>& scores, const std::vector<float>& mask, double scale,
                                      std::size_t groups, std::size_t heads, std::size_t queries,
                                      std::size_t keys) {
  std::vector<double> p(scores.size());
  for (std::size_t g = 0; g < groups; ++g) {
    const float* m = mask.data() + (g / heads) * keys;
    for (std::size_t q = 0; q < queries; ++q) {
      const std::size_t row = (g * queries + q) * keys;
      double max = -INFINITY;
      std::vector<double> z(keys);
      for (std::size_t k = 0; k < keys; ++k) {
        z[k] = scores[row + k] * scale + m[k];
        max = std::max(max, z[k]);
      }
      double sum = 0;
      for (std::size_t k = 0; k < keys; ++k) sum += (z[k] = std::exp(z[k] - max));
      for (std::size_t k = 0; k < keys; ++k) p[row + k] = z[k] / sum;
    }
  }
  return p;
}

struct shape {
  std::size_t batch, heads, queries, keys;
  std::size_t groups() const { return batch * heads; }
  std::size_t size() const { return groups() * queries * keys; }
};

/// Padding mask: sequence b has its last b keys padded.
std::vector<float> padding_mask(const shape& s) {
  std::vector<float> mask(s.batch * s.keys, 0.0f);
  for (std::size_t b = 0; b < s.batch; ++b) {
    for (std::size_t k = s.keys - std::min(b, s.keys - 1); k < s.keys; ++k) mask[b * s.keys + k] = attention_mask_min;
  }
  return mask;
}

}  // namespace

TEST_CASE("attention_softmax_forward: probabilities of real keys sum to 1, padded keys get exactly 0") {
  const shape s{3, 2, 5, 7};
  const float scale = 0.125f;
  const auto mask = padding_mask(s);
  const auto scores0 = random_values(s.size(), 1, -8.0f, 8.0f);
  auto p = scores0;
  attention_softmax_forward(p.data(), mask.data(), scale, s.groups(), s.heads, s.queries, s.keys);
  const auto want = reference_forward({scores0.begin(), scores0.end()}, mask, scale, s.groups(), s.heads, s.queries,
                                      s.keys);
  for (std::size_t g = 0; g < s.groups(); ++g) {
    const std::size_t b = g / s.heads;
    for (std::size_t q = 0; q < s.queries; ++q) {
      const std::size_t row = (g * s.queries + q) * s.keys;
      double sum = 0;
      for (std::size_t k = 0; k < s.keys; ++k) {
        const float v = p[row + k];
        sum += v;
        CHECK(std::abs(v - want[row + k]) < 1e-6);
        if (mask[b * s.keys + k] != 0.0f) {
          CHECK(v == 0.0f);  // exactly: padding never leaks probability
        } else {
          CHECK(v > 0.0f);
        }
      }
      CHECK(std::abs(sum - 1.0) < 1e-6);
    }
  }
}

TEST_CASE("attention_softmax_forward applies the scale before the additive mask, the mask per sequence") {
  // A finite additive mask tells softmax(s * scale + m) from softmax((s + m) * scale).
  const shape s{2, 3, 4, 6};
  const float scale = 0.5f;
  auto mask = random_values(s.batch * s.keys, 2, -3.0f, 3.0f);
  const auto scores0 = random_values(s.size(), 3, -4.0f, 4.0f);
  auto p = scores0;
  attention_softmax_forward(p.data(), mask.data(), scale, s.groups(), s.heads, s.queries, s.keys);
  const auto want = reference_forward({scores0.begin(), scores0.end()}, mask, scale, s.groups(), s.heads, s.queries,
                                      s.keys);
  double worst = 0;
  for (std::size_t i = 0; i < p.size(); ++i) worst = std::max(worst, std::abs(p[i] - want[i]));
  CHECK(worst < 1e-6);
  // With the other order, or a mask row per group instead of per sequence, the answer would be far off.
  std::vector<float> scaled_mask(mask.size());
  for (std::size_t i = 0; i < mask.size(); ++i) scaled_mask[i] = mask[i] * scale;
  const auto wrong_order = reference_forward({scores0.begin(), scores0.end()}, scaled_mask, scale, s.groups(),
                                             s.heads, s.queries, s.keys);
  double gap = 0;
  for (std::size_t i = 0; i < p.size(); ++i) gap = std::max(gap, std::abs(p[i] - wrong_order[i]));
  CHECK(gap > 1e-2);
}

TEST_CASE("attention_softmax_forward is stable for large scores and gives a fully padded row uniform weights") {
  const std::size_t keys = 5;
  std::vector<float> scores{1000.0f, 999.0f, -1000.0f, 1000.0f, 0.0f,  // large: no overflow
                            1.0f,    2.0f,   3.0f,     4.0f,    5.0f};  // every key padded
  const std::vector<float> mask{0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const std::vector<float> all_padded(keys, attention_mask_min);
  cputrain::kernels::attention_softmax_row_forward(scores.data(), mask.data(), 1.0f, keys);
  cputrain::kernels::attention_softmax_row_forward(scores.data() + keys, all_padded.data(), 0.125f, keys);
  const double e = std::exp(-1.0), z = 2 + e;
  CHECK(scores[0] == Approx(1 / z).epsilon(1e-6));
  CHECK(scores[1] == Approx(e / z).epsilon(1e-6));
  CHECK(scores[2] == 0.0f);
  CHECK(scores[3] == Approx(1 / z).epsilon(1e-6));
  CHECK(scores[4] == 0.0f);
  // PyTorch: scores + finfo.min are all equal to finfo.min, so the softmax is uniform (finite, not NaN).
  for (std::size_t k = 0; k < keys; ++k) CHECK(scores[keys + k] == Approx(0.2).epsilon(1e-6));
}

TEST_CASE("attention_softmax_backward matches central differences, padded keys get exactly zero gradient") {
  const shape s{2, 2, 3, 6};
  const float scale = 1.0f / std::sqrt(8.0f);
  const auto mask = padding_mask(s);
  const auto scores0 = random_values(s.size(), 4, -3.0f, 3.0f);
  const auto w = random_values(s.size(), 5);  // L = sum(w * p)
  auto p = scores0;
  attention_softmax_forward(p.data(), mask.data(), scale, s.groups(), s.heads, s.queries, s.keys);
  auto d = w;  // dL/dp, becomes dL/dscores
  attention_softmax_backward(d.data(), p.data(), scale, s.groups(), s.queries, s.keys);

  std::vector<double> x(scores0.begin(), scores0.end());
  auto objective = [&] {
    const auto q = reference_forward(x, mask, scale, s.groups(), s.heads, s.queries, s.keys);
    double l = 0;
    for (std::size_t i = 0; i < q.size(); ++i) l += w[i] * q[i];
    return l;
  };
  double worst = 0, grad_scale = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i], h = 1e-5;
    x[i] = saved + h;
    const double up = objective();
    x[i] = saved - h;
    const double down = objective();
    x[i] = saved;
    const double numeric = (up - down) / (2 * h);
    worst = std::max(worst, std::abs(d[i] - numeric));
    grad_scale = std::max(grad_scale, std::abs(numeric));
  }
  REQUIRE(grad_scale > 1e-2);
  CHECK(worst < 1e-5 * grad_scale);
  for (std::size_t g = 0; g < s.groups(); ++g) {
    for (std::size_t q = 0; q < s.queries; ++q) {
      for (std::size_t k = 0; k < s.keys; ++k) {
        if (mask[(g / s.heads) * s.keys + k] != 0.0f) CHECK(d[(g * s.queries + q) * s.keys + k] == 0.0f);
      }
    }
  }
}

TEST_CASE("attention_softmax_backward with probabilities kept as bf16 reads the bf16 values") {
  const shape s{2, 2, 9, 33};
  const auto mask = padding_mask(s);
  auto p = random_values(s.size(), 6, -3.0f, 3.0f);
  attention_softmax_forward(p.data(), mask.data(), 0.125f, s.groups(), s.heads, s.queries, s.keys);
  std::vector<bf16> kept(p.size());
  std::vector<float> widened(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    kept[i] = bf16(p[i]);
    widened[i] = static_cast<float>(kept[i]);
  }
  const auto dp = random_values(s.size(), 7);
  auto from_bf16 = dp, from_widened = dp, from_float = dp;
  attention_softmax_backward(from_bf16.data(), kept.data(), 0.125f, s.groups(), s.queries, s.keys);
  attention_softmax_backward(from_widened.data(), widened.data(), 0.125f, s.groups(), s.queries, s.keys);
  attention_softmax_backward(from_float.data(), p.data(), 0.125f, s.groups(), s.queries, s.keys);
  // Reading the bf16 values: the same as reading their float widening (to the rounding of a differently compiled
  // loop, e.g. fused multiply-adds), and visibly not the float probabilities.
  double to_widened = 0, to_float = 0, scale = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    to_widened = std::max(to_widened, static_cast<double>(std::abs(from_bf16[i] - from_widened[i])));
    to_float = std::max(to_float, static_cast<double>(std::abs(from_bf16[i] - from_float[i])));
    scale = std::max(scale, static_cast<double>(std::abs(from_float[i])));
  }
  CHECK(to_widened < 1e-6 * scale);
  CHECK(to_float < 2e-2 * scale);
  CHECK(to_float > 1e-4 * scale);
}

TEST_CASE("attention softmax is bit-identical in arenas of 1 and 2 threads") {
  const shape s{4, 4, 64, 64};
  const auto mask = padding_mask(s);
  const auto scores = random_values(s.size(), 8, -5.0f, 5.0f);
  const auto dp = random_values(s.size(), 9);
  std::vector<float> p1 = scores, p2 = scores, d1 = dp, d2 = dp;
  tbb::task_arena(1).execute([&] {
    attention_softmax_forward(p1.data(), mask.data(), 0.125f, s.groups(), s.heads, s.queries, s.keys);
    attention_softmax_backward(d1.data(), p1.data(), 0.125f, s.groups(), s.queries, s.keys);
  });
  tbb::task_arena(2).execute([&] {
    attention_softmax_forward(p2.data(), mask.data(), 0.125f, s.groups(), s.heads, s.queries, s.keys);
    attention_softmax_backward(d2.data(), p2.data(), 0.125f, s.groups(), s.queries, s.keys);
  });
  CHECK(same_bits(p1, p2));
  CHECK(same_bits(d1, d2));
}

}  // namespace softmax_test
