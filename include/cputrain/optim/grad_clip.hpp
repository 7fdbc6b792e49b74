// cputrain::optim::clip_grad_norm — torch.nn.utils.clip_grad_norm_ (norm 2) over the flat gradient buffer, and
// global_norm() alone for max_grad_norm = 0. The norm is summed in double in a fixed order (the same for any
// thread count); a non-finite norm is returned and the gradients left untouched, for the caller to decide.
#pragma once

#include "cputrain/optim/param_ranges.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "cputrain/core/error.hpp"

namespace cputrain::optim {

/// Elements per partial sum: fixed, so the summation order never depends on the machine or the thread count.
inline constexpr std::size_t grad_norm_chunk_size = 16384;

namespace detail {

inline double sum_of_squares(const float* x, std::size_t n) {
  // Eight independent accumulators, combined in a fixed order: deterministic, yet not bound by the latency of one
  // chain of additions (and vectorisable without reassociation).
  double acc[8] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (std::size_t k = 0; k < 8; ++k) {
      const double v = x[i + k];
      acc[k] += v * v;  // exact product of two floats, so fusing it with the sum changes nothing
    }
  }
  double tail = 0.0;
  for (; i < n; ++i) {
    const double v = x[i];
    tail += v * v;
  }
  return (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))) + tail;
}

inline std::size_t chunk_count(std::size_t n) { return (n + grad_norm_chunk_size - 1) / grad_norm_chunk_size; }

}  // namespace detail

/// The L2 norm of the whole buffer (torch's total_norm with norm_type 2), as a float.
inline float global_norm(std::span<const float> grads) {
  const std::size_t chunks = detail::chunk_count(grads.size());
  std::vector<double> partial(chunks, 0.0);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunks), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t c = r.begin(); c != r.end(); ++c) {
      const std::size_t begin = c * grad_norm_chunk_size;
      partial[c] = detail::sum_of_squares(grads.data() + begin, std::min(grad_norm_chunk_size, grads.size() - begin));
    }
  });
  double total = 0.0;
  for (const double s : partial) total += s;
  return static_cast<float>(std::sqrt(total));
}

/// Scales `grads` so that their norm is at most `max_norm` (> 0; +inf never clips) and returns the norm before
/// clipping. A non-finite norm is returned with the gradients untouched (see the top of the file).
inline float clip_grad_norm(std::span<float> grads, float max_norm) {
  if (!(max_norm > 0)) {
    throw usage_error("cputrain::optim::clip_grad_norm: max_norm = " + detail::number_text(max_norm) +
                      " must be > 0 (for max_grad_norm 0, \"no clipping\", call global_norm alone)");
  }
  const float norm = global_norm(grads);
  if (!std::isfinite(norm)) return norm;
  // torch: clip_coef = max_norm / (total_norm + 1e-6), where float / tensor is tensor.reciprocal() * float.
  const float coefficient = max_norm * (1.0f / (norm + 1e-6f));
  if (!(coefficient < 1.0f)) return norm;  // torch clamps to 1 and multiplies, which changes nothing
  const std::size_t chunks = detail::chunk_count(grads.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunks), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t c = r.begin(); c != r.end(); ++c) {
      const std::size_t begin = c * grad_norm_chunk_size;
      const std::size_t end = std::min(grads.size(), begin + grad_norm_chunk_size);
      float* const g = grads.data();
      for (std::size_t i = begin; i < end; ++i) g[i] = g[i] * coefficient;
    }
  });
  return norm;
}

}  // namespace cputrain::optim
