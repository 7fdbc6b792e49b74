// Dropout whose mask is a pure function of (seed, stream, element index): a counter-based generator, so the
// mask never depends on how many threads ran it or in which order, and a resumed run draws the same masks.
// Kept elements are scaled by 1/(1-p) (inverted dropout, as torch.nn.Dropout in training mode).
//   stream: one per dropout site and step (e.g. step * sites + site), so every site draws fresh bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cputrain/core/error.hpp"
#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

/// 64 random bits for (seed, stream, index): SplitMix64's finaliser over a counter that combines the three. The
/// finaliser is a bijection with full avalanche, so distinct counters give independent-looking outputs.
[[nodiscard]] constexpr std::uint64_t counter_random(std::uint64_t seed, std::uint64_t stream,
                                                     std::uint64_t index) noexcept {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + (stream ^ 0xd1b54a32d192ed03ull) * 0xbf58476d1ce4e5b9ull + index;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z = z ^ (z >> 31);
  // A second round: the first alone is linear in index across streams with equal seed * constant sums.
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Whether element `index` of `stream` is kept when dropping with probability p.
[[nodiscard]] constexpr bool dropout_keeps(std::uint64_t seed, std::uint64_t stream, std::uint64_t index,
                                           float p) noexcept {
  // 24 bits, compared exactly in float: keep with probability 1 - p (to 2^-24).
  const auto u = static_cast<float>(counter_random(seed, stream, index) >> 40) * 0x1p-24f;
  return u >= p;
}

/// What a kept element is multiplied by: 1 / (1 - p), as torch's dropout scales.
[[nodiscard]] inline float dropout_scale(float p) noexcept { return 1.0f / (1.0f - p); }

inline void check_dropout_probability(float p) {
  if (!(p >= 0.0f && p < 1.0f)) {
    throw usage_error("cputrain::kernels::dropout: probability " + std::to_string(p) + " is not in [0, 1)");
  }
}

/// y = x * keep / (1 - p) over [n] elements; y may alias x. p == 0 copies. Element i draws counter
/// first_index + i, so a tensor handled in pieces (one attention head at a time) gets the mask it would whole.
inline void dropout_forward(const float* x, std::size_t n, float p, std::uint64_t seed, std::uint64_t stream,
                            float* y, std::uint64_t first_index = 0) {
  check_dropout_probability(p);
  const float scale = dropout_scale(p);
  for_row_blocks(n, 8192, [&](std::size_t first, std::size_t end) {
    if (p == 0.0f) {
      for (std::size_t i = first; i < end; ++i) y[i] = x[i];
      return;
    }
    for (std::size_t i = first; i < end; ++i) {
      y[i] = dropout_keeps(seed, stream, first_index + i, p) ? x[i] * scale : 0.0f;
    }
  });
}

/// dx = dy * keep / (1 - p), the same mask regenerated from (seed, stream); dx may alias dy.
inline void dropout_backward(const float* dy, std::size_t n, float p, std::uint64_t seed, std::uint64_t stream,
                             float* dx, std::uint64_t first_index = 0) {
  dropout_forward(dy, n, p, seed, stream, dx, first_index);
}

}  // namespace cputrain::kernels
