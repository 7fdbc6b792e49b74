// Hugging Face's initialisation for training from scratch (_init_weights of BERT and its relatives): Linear and
// Embedding weights normal(0, initializer_range), biases zero, LayerNorm weight 1 and bias 0, the padding row of
// an embedding table (the word table's pad_token_id row; RoBERTa's position table has one too) zero. The normal
// draws come from a counter-based generator and Box-Muller written here, so a seed gives the same weights with
// every compiler and standard library (std::normal_distribution does not).
#pragma once

#include "cputrain/kernels/dropout.hpp"

#include <cmath>
#include <cstdint>
#include <span>

#include "cputrain/nn/parameters.hpp"

namespace cputrain::nn {

/// The i-th standard normal draw of `stream` under `seed`.
[[nodiscard]] inline float standard_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  // Two uniforms in (0, 1]: 53-bit mantissas, offset so log() never sees 0.
  const double u1 = (static_cast<double>(kernels::counter_random(seed, stream, 2 * i) >> 11) + 1.0) * 0x1p-53;
  const double u2 = static_cast<double>(kernels::counter_random(seed, stream, 2 * i + 1) >> 11) * 0x1p-53;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586476925 * u2));
}

/// Fills `params` (laid out by `table`) as Hugging Face initialises a BERT model, each tensor by its role.
inline void hf_initialize(const parameter_table& table, std::span<float> params, float initializer_range,
                          std::uint64_t seed) {
  std::uint64_t stream = 0;
  for (const auto& p : table.entries()) {
    float* w = params.data() + p.offset;
    switch (p.role) {
      case parameter_role::norm_weight:
        for (std::size_t i = 0; i < p.size; ++i) w[i] = 1.0f;
        break;
      case parameter_role::bias:
      case parameter_role::norm_bias:
        for (std::size_t i = 0; i < p.size; ++i) w[i] = 0.0f;
        break;
      case parameter_role::weight:
      case parameter_role::embedding:
      case parameter_role::word_embedding:
        for (std::size_t i = 0; i < p.size; ++i) w[i] = initializer_range * standard_normal(seed, stream, i);
        if (p.padding_row >= 0 && p.shape.size() == 2 && p.padding_row < p.shape[0]) {
          const auto width = static_cast<std::size_t>(p.shape[1]);
          for (std::size_t j = 0; j < width; ++j) w[static_cast<std::size_t>(p.padding_row) * width + j] = 0.0f;
        }
        break;
    }
    ++stream;
  }
}

}  // namespace cputrain::nn
