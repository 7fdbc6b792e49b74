// LayerNorm over the last dimension, forward and backward, as torch.nn.LayerNorm computes it (biased variance,
// eps inside the square root). Statistics are accumulated in double per row, so results are as close to exact
// as float storage allows; the per-row mean and 1/std are kept for backward.
//   forward:  y = (x - mean) * rstd * gamma + beta
//   backward: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma, xhat = (x - mean) * rstd;
//             dgamma += sum_rows dy * xhat, dbeta += sum_rows dy
// Offers whole-tensor layer_norm_forward / layer_norm_backward (rows in parallel; backward can hand each finished
// row of dx to a callback while it is in cache) and layer_norm_forward_row for kernels that fuse the work before
// a LayerNorm into the same pass over the rows.
// The input kept for backward may be float or bf16 (precision::bf16_mixed stores activations in bf16).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "cputrain/core/bf16.hpp"
#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

/// One row on the calling thread. x, y: [cols] (y may alias x); gamma, beta: [cols]; writes the row's mean and
/// 1/std.
inline void layer_norm_forward_row(const float* x, const float* gamma, const float* beta, float eps,
                                   std::size_t cols, float* y, float& mean, float& rstd) {
  double sum = 0;
  for (std::size_t j = 0; j < cols; ++j) sum += x[j];
  const double m = sum / static_cast<double>(cols);
  double sq = 0;
  for (std::size_t j = 0; j < cols; ++j) {
    const double d = x[j] - m;
    sq += d * d;
  }
  const double var = sq / static_cast<double>(cols);
  const auto mf = static_cast<float>(m);
  const auto rs = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));
  for (std::size_t j = 0; j < cols; ++j) y[j] = (x[j] - mf) * rs * gamma[j] + beta[j];
  mean = mf;
  rstd = rs;
}

/// x, y: [rows, cols]; gamma, beta: [cols]; mean, rstd: [rows] (written, for backward). y may alias x.
inline void layer_norm_forward(const float* x, const float* gamma, const float* beta, float eps, std::size_t rows,
                               std::size_t cols, float* y, float* mean, float* rstd) {
  for_row_blocks(rows, rows_per_block(cols), [&](std::size_t first, std::size_t end) {
    for (std::size_t r = first; r < end; ++r) {
      layer_norm_forward_row(x + r * cols, gamma, beta, eps, cols, y + r * cols, mean[r], rstd[r]);
    }
  });
}

/// One row of backward on the calling thread: dx[cols] (may alias dy), and the row's terms of the parameter
/// gradients added into dgamma_sum and dbeta_sum (a row block's partial sums).
template <class TX>
void layer_norm_backward_row(const float* dy, const TX* x, float mean, float rstd, const float* gamma,
                             std::size_t cols, float* dx, float* dgamma_sum, float* dbeta_sum) {
  double sum_g = 0, sum_gx = 0;
  for (std::size_t j = 0; j < cols; ++j) {
    const float xhat = (static_cast<float>(x[j]) - mean) * rstd;
    dgamma_sum[j] += dy[j] * xhat;
    dbeta_sum[j] += dy[j];
    const float g = dy[j] * gamma[j];
    sum_g += g;
    sum_gx += static_cast<double>(g) * xhat;
  }
  const auto mean_g = static_cast<float>(sum_g / static_cast<double>(cols));
  const auto mean_gx = static_cast<float>(sum_gx / static_cast<double>(cols));
  for (std::size_t j = 0; j < cols; ++j) {
    const float xhat = (static_cast<float>(x[j]) - mean) * rstd;
    dx[j] = rstd * (dy[j] * gamma[j] - mean_g - xhat * mean_gx);
  }
}

namespace detail {
/// The row callback when there is none.
struct no_row_callback {
  void operator()(std::size_t, const float*) const noexcept {}
};

/// dgamma and dbeta side by side, so that one reduction over the rows sums both: a per-thread buffer kept between
/// calls (no allocation per training step), or a buffer of its own for a call nested on the same thread (TBB's
/// work stealing can start one while this thread waits inside the reduction).
class parameter_gradient_buffer {
 public:
  explicit parameter_gradient_buffer(std::size_t n) : borrowed_(!busy()), values_(borrowed_ ? kept() : own_) {
    busy() = true;
    values_.resize(n);
  }
  ~parameter_gradient_buffer() {
    if (borrowed_) busy() = false;
  }
  parameter_gradient_buffer(const parameter_gradient_buffer&) = delete;
  parameter_gradient_buffer& operator=(const parameter_gradient_buffer&) = delete;
  [[nodiscard]] float* data() noexcept { return values_.data(); }

 private:
  static std::vector<float>& kept() {
    thread_local std::vector<float> buffer;
    return buffer;
  }
  static bool& busy() {
    thread_local bool in_use = false;
    return in_use;
  }
  std::vector<float> own_;
  bool borrowed_;
  std::vector<float>& values_;
};
}  // namespace detail

/// dy, dx: [rows, cols]; x: the forward input as kept (float or bf16); dgamma, dbeta: [cols], accumulated into.
/// dx may alias dy. row_done(r, dx + r * cols) is called once row r of dx is final, on the thread that computed
/// it: a fused caller consumes the row while it is in cache. One pass over the rows computes everything; the
/// parameter gradients are summed in fixed row blocks added in block order (reduce_columns), so they are the same
/// for any thread count.
template <class TX, class RowDone = detail::no_row_callback>
void layer_norm_backward(const float* dy, const TX* x, const float* mean, const float* rstd, const float* gamma,
                         std::size_t rows, std::size_t cols, float* dx, float* dgamma, float* dbeta,
                         RowDone&& row_done = RowDone{}) {
  detail::parameter_gradient_buffer sums(2 * cols);  // [dgamma | dbeta]
  std::copy(dgamma, dgamma + cols, sums.data());
  std::copy(dbeta, dbeta + cols, sums.data() + cols);
  reduce_columns(rows, 2 * cols, rows_per_block(cols), sums.data(),
                 [&](std::size_t first, std::size_t end, float* partial) {
                   for (std::size_t r = first; r < end; ++r) {
                     layer_norm_backward_row(dy + r * cols, x + r * cols, mean[r], rstd[r], gamma, cols,
                                             dx + r * cols, partial, partial + cols);
                     row_done(r, static_cast<const float*>(dx + r * cols));
                   }
                 });
  std::copy(sums.data(), sums.data() + cols, dgamma);
  std::copy(sums.data() + cols, sums.data() + 2 * cols, dbeta);
}

}  // namespace cputrain::kernels
