// The losses of Hugging Face's classification heads, each returning the mean loss and writing its gradient
// (times grad_scale) for backward:
//   cross_entropy      rows of logits [n, classes] against class ids, -100 ignored (CrossEntropyLoss's default);
//                      the mean over the rows that count, NaN when none does (0/0, as PyTorch gives)
//   bce_with_logits    BCEWithLogitsLoss: elementwise against targets in [0, 1], the mean over all elements
//   mean_squared_error MSELoss: the mean of (x - t)^2
// and problem_type_of, Hugging Face's rule for which one a sequence head uses. Sums run in double.
#pragma once

#include "cputrain/kernels/row_blocks.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"

namespace cputrain::nn {

/// CrossEntropyLoss's ignore_index: a label that contributes nothing (padding, special tokens, unmasked tokens).
inline constexpr std::int64_t ignored_label = -100;

enum class problem_type { regression, single_label_classification, multi_label_classification };

/// The config's problem_type when it names one; otherwise Hugging Face's inference: one label is regression,
/// integer labels single-label classification, float labels multi-label classification.
[[nodiscard]] inline problem_type problem_type_of(const std::string& configured, int num_labels, bool integer_labels) {
  if (configured == "regression") return problem_type::regression;
  if (configured == "single_label_classification") return problem_type::single_label_classification;
  if (configured == "multi_label_classification") return problem_type::multi_label_classification;
  if (num_labels == 1) return problem_type::regression;
  return integer_labels ? problem_type::single_label_classification : problem_type::multi_label_classification;
}

/// logits, dlogits: [rows, classes]; labels: [rows], each in [0, classes) or ignored_label (anything else is a
/// usage_error naming the row). Rows run in parallel (a masked-LM head has tokens x vocabulary logits); their
/// losses are summed in row order, the same for any thread count.
inline float cross_entropy(const float* logits, const std::int64_t* labels, std::size_t rows, std::size_t classes,
                           float grad_scale, float* dlogits) {
  std::size_t counted = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    if (labels[r] == ignored_label) continue;
    if (labels[r] < 0 || static_cast<std::size_t>(labels[r]) >= classes)
      throw usage_error("labels[" + std::to_string(r) + "] = " + std::to_string(labels[r]) + " is not a class in [0, " +
                        std::to_string(classes) + ") nor -100 (ignored)");
    ++counted;
  }
  if (counted == 0) {
    std::fill(dlogits, dlogits + rows * classes, 0.0f);
    return std::numeric_limits<float>::quiet_NaN();
  }
  const double scale = static_cast<double>(grad_scale) / static_cast<double>(counted);
  // One buffer per calling thread, grown on demand and kept: a training step allocates nothing.
  thread_local std::vector<double> row_loss_buffer;
  row_loss_buffer.assign(rows, 0.0);
  double* row_loss = row_loss_buffer.data();  // the caller's buffer: a thread_local named in the tasks is their own
  kernels::for_row_blocks(rows, kernels::rows_per_block(classes), [&](std::size_t first, std::size_t end) {
    for (std::size_t r = first; r < end; ++r) {
      float* d = dlogits + r * classes;
      if (labels[r] == ignored_label) {
        std::fill(d, d + classes, 0.0f);
        continue;
      }
      const float* x = logits + r * classes;
      const double top = *std::max_element(x, x + classes);
      double sum = 0;
      for (std::size_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(x[c]) - top);
      const double log_sum = std::log(sum) + top;
      const auto label = static_cast<std::size_t>(labels[r]);
      row_loss[r] = log_sum - x[label];
      for (std::size_t c = 0; c < classes; ++c) {
        const double p = std::exp(static_cast<double>(x[c]) - log_sum);
        d[c] = static_cast<float>((p - (c == label ? 1.0 : 0.0)) * scale);
      }
    }
  });
  double total = 0;
  for (std::size_t r = 0; r < rows; ++r) total += row_loss[r];
  return static_cast<float>(total / static_cast<double>(counted));
}

/// logits, targets, dlogits: [n]. The stable form max(x, 0) - x t + log(1 + exp(-|x|)), as PyTorch computes it.
inline float bce_with_logits(const float* logits, const float* targets, std::size_t n, float grad_scale,
                             float* dlogits) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = logits[i], t = targets[i];
    total += std::max(x, 0.0) - x * t + std::log1p(std::exp(-std::abs(x)));
    const double sigmoid = 1.0 / (1.0 + std::exp(-x));
    dlogits[i] = static_cast<float>((sigmoid - t) * grad_scale / static_cast<double>(n));
  }
  return static_cast<float>(total / static_cast<double>(n));
}

/// logits, targets, dlogits: [n].
inline float mean_squared_error(const float* logits, const float* targets, std::size_t n, float grad_scale,
                                float* dlogits) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double diff = static_cast<double>(logits[i]) - targets[i];
    total += diff * diff;
    dlogits[i] = static_cast<float>(2.0 * diff * grad_scale / static_cast<double>(n));
  }
  return static_cast<float>(total / static_cast<double>(n));
}

}  // namespace cputrain::nn
