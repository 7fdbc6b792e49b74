// Dropout whose mask is a pure function of (seed, stream, element index): a counter-based generator, so the
// mask never depends on how many threads ran it or in which order, and a resumed run draws the same masks.
// Kept elements are scaled by 1/(1-p) (inverted dropout, as torch.nn.Dropout in training mode).
//   stream: one per dropout site and step (e.g. step * sites + site), so every site draws fresh bits.
// Offers whole-tensor dropout_forward / dropout_backward (in parallel), and dropout_apply / dropout_add for one
// run of elements on the calling thread, which fused kernels call row by row with the same mask.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cputrain/core/error.hpp"
#include "cputrain/core/splitmix64.hpp"
#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

/// 64 random bits for (seed, stream, index): SplitMix64's finaliser over a counter that combines the three. The
/// finaliser is a bijection with full avalanche, so distinct counters give independent-looking outputs.
[[nodiscard]] constexpr std::uint64_t counter_random(std::uint64_t seed, std::uint64_t stream,
                                                     std::uint64_t index) noexcept {
  const std::uint64_t z = seed * splitmix64_gamma + (stream ^ 0xd1b54a32d192ed03ull) * 0xbf58476d1ce4e5b9ull + index;
  // Two rounds of the finaliser (the second after SplitMix64's increment): one alone is linear in index across
  // streams with equal seed * constant sums.
  return splitmix64(splitmix64_finalizer(z));
}

/// What a kept element is multiplied by: 1 / (1 - p), as torch's dropout scales.
[[nodiscard]] inline float dropout_scale(float p) noexcept { return 1.0f / (1.0f - p); }

/// Where a dropout site draws: probability p, counter stream `stream` of `seed`. Over a [rows, cols] tensor,
/// element r * cols + j for row r, column j, as dropout_forward over the whole tensor.
struct dropout_draw {
  float p = 0.0f;
  std::uint64_t seed = 0, stream = 0;
  [[nodiscard]] bool active() const { return p > 0.0f; }
};

/// The per-element bits of dropout for one (seed, stream). The 64-bit keys come from counter_random once;
/// each element then costs two rounds of a 32-bit multiply-xorshift hash, which compilers vectorise (AVX2
/// multiplies 32-bit lanes; 64-bit lanes need AVX-512DQ), so masks cost a few instructions per element.
class dropout_stream {
 public:
  constexpr dropout_stream(std::uint64_t seed, std::uint64_t stream) noexcept
      : k0_(static_cast<std::uint32_t>(counter_random(seed, stream, 0) >> 32)),
        k1_(static_cast<std::uint32_t>(counter_random(seed, stream, 1))) {}

  /// 32 random bits for element `index`.
  [[nodiscard]] constexpr std::uint32_t bits(std::uint64_t index) const noexcept {
    return bits(static_cast<std::uint32_t>(index), high_key(index >> 32));
  }
  /// The same, with the index split: high_key(index >> 32) is constant over runs of 2^32 elements.
  [[nodiscard]] static constexpr std::uint32_t mix(std::uint32_t x) noexcept {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
  }
  [[nodiscard]] constexpr std::uint32_t high_key(std::uint64_t high) const noexcept {
    return k1_ ^ (static_cast<std::uint32_t>(high) * 0x9e3779b9u);
  }
  [[nodiscard]] constexpr std::uint32_t bits(std::uint32_t low, std::uint32_t high_key) const noexcept {
    return mix(mix(low ^ k0_) ^ high_key);
  }

 private:
  std::uint32_t k0_, k1_;
};

/// Elements whose top 24 bits are below this are dropped: keep with probability 1 - p (to 2^-24).
[[nodiscard]] constexpr std::uint32_t dropout_threshold(float p) noexcept {
  const double t = static_cast<double>(p) * 16777216.0;
  const auto whole = static_cast<std::uint32_t>(t);
  return static_cast<double>(whole) < t ? whole + 1 : whole;  // ceil, constexpr
}

/// Whether element `index` of `stream` is kept when dropping with probability p.
[[nodiscard]] constexpr bool dropout_keeps(std::uint64_t seed, std::uint64_t stream, std::uint64_t index,
                                           float p) noexcept {
  return (dropout_stream(seed, stream).bits(index) >> 8) >= dropout_threshold(p);
}

