// The exact GELU of BERT's feed-forward layer (Hugging Face's "gelu": x * Phi(x) with the error function, not
// the tanh approximation), forward and backward, vectorised through Eigen's packet erf and exp.
//   forward:  y = 0.5 * x * (1 + erf(x / sqrt(2)))
//   backward: dx = dy * (0.5 * (1 + erf(x / sqrt(2))) + x * exp(-x^2 / 2) / sqrt(2 pi))
#pragma once

#include <algorithm>
#include <cstddef>

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include "cputrain/core/bf16.hpp"
#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

namespace detail {
inline constexpr std::size_t gelu_chunk = 4096;  // elements per task: a few microseconds of work
inline constexpr float inv_sqrt2 = 0.70710678118654752440f;
inline constexpr float inv_sqrt_2pi = 0.39894228040143267794f;
}  // namespace detail

/// x, y: [n]; y may alias x.
inline void gelu_forward(const float* x, std::size_t n, float* y) {
  for_row_blocks(n, detail::gelu_chunk, [&](std::size_t first, std::size_t end) {
    const auto len = static_cast<Eigen::Index>(end - first);
    Eigen::Map<const Eigen::ArrayXf> xs(x + first, len);
    Eigen::Map<Eigen::ArrayXf> ys(y + first, len);
    ys = 0.5f * xs * (1.0f + (xs * detail::inv_sqrt2).erf());
  });
}

/// dy, dx: [n]; x: the forward input as kept (float or bf16). dx may alias dy.
template <class TX>
void gelu_backward(const float* dy, const TX* x, std::size_t n, float* dx) {
  for_row_blocks(n, detail::gelu_chunk, [&](std::size_t first, std::size_t end) {
    const auto len = static_cast<Eigen::Index>(end - first);
    Eigen::Map<const Eigen::ArrayXf> dys(dy + first, len);
    Eigen::Map<Eigen::ArrayXf> dxs(dx + first, len);
    auto body = [&](const auto& xs) {
      dxs = dys * (0.5f * (1.0f + (xs * detail::inv_sqrt2).erf()) +
                   xs * (-0.5f * xs.square()).exp() * detail::inv_sqrt_2pi);
    };
    if constexpr (std::is_same_v<TX, float>) {
      body(Eigen::Map<const Eigen::ArrayXf>(x + first, len));
    } else {
      thread_local Eigen::ArrayXf widened;
      widened.resize(len);
      cputrain::detail::to_float_scalar(x + first, widened.data(), end - first);
      body(widened);
    }
  });
}

}  // namespace cputrain::kernels
