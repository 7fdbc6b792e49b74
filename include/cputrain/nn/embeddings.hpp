// cputrain::nn::embeddings — BERT's input layer (BertEmbeddings): word + absolute position + token type
// embeddings, summed, then LayerNorm (and dropout, applied by the caller). Positions are 0..seq-1 in every
// sequence. In backward the word embedding row of pad_token_id gets no gradient, as torch's
// nn.Embedding(padding_idx=pad_token_id) gives none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cputrain/kernels/layer_norm.hpp"
#include "cputrain/kernels/row_blocks.hpp"
#include "cputrain/nn/parameters.hpp"

namespace cputrain::nn {

struct embeddings {
  std::size_t hidden = 0, vocab = 0, positions = 0, types = 0;
  std::int64_t pad_token_id = 0;
  float eps = 1e-12f;
  std::size_t word = 0, position = 0, token_type = 0, ln_weight = 0, ln_bias = 0;  // offsets

  template <parameter_registry R>
  static embeddings create(R& table, std::size_t vocab, std::size_t hidden, std::size_t positions,
                           std::size_t types, std::int64_t pad_token_id, float eps) {
    embeddings e;
    e.hidden = hidden;
    e.vocab = vocab;
    e.positions = positions;
    e.types = types;
    e.pad_token_id = pad_token_id;
    e.eps = eps;
    const auto h = static_cast<std::int64_t>(hidden);
    e.word = table.add("bert.embeddings.word_embeddings.weight", {static_cast<std::int64_t>(vocab), h},
                       parameter_role::word_embedding);
    e.position = table.add("bert.embeddings.position_embeddings.weight", {static_cast<std::int64_t>(positions), h},
                           parameter_role::embedding);
    e.token_type = table.add("bert.embeddings.token_type_embeddings.weight", {static_cast<std::int64_t>(types), h},
                             parameter_role::embedding);
    e.ln_weight = table.add("bert.embeddings.LayerNorm.weight", {h}, parameter_role::norm_weight);
    e.ln_bias = table.add("bert.embeddings.LayerNorm.bias", {h}, parameter_role::norm_bias);
    return e;
  }

  /// sum[tokens, hidden] = word[ids] + position[t % seq] + token_type[types]; y = LayerNorm(sum).
  /// mean, rstd: [tokens], kept for backward with `sum`. One pass: each row is normalised right after it is summed.
  void forward(const float* params, const std::int32_t* ids, const std::int32_t* type_ids, std::size_t batch,
               std::size_t seq, float* sum, float* y, float* mean, float* rstd) const {
    const std::size_t tokens = batch * seq;
    kernels::for_row_blocks(tokens, kernels::rows_per_block(hidden), [&](std::size_t first, std::size_t end) {
      for (std::size_t t = first; t < end; ++t) {
        const float* w = params + word + static_cast<std::size_t>(ids[t]) * hidden;
        const float* p = params + position + (t % seq) * hidden;
        const float* ty = params + token_type + static_cast<std::size_t>(type_ids[t]) * hidden;
        float* out = sum + t * hidden;
        // HF adds (word + token_type) first, then position: the same order, the same rounding.
        for (std::size_t j = 0; j < hidden; ++j) out[j] = (w[j] + ty[j]) + p[j];
        kernels::layer_norm_forward_row(out, params + ln_weight, params + ln_bias, eps, hidden, y + t * hidden,
                                        mean[t], rstd[t]);
      }
    });
  }

  /// dy: [tokens, hidden], the gradient of the LayerNorm output (after dropout's backward); it is overwritten.
  /// sum: the kept LayerNorm input. Gradients accumulate into `grads`.
  template <class TS>
  void backward(const float* params, float* grads, const std::int32_t* ids, const std::int32_t* type_ids,
                std::size_t batch, std::size_t seq, const TS* sum, const float* mean, const float* rstd,
                float* dy) const {
    const std::size_t tokens = batch * seq;
    kernels::layer_norm_backward(dy, sum, mean, rstd, params + ln_weight, tokens, hidden, dy, grads + ln_weight,
                                 grads + ln_bias);
    // Scatter-add into the tables. Tasks split the hidden columns, never the tokens: two tokens with the same id
    // then never race, and each element sums its tokens in token order, the same for any thread count.
    const std::size_t column_block = 64;
    kernels::for_row_blocks(hidden, column_block, [&](std::size_t c0, std::size_t c1) {
      for (std::size_t t = 0; t < tokens; ++t) {
        const float* d = dy + t * hidden;
        if (ids[t] != pad_token_id) {
          float* gw = grads + word + static_cast<std::size_t>(ids[t]) * hidden;
          for (std::size_t j = c0; j < c1; ++j) gw[j] += d[j];
        }
        float* gp = grads + position + (t % seq) * hidden;
        float* gt = grads + token_type + static_cast<std::size_t>(type_ids[t]) * hidden;
        for (std::size_t j = c0; j < c1; ++j) {
          gp[j] += d[j];
          gt[j] += d[j];
        }
      }
    });
  }
};

}  // namespace cputrain::nn
