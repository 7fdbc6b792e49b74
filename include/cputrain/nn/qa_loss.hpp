// The question-answering loss of Hugging Face's BertForQuestionAnswering:
//   loss = (CE(start_logits, start_positions) + CE(end_logits, end_positions)) / 2
// where positions are first clamped to [0, seq] and seq is the ignore_index: a position outside the sequence
// contributes nothing, and each cross-entropy is the mean over the sequences that do count. When no sequence
// counts, the mean is 0/0 = NaN, exactly as PyTorch gives (the trainer stops on a NaN loss).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace cputrain::nn {

namespace detail {
/// Mean cross-entropy of one logit column (stride 2 in [tokens, 2]) over the sequences, and its gradient
/// scaled by `grad_scale` written to the same column of dlogits.
inline double qa_cross_entropy(const float* logits, const std::int64_t* positions, std::size_t batch,
                               std::size_t seq, float grad_scale, float* dlogits) {
  std::size_t counted = 0;
  for (std::size_t b = 0; b < batch; ++b) {
    const std::int64_t target = std::clamp<std::int64_t>(positions[b], 0, static_cast<std::int64_t>(seq));
    if (target != static_cast<std::int64_t>(seq)) ++counted;
  }
  double total = 0;
  for (std::size_t b = 0; b < batch; ++b) {
    const float* row = logits + b * seq * 2;
    float* drow = dlogits + b * seq * 2;
    const std::int64_t target = std::clamp<std::int64_t>(positions[b], 0, static_cast<std::int64_t>(seq));
    if (target == static_cast<std::int64_t>(seq)) {
      for (std::size_t s = 0; s < seq; ++s) drow[s * 2] = 0.0f;
      continue;
    }
    double max = -std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < seq; ++s) max = std::max(max, static_cast<double>(row[s * 2]));
    double sum = 0;
    for (std::size_t s = 0; s < seq; ++s) sum += std::exp(static_cast<double>(row[s * 2]) - max);
    const double log_sum = max + std::log(sum);
    total += log_sum - row[static_cast<std::size_t>(target) * 2];
    const double scale = static_cast<double>(grad_scale) / static_cast<double>(counted);
    for (std::size_t s = 0; s < seq; ++s) {
      const double softmax = std::exp(static_cast<double>(row[s * 2]) - log_sum);
      const double onehot = s == static_cast<std::size_t>(target) ? 1.0 : 0.0;
      drow[s * 2] = static_cast<float>((softmax - onehot) * scale);
    }
  }
  return counted == 0 ? std::numeric_limits<double>::quiet_NaN() : total / static_cast<double>(counted);
}
}  // namespace detail

/// logits: [batch * seq, 2] (start, end); positions: [batch] each. Writes dlogits: [batch * seq, 2], the gradient
/// of the returned loss. Returns the loss.
inline float qa_loss(const float* logits, const std::int64_t* start_positions, const std::int64_t* end_positions,
                     std::size_t batch, std::size_t seq, float* dlogits) {
  const double start = detail::qa_cross_entropy(logits, start_positions, batch, seq, 0.5f, dlogits);
  const double end = detail::qa_cross_entropy(logits + 1, end_positions, batch, seq, 0.5f, dlogits + 1);
  return static_cast<float>((start + end) / 2.0);
}

}  // namespace cputrain::nn