/// factors[i] = scale when element first_index + i survives, else 0, for i in [0, n). A loop of integer
/// arithmetic and a select that compilers vectorise.
inline void dropout_factors(const dropout_stream& mask, std::uint64_t first_index, std::size_t n, float p,
                            float scale, float* factors) {
  const std::uint32_t threshold = dropout_threshold(p);
  std::size_t i = 0;
  while (i < n) {
    // A run of indices sharing their high 32 bits (in practice the whole range).
    const std::uint64_t index = first_index + i;
    const std::uint64_t to_boundary = (std::uint64_t{1} << 32) - (index & 0xffffffffu);
    const auto run = static_cast<std::uint32_t>(std::min<std::uint64_t>(n - i, to_boundary));
    const std::uint32_t high_key = mask.high_key(index >> 32);
    const auto low = static_cast<std::uint32_t>(index);
    float* out = factors + i;
    for (std::uint32_t j = 0; j < run; ++j) out[j] = (mask.bits(low + j, high_key) >> 8) >= threshold ? scale : 0.0f;
    i += run;
  }
}

/// Calls f(i, factor) for i in [0, n), factor = 1/(1-p) for a surviving element and 0 for a dropped one
/// (multiply by it: a dropped NaN stays NaN, as in torch). Factors are made 1024 at a time on the stack.
template <class F>
void for_dropout_mask(const dropout_stream& mask, std::uint64_t first_index, std::size_t n, float p, F&& f) {
  constexpr std::size_t chunk = 1024;
  alignas(64) float factors[chunk];
  const float scale = dropout_scale(p);
  for (std::size_t start = 0; start < n; start += chunk) {
    const std::size_t len = std::min(chunk, n - start);
    dropout_factors(mask, first_index + start, len, p, scale, factors);
    for (std::size_t i = 0; i < len; ++i) f(start + i, factors[i]);
  }
}

/// y[i] = x[i] * factor of element first_index + i, for i in [0, n), on the calling thread: dropout_forward's body
/// for one run of a tensor. p == 0 copies. y may alias x. p must be in [0, 1) (check_dropout_probability).
inline void dropout_apply(const dropout_stream& mask, std::uint64_t first_index, std::size_t n, float p,
                          const float* x, float* y) {
  if (p == 0.0f) {
    for (std::size_t i = 0; i < n; ++i) y[i] = x[i];
    return;
  }
  for_dropout_mask(mask, first_index, n, p, [&](std::size_t i, float factor) { y[i] = x[i] * factor; });
}

/// y = dropout(x) + residual over one run, on the calling thread. The products go through a buffer before the
/// additions, so no compiler contracts the two into one multiply-add (which rounds once, not twice): the result is
/// dropout_apply's then an addition, bit for bit. y may alias x or residual.
inline void dropout_add(const dropout_stream& mask, std::uint64_t first_index, std::size_t n, float p,
                        const float* x, const float* residual, float* y) {
  if (p == 0.0f) {
    for (std::size_t i = 0; i < n; ++i) y[i] = x[i] + residual[i];
    return;
  }
  constexpr std::size_t chunk = 1024;
  alignas(64) float dropped[chunk];
  const float scale = dropout_scale(p);
  for (std::size_t start = 0; start < n; start += chunk) {
    const std::size_t len = std::min(chunk, n - start);
    dropout_factors(mask, first_index + start, len, p, scale, dropped);
    for (std::size_t i = 0; i < len; ++i) dropped[i] *= x[start + i];
    for (std::size_t i = 0; i < len; ++i) y[start + i] = dropped[i] + residual[start + i];
  }
}

inline void check_dropout_probability(float p) {
  if (!(p >= 0.0f && p < 1.0f)) {
    throw usage_error("cputrain::kernels::dropout: probability " + std::to_string(p) + " is not in [0, 1)");
  }
}

/// y = x * keep / (1 - p) over [n] elements, a multiplication as torch's (a dropped NaN stays NaN); y may
/// alias x. p == 0 copies. Element i draws counter
/// first_index + i, so a tensor handled in pieces (one attention head at a time) gets the mask it would whole.
inline void dropout_forward(const float* x, std::size_t n, float p, std::uint64_t seed, std::uint64_t stream,
                            float* y, std::uint64_t first_index = 0) {
  check_dropout_probability(p);
  const dropout_stream mask(seed, stream);
  for_row_blocks(n, 8192, [&](std::size_t first, std::size_t end) {
    dropout_apply(mask, first_index + first, end - first, p, x + first, y + first);
  });
}

/// dx = dy * keep / (1 - p), the same mask regenerated from (seed, stream); dx may alias dy.
inline void dropout_backward(const float* dy, std::size_t n, float p, std::uint64_t seed, std::uint64_t stream,
                             float* dx, std::uint64_t first_index = 0) {
  dropout_forward(dy, n, p, seed, stream, dx, first_index);
}

}  // namespace cputrain::kernels
