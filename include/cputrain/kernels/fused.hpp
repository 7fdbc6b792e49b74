// Fused passes over the rows of an activation: what follows a matrix product in a BERT layer, done while each row
// is in cache instead of one whole-tensor pass per operation (each pass over [tokens, intermediate] floats is 19 MB
// of memory traffic at base size). Every element sees the operations of the unfused composition in the same order,
// so the results are the unfused ones bit for bit (tests/kernels/fused_test.cpp):
//   bias_keep:                        y += bias; kept = y
//   bias_gelu_keep:                   y += bias; in_kept = y; out_kept = gelu(y)
//   bias_dropout_residual_layer_norm: z = dropout(z + bias) + h; z_kept = z; h = LayerNorm(z); h_kept = h
//   dropout_rows:                     layer_norm_backward's row callback that applies dropout's backward
// `kept` is where backward finds the tensor, in the activation type A: float (then y is usually kept itself and
// keeping costs nothing) or bf16 (a rounded copy of each row). Rows run in parallel in fixed blocks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/gelu.hpp"
#include "cputrain/kernels/layer_norm.hpp"
#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

/// kept[0..n) = src as the activation type: a copy (none when src is kept itself) or a bf16 rounding.
template <class A>
void keep_row(const float* src, A* kept, std::size_t n) {
  if constexpr (std::is_same_v<A, float>) {
    if (src != kept) std::copy(src, src + n, kept);
  } else {
    cputrain::to_bf16(std::span<const float>(src, n), std::span<A>(kept, n));  // one row: on this thread
  }
}

/// y: [rows, cols] += bias [cols], then kept: [rows, cols].
template <class A>
void bias_keep(const float* bias, std::size_t rows, std::size_t cols, float* y, A* kept) {
  for_row_blocks(rows, rows_per_block(cols), [&](std::size_t first, std::size_t end) {
    for (std::size_t r = first; r < end; ++r) {
      float* yr = y + r * cols;
      for (std::size_t j = 0; j < cols; ++j) yr[j] += bias[j];
      keep_row(yr, kept + r * cols, cols);
    }
  });
}

/// y: [rows, cols] += bias, kept as in_kept; gelu(y) kept as out_kept. Under float, y is usually in_kept itself
/// and GELU writes out_kept directly; under bf16, GELU overwrites y's row (already kept) before it is rounded.
template <class A>
void bias_gelu_keep(const float* bias, std::size_t rows, std::size_t cols, float* y, A* in_kept, A* out_kept) {
  for_row_blocks(rows, rows_per_block(cols), [&](std::size_t first, std::size_t end) {
    for (std::size_t r = first; r < end; ++r) {
      float* yr = y + r * cols;
      for (std::size_t j = 0; j < cols; ++j) yr[j] += bias[j];
      keep_row(yr, in_kept + r * cols, cols);
      float* out = yr;
      if constexpr (std::is_same_v<A, float>) out = out_kept + r * cols;
      gelu_forward_run(yr, cols, out);
      keep_row(out, out_kept + r * cols, cols);
    }
  });
}

/// Where a post-product dropout draws: probability p, stream of `seed`; element r * cols + j for row r, column j,
/// as dropout_forward over the whole tensor.
struct dropout_draw {
  float p = 0.0f;
  std::uint64_t seed = 0, stream = 0;
};

/// z: [rows, cols] = dropout(z + bias) + h, kept as z_kept; then h = LayerNorm(z) with gamma, beta (written with
/// mean, rstd: [rows]), kept as h_kept unless it is null. h is the residual on entry and the output on return.
template <class A>
void bias_dropout_residual_layer_norm(const float* bias, const dropout_draw& drop, const float* gamma,
                                      const float* beta, float eps, std::size_t rows, std::size_t cols, float* z,
                                      A* z_kept, float* h, float* mean, float* rstd, A* h_kept) {
  check_dropout_probability(drop.p);
  const dropout_stream mask(drop.seed, drop.stream);
  for_row_blocks(rows, rows_per_block(cols), [&](std::size_t first, std::size_t end) {
    for (std::size_t r = first; r < end; ++r) {
      float* zr = z + r * cols;
      float* hr = h + r * cols;
      for (std::size_t j = 0; j < cols; ++j) zr[j] += bias[j];
      dropout_add(mask, r * cols, cols, drop.p, zr, hr, zr);
      keep_row(zr, z_kept + r * cols, cols);
      layer_norm_forward_row(zr, gamma, beta, eps, cols, hr, mean[r], rstd[r]);
      if (h_kept != nullptr) keep_row(hr, h_kept + r * cols, cols);
    }
  });
}

/// layer_norm_backward's row callback: dropout's backward of each finished row of the gradient, into out:
/// [rows, cols] (the mask of dropout_forward over the whole tensor).
class dropout_rows {
 public:
  dropout_rows(const dropout_draw& drop, std::size_t cols, float* out)
      : mask_(drop.seed, drop.stream), p_(drop.p), cols_(cols), out_(out) {
    check_dropout_probability(p_);
  }
  void operator()(std::size_t r, const float* row) const {
    dropout_apply(mask_, r * cols_, cols_, p_, row, out_ + r * cols_);
  }

 private:
  dropout_stream mask_;
  float p_;
  std::size_t cols_;
  float* out_;
};

}  // namespace cputrain::kernels
