// Fused passes over the rows of an activation — what follows a matrix product in a BERT layer, done while each
// row is in cache: bias_keep, bias_gelu_keep, bias_dropout_residual_layer_norm and dropout_rows (dropout's
// backward as layer_norm_backward's row callback). Results equal the unfused composition bit for bit.
#pragma once

#include "cputrain/kernels/gelu.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/layer_norm.hpp"
#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

/// kept[0..n) = src as the activation type, for backward: a copy (none when src is kept itself) or a bf16
/// rounding (a row on this thread; a whole tensor in parallel, as to_bf16 decides by size).
template <class A>
void keep(const float* src, A* kept, std::size_t n) {
  if constexpr (std::is_same_v<A, float>) {
    if (src != kept) std::copy(src, src + n, kept);
  } else {
    cputrain::to_bf16(std::span<const float>(src, n), std::span<A>(kept, n));
  }
}

namespace detail {
inline constexpr std::size_t fused_piece = 256;  // columns per piece: 1 KiB of floats
}  // namespace detail

/// kept: [rows, cols] = y + bias [cols]. y is read only, unless it is kept itself (float, in place).
template <class A>
void bias_keep(const float* bias, std::size_t rows, std::size_t cols, const float* y, A* kept) {
  for_row_blocks(rows, rows_per_block(cols), [&](std::size_t first, std::size_t end) {
    alignas(64) float buffer[detail::fused_piece];
    for (std::size_t r = first; r < end; ++r) {
      for (std::size_t c = 0; c < cols; c += detail::fused_piece) {
        const std::size_t len = std::min(detail::fused_piece, cols - c), at = r * cols + c;
        float* out = buffer;
        if constexpr (std::is_same_v<A, float>) out = kept + at;
        for (std::size_t j = 0; j < len; ++j) out[j] = y[at + j] + bias[c + j];
        keep(out, kept + at, len);
      }
    }
  });
}

/// in_kept = y + bias, out_kept = gelu(y + bias); all [rows, cols]. y is read only, unless it is in_kept itself.
template <class A>
void bias_gelu_keep(const float* bias, std::size_t rows, std::size_t cols, const float* y, A* in_kept,
                    A* out_kept) {
  for_row_blocks(rows, rows_per_block(cols), [&](std::size_t first, std::size_t end) {
    alignas(64) float buffer[detail::fused_piece];
    for (std::size_t r = first; r < end; ++r) {
      for (std::size_t c = 0; c < cols; c += detail::fused_piece) {
        const std::size_t len = std::min(detail::fused_piece, cols - c), at = r * cols + c;
        float* in = buffer;
        float* out = buffer;  // under bf16 GELU may overwrite its input once that is kept
        if constexpr (std::is_same_v<A, float>) {
          in = in_kept + at;
          out = out_kept + at;
        }
        for (std::size_t j = 0; j < len; ++j) in[j] = y[at + j] + bias[c + j];
        keep(in, in_kept + at, len);
        gelu_forward_run(in, len, out);
        keep(out, out_kept + at, len);
      }
    }
  });
}

/// z_kept: [rows, cols] = dropout(z + bias) + h; then h = LayerNorm(that) with gamma, beta (writing mean, rstd:
/// [rows]), kept as h_kept unless it is null. z is read only, unless it is z_kept itself; h is the residual on
/// entry and the output on return.
template <class A>
void bias_dropout_residual_layer_norm(const float* bias, const dropout_draw& drop, const float* gamma,
                                      const float* beta, float eps, std::size_t rows, std::size_t cols,
                                      const float* z, A* z_kept, float* h, float* mean, float* rstd, A* h_kept) {
  check_dropout_probability(drop.p);
  const dropout_stream mask(drop.seed, drop.stream);
  for_row_blocks(rows, rows_per_block(cols), [&](std::size_t first, std::size_t end) {
    alignas(64) float biased[detail::fused_piece];
    for (std::size_t r = first; r < end; ++r) {
      float* hr = h + r * cols;
      // The sum goes where it is kept under float; under bf16 into h's row, which LayerNorm then overwrites.
      float* sum = hr;
      if constexpr (std::is_same_v<A, float>) sum = z_kept + r * cols;
      for (std::size_t c = 0; c < cols; c += detail::fused_piece) {
        const std::size_t len = std::min(detail::fused_piece, cols - c), at = r * cols + c;
        for (std::size_t j = 0; j < len; ++j) biased[j] = z[at + j] + bias[c + j];
        dropout_add(mask, at, len, drop.p, biased, hr + c, sum + c);
      }
      keep(sum, z_kept + r * cols, cols);
      layer_norm_forward_row(sum, gamma, beta, eps, cols, hr, mean[r], rstd[r]);
      if (h_kept != nullptr) keep(hr, h_kept + r * cols, cols);
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
