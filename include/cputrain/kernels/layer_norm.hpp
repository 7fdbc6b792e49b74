// LayerNorm over the last dimension, forward and backward, as torch.nn.LayerNorm computes it (biased variance,
// eps inside the square root). Statistics are accumulated in double per row, so results are as close to exact
// as float storage allows; the per-row mean and 1/std are kept for backward.
//   forward:  y = (x - mean) * rstd * gamma + beta
//   backward: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma, xhat = (x - mean) * rstd;
//             dgamma += sum_rows dy * xhat, dbeta += sum_rows dy
// The input kept for backward may be float or bf16 (precision::bf16_mixed stores activations in bf16).
#pragma once

#include <cmath>
#include <cstddef>

#include "cputrain/core/bf16.hpp"
#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

/// x, y: [rows, cols]; gamma, beta: [cols]; mean, rstd: [rows] (written, for backward). y may alias x.
inline void layer_norm_forward(const float* x, const float* gamma, const float* beta, float eps, std::size_t rows,
                               std::size_t cols, float* y, float* mean, float* rstd) {
  for_row_blocks(rows, rows_per_block(cols), [&](std::size_t first, std::size_t end) {
    for (std::size_t r = first; r < end; ++r) {
      const float* xr = x + r * cols;
      double sum = 0;
      for (std::size_t j = 0; j < cols; ++j) sum += xr[j];
      const double m = sum / static_cast<double>(cols);
      double sq = 0;
      for (std::size_t j = 0; j < cols; ++j) {
        const double d = xr[j] - m;
        sq += d * d;
      }
      const double var = sq / static_cast<double>(cols);
      const auto mf = static_cast<float>(m);
      const auto rs = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));
      float* yr = y + r * cols;
      for (std::size_t j = 0; j < cols; ++j) yr[j] = (xr[j] - mf) * rs * gamma[j] + beta[j];
      mean[r] = mf;
      rstd[r] = rs;
    }
  });
}

/// dy, dx: [rows, cols]; x: the forward input as kept (float or bf16); dgamma, dbeta: [cols], accumulated into.
/// dx may alias dy.
template <class TX>
void layer_norm_backward(const float* dy, const TX* x, const float* mean, const float* rstd, const float* gamma,
                         std::size_t rows, std::size_t cols, float* dx, float* dgamma, float* dbeta) {
  const std::size_t block = rows_per_block(cols);
  // Parameter gradients first: dx may overwrite dy.
  reduce_columns(rows, cols, block, dgamma, [&](std::size_t first, std::size_t end, float* partial) {
    for (std::size_t r = first; r < end; ++r) {
      const float* dyr = dy + r * cols;
      const TX* xr = x + r * cols;
      for (std::size_t j = 0; j < cols; ++j) partial[j] += dyr[j] * ((static_cast<float>(xr[j]) - mean[r]) * rstd[r]);
    }
  });
  reduce_columns(rows, cols, block, dbeta, [&](std::size_t first, std::size_t end, float* partial) {
    for (std::size_t r = first; r < end; ++r) {
      const float* dyr = dy + r * cols;
      for (std::size_t j = 0; j < cols; ++j) partial[j] += dyr[j];
    }
  });
  for_row_blocks(rows, block, [&](std::size_t first, std::size_t end) {
    for (std::size_t r = first; r < end; ++r) {
      const float* dyr = dy + r * cols;
      const TX* xr = x + r * cols;
      double sum_g = 0, sum_gx = 0;
      for (std::size_t j = 0; j < cols; ++j) {
        const float g = dyr[j] * gamma[j];
        const float xhat = (static_cast<float>(xr[j]) - mean[r]) * rstd[r];
        sum_g += g;
        sum_gx += static_cast<double>(g) * xhat;
      }
      const auto mean_g = static_cast<float>(sum_g / static_cast<double>(cols));
      const auto mean_gx = static_cast<float>(sum_gx / static_cast<double>(cols));
      float* dxr = dx + r * cols;
      for (std::size_t j = 0; j < cols; ++j) {
        const float xhat = (static_cast<float>(xr[j]) - mean[r]) * rstd[r];
        dxr[j] = rstd[r] * (dyr[j] * gamma[j] - mean_g - xhat * mean_gx);
      }
    }
  });
}

}  // namespace cputrain::kernels
