// Deterministic parallel loops over the rows of a [rows, cols] matrix, the shape every activation has.
//
// Rows are cut into blocks of a fixed size that does not depend on the thread count, and a column reduction
// (the gradient of a bias or of LayerNorm's gamma and beta: a sum over all tokens) adds each block's partial sums
// in block order. So a result is bit-identical whether one thread or sixteen ran it, which is what makes a
// resumed training run end with the same weights as one that never stopped.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>

namespace cputrain::kernels {

/// Calls f(first_row, end_row) for consecutive blocks of `block` rows, in parallel in the current arena.
template <class F>
void for_row_blocks(std::size_t rows, std::size_t block, F&& f) {
  if (rows == 0) return;
  block = std::max<std::size_t>(block, 1);
  const std::size_t blocks = (rows + block - 1) / block;
  if (blocks == 1) {
    f(std::size_t{0}, rows);
    return;
  }
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, blocks, 1),
      [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t b = r.begin(); b != r.end(); ++b) f(b * block, std::min(rows, (b + 1) * block));
      },
      tbb::simple_partitioner());
}

/// Rows per block for a row-wise kernel over `cols` columns: about 64 KiB of floats per task.
inline std::size_t rows_per_block(std::size_t cols) {
  return std::max<std::size_t>(1, (std::size_t{16} * 1024) / std::max<std::size_t>(cols, 1));
}

/// out[j] += sum over rows r of row_value(r, j) for j < cols, with every block's partial sums (accumulated in
/// float, as PyTorch does) added into `out` in block order: deterministic for any thread count.
/// accumulate_block(first, end, partial) must add the rows [first, end) into partial[0..cols).
template <class F>
void reduce_columns(std::size_t rows, std::size_t cols, std::size_t block, float* out, F&& accumulate_block) {
  if (rows == 0 || cols == 0) return;
  block = std::max<std::size_t>(block, 1);
  const std::size_t blocks = (rows + block - 1) / block;
  // The partial sums live in a per-thread buffer kept between calls (no allocation per training step); a
  // nested call on the same thread, which TBB's work stealing could make, takes a buffer of its own.
  thread_local std::vector<float> kept;
  thread_local bool kept_in_use = false;
  std::vector<float> own;
  std::vector<float>& partials = kept_in_use ? own : kept;
  const bool using_kept = !kept_in_use;
  kept_in_use = true;
  struct release {
    bool active;
    ~release() {
      if (active) kept_in_use = false;
    }
  } releaser{using_kept};
  partials.assign(blocks * cols, 0.0f);
  for_row_blocks(rows, block, [&](std::size_t first, std::size_t end) {
    accumulate_block(first, end, partials.data() + (first / block) * cols);
  });
  for (std::size_t b = 0; b < blocks; ++b) {
    const float* p = partials.data() + b * cols;
    for (std::size_t j = 0; j < cols; ++j) out[j] += p[j];
  }
}

}  // namespace cputrain::kernels
