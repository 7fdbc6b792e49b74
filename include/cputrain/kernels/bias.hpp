// Bias of a linear layer: add a [cols] bias to every row of a [rows, cols] activation, and its gradient, the
// column sums of the incoming gradient (deterministic for any thread count, see row_blocks.hpp).
#pragma once

#include <cstddef>

#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

/// y[r, :] += bias for every row r. y: [rows, cols].
inline void add_bias(float* y, const float* bias, std::size_t rows, std::size_t cols) {
  for_row_blocks(rows, rows_per_block(cols), [&](std::size_t first, std::size_t end) {
    for (std::size_t r = first; r < end; ++r) {
      float* yr = y + r * cols;
      for (std::size_t j = 0; j < cols; ++j) yr[j] += bias[j];
    }
  });
}

/// dbias[j] += sum over rows of dy[r, j]. dy: [rows, cols].
inline void bias_backward(const float* dy, std::size_t rows, std::size_t cols, float* dbias) {
  reduce_columns(rows, cols, rows_per_block(cols), dbias, [&](std::size_t first, std::size_t end, float* partial) {
    for (std::size_t r = first; r < end; ++r) {
      const float* dyr = dy + r * cols;
      for (std::size_t j = 0; j < cols; ++j) partial[j] += dyr[j];
    }
  });
}

}  // namespace cputrain::kernels
