// LayerNorm over the last dimension as torch.nn.LayerNorm computes it, forward and backward:
// layer_norm_forward / layer_norm_backward over whole tensors (rows in parallel; backward can hand each finished
// row of dx to a callback) and layer_norm_forward_row for fused kernels. A row's sums run in a fixed order that
// depends on its length alone, so results do not depend on threads or alignment.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "cputrain/core/bf16.hpp"
#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

namespace detail {
inline constexpr std::size_t norm_lanes = 64;

/// partial[l] += partial[l + width] for l < width: one level of the tree, a fixed-trip loop the compiler vectorises.
template <std::size_t width>
void fold_lanes(float (&partial)[norm_lanes]) {
  for (std::size_t l = 0; l < width; ++l) partial[l] += partial[l + width];
}

/// partial[0] + ... + partial[63], added pairwise in a fixed tree.
inline float add_lanes(float (&partial)[norm_lanes]) {
  static_assert(norm_lanes == 64);
  fold_lanes<32>(partial);
  fold_lanes<16>(partial);
  fold_lanes<8>(partial);
  fold_lanes<4>(partial);
  fold_lanes<2>(partial);
  fold_lanes<1>(partial);
  return partial[0];
}
}  // namespace detail

/// One row on the calling thread. x, y: [cols] (y may alias x); gamma, beta: [cols]; writes the row's mean and
/// 1/std.
inline void layer_norm_forward_row(const float* x, const float* gamma, const float* beta, float eps,
                                   std::size_t cols, float* y, float& mean, float& rstd) {
  // The lane loops are written out in each function: passed as a lambda to a shared helper (not inlined by GCC
  // 12), the partial sums went through memory.
  constexpr std::size_t L = detail::norm_lanes;
  const std::size_t whole = cols - cols % L;
  const auto n = static_cast<float>(cols);
  float sum[L] = {};
  for (std::size_t j = 0; j < whole; j += L) {
    for (std::size_t l = 0; l < L; ++l) sum[l] += x[j + l];
  }
  for (std::size_t j = whole; j < cols; ++j) sum[j - whole] += x[j];
  const float m0 = detail::add_lanes(sum) / n;
  float shift[L] = {}, square[L] = {};
  auto add = [&](std::size_t j, std::size_t l) {
    const float d = x[j] - m0;
    shift[l] += d;
    square[l] += d * d;
  };
  for (std::size_t j = 0; j < whole; j += L) {
    for (std::size_t l = 0; l < L; ++l) add(j + l, l);
  }
  for (std::size_t j = whole; j < cols; ++j) add(j, j - whole);
  const float s = detail::add_lanes(shift) / n;
  // Mathematically >= 0; rounding can leave a constant row a hair below.
  const float var = std::max(detail::add_lanes(square) / n - s * s, 0.0f);
  const float m = m0 + s;
  // Once per row: double costs nothing here and keeps eps (1e-12) from vanishing next to var in the sum.
  const auto rs = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var) + static_cast<double>(eps)));
  for (std::size_t j = 0; j < cols; ++j) y[j] = (x[j] - m) * rs * gamma[j] + beta[j];
  mean = m;
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
  constexpr std::size_t L = detail::norm_lanes;
  const std::size_t whole = cols - cols % L;
  float sum_g[L] = {}, sum_gx[L] = {};
  // One element's terms: of the parameter gradients (per column) and of the row's two sums (per lane).
  auto add = [&](std::size_t j, std::size_t l) {
    const float xhat = (static_cast<float>(x[j]) - mean) * rstd;
    dgamma_sum[j] += dy[j] * xhat;
    dbeta_sum[j] += dy[j];
    const float g = dy[j] * gamma[j];
    sum_g[l] += g;
    sum_gx[l] += g * xhat;
  };
  for (std::size_t j = 0; j < whole; j += L) {
    for (std::size_t l = 0; l < L; ++l) add(j + l, l);
  }
  for (std::size_t j = whole; j < cols; ++j) add(j, j - whole);
  const auto n = static_cast<float>(cols);
  const float mean_g = detail::add_lanes(sum_g) / n;
  const float mean_gx = detail::add_lanes(sum_gx) / n;
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
