// The attention softmax, forward and backward, as Hugging Face's BERT self-attention computes it:
//   p = softmax(scores * scale + mask[key])   over the keys of each query row
// with `scale` = 1/sqrt(head_dim) applied before the additive key mask (0 for real tokens, the most negative
// float for padding, as HF's extended attention mask), in float.
//   backward: dscores = scale * p * (dp - sum_k p_k dp_k)
// The probabilities kept for backward may be float or bf16.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <Eigen/Core>

#include "cputrain/core/bf16.hpp"
#include "cputrain/kernels/row_blocks.hpp"

namespace cputrain::kernels {

/// The value HF adds to the scores of masked keys: torch.finfo(float32).min.
inline constexpr float attention_mask_min = std::numeric_limits<float>::lowest();

/// One query row on the calling thread: row[keys] = softmax(row * scale + mask[keys]), in place.
inline void attention_softmax_row_forward(float* row, const float* mask, float scale, std::size_t keys) {
  Eigen::Map<Eigen::ArrayXf> r(row, static_cast<Eigen::Index>(keys));
  r = r * scale + Eigen::Map<const Eigen::ArrayXf>(mask, static_cast<Eigen::Index>(keys));
  const float max = r.maxCoeff();
  r = (r - max).exp();
  // Eigen's AVX2 exp clamps its argument at about -88.7, so a masked key would get e^-88.7 (a denormal, not 0 as
  // in PyTorch and Eigen's AVX-512 exp) and a padded key a gradient: results under the smallest normal float are
  // 0. A loop the compiler vectorises; Eigen 3.4's select() is not vectorised and made the row 4x slower.
  for (std::size_t k = 0; k < keys; ++k) row[k] = row[k] < std::numeric_limits<float>::min() ? 0.0f : row[k];
  r *= 1.0f / r.sum();
}

/// One row on the calling thread: d[keys] (d probs) becomes d scores, given the row's probabilities p.
template <class TP>
void attention_softmax_row_backward(float* d, const TP* p, float scale, std::size_t keys) {
  float dot = 0;
  for (std::size_t k = 0; k < keys; ++k) dot += static_cast<float>(p[k]) * d[k];
  for (std::size_t k = 0; k < keys; ++k) d[k] = scale * static_cast<float>(p[k]) * (d[k] - dot);
}

/// scores: [groups, queries, keys] (in place: scores become probabilities); key_mask: [groups / heads, keys],
/// additive (0 or attention_mask_min), shared by the `heads` consecutive groups of one sequence.
inline void attention_softmax_forward(float* scores, const float* key_mask, float scale, std::size_t groups,
                                      std::size_t heads, std::size_t queries, std::size_t keys) {
  for_row_blocks(groups * queries, rows_per_block(keys), [&](std::size_t first, std::size_t end) {
    for (std::size_t r = first; r < end; ++r) {
      attention_softmax_row_forward(scores + r * keys, key_mask + ((r / queries) / heads) * keys, scale, keys);
    }
  });
}

/// dprobs: [groups, queries, keys], becomes dscores in place; probs: the forward output as kept.
template <class TP>
void attention_softmax_backward(float* dprobs, const TP* probs, float scale, std::size_t groups,
                                std::size_t queries, std::size_t keys) {
  for_row_blocks(groups * queries, rows_per_block(keys), [&](std::size_t first, std::size_t end) {
    for (std::size_t r = first; r < end; ++r) {
      attention_softmax_row_backward(dprobs + r * keys, probs + r * keys, scale, keys);
    }
  });
}

}  // namespace cputrain::kernels
