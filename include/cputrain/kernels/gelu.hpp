// The exact (erf) GELU of BERT's feed-forward layer, forward and backward: gelu_forward / gelu_backward over whole
// tensors in parallel, gelu_forward_run / gelu_backward_run over one run on the calling thread (for fused
// kernels). Every element goes through the same packet code, so its result does not depend on where it sits.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include "cputrain/core/bf16.hpp"
#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

namespace detail {
inline constexpr std::size_t gelu_chunk = 4096;  // elements per task: a few microseconds of work
inline constexpr std::size_t gelu_block = 16;    // elements per evaluation: one AVX-512 packet, two AVX2 ones
inline constexpr float inv_sqrt2 = 0.70710678118654752440f;
inline constexpr float inv_sqrt_2pi = 0.39894228040143267794f;

// Fixed-size maps: Eigen evaluates them packet by packet from the first element, with no scalar peeling to reach an
// aligned address (which a dynamic-size map does, and whose scalar exp is libm's, not the packet one).
using gelu_values = Eigen::Map<Eigen::Array<float, gelu_block, 1>>;
using const_gelu_values = Eigen::Map<const Eigen::Array<float, gelu_block, 1>>;

/// y = gelu(x) over one block; y may alias x.
inline void gelu_forward_block(const float* x, float* y) {
  const const_gelu_values xs(x);
  gelu_values ys(y);
  ys = 0.5f * xs * (1.0f + (xs * inv_sqrt2).erf());
}

/// dx = dy * gelu'(x) over one block; dx may alias dy.
inline void gelu_backward_block(const float* dy, const float* x, float* dx) {
  const const_gelu_values xs(x), dys(dy);
  gelu_values dxs(dx);
  dxs = dys * (0.5f * (1.0f + (xs * inv_sqrt2).erf()) + xs * (-0.5f * xs.square()).exp() * inv_sqrt_2pi);
}
}  // namespace detail

/// y = gelu(x) over [n] on the calling thread; y may alias x.
inline void gelu_forward_run(const float* x, std::size_t n, float* y) {
  constexpr std::size_t B = detail::gelu_block;
  std::size_t i = 0;
  for (; i + B <= n; i += B) detail::gelu_forward_block(x + i, y + i);
  if (i < n) {
    float tail[B] = {};
    std::copy(x + i, x + n, tail);
    detail::gelu_forward_block(tail, tail);
    std::copy(tail, tail + (n - i), y + i);
  }
}

/// dx = dy * gelu'(x) over [n] on the calling thread; x as kept (float or bf16). dx may alias dy.
template <class TX>
void gelu_backward_run(const float* dy, const TX* x, std::size_t n, float* dx) {
  constexpr std::size_t B = detail::gelu_block;
  std::size_t i = 0;
  for (; i + B <= n; i += B) {
    if constexpr (std::is_same_v<TX, float>) {
      detail::gelu_backward_block(dy + i, x + i, dx + i);
    } else {
      float widened[B];
      for (std::size_t j = 0; j < B; ++j) widened[j] = static_cast<float>(x[i + j]);
      detail::gelu_backward_block(dy + i, widened, dx + i);
    }
  }
  if (i < n) {
    float xs[B] = {}, dys[B] = {};
    for (std::size_t j = i; j < n; ++j) xs[j - i] = static_cast<float>(x[j]);
    std::copy(dy + i, dy + n, dys);
    detail::gelu_backward_block(dys, xs, dys);
    std::copy(dys, dys + (n - i), dx + i);
  }
}

/// x, y: [n]; y may alias x.
inline void gelu_forward(const float* x, std::size_t n, float* y) {
  for_row_blocks(n, detail::gelu_chunk, [&](std::size_t first, std::size_t end) {
    gelu_forward_run(x + first, end - first, y + first);
  });
}

/// dy, dx: [n]; x: the forward input as kept (float or bf16). dx may alias dy.
template <class TX>
void gelu_backward(const float* dy, const TX* x, std::size_t n, float* dx) {
  for_row_blocks(n, detail::gelu_chunk, [&](std::size_t first, std::size_t end) {
    gelu_backward_run(dy + first, x + first, end - first, dx + first);
  });
}

}  // namespace cputrain::kernels
