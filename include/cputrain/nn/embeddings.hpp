// cputrain::nn::embeddings — the input layer of BERT, RoBERTa and DistilBERT (BertEmbeddings, RobertaEmbeddings,
// DistilBERT's Embeddings): word + absolute position (+ token type, but DistilBERT's) embeddings, summed, then
// LayerNorm (and dropout, applied by the caller). BERT's positions
// are 0..seq-1 in every sequence; RoBERTa's count real tokens after pad_token_id (padding sits at pad_token_id:
// create_position_ids_from_input_ids). In backward the padding rows get no gradient — the word table's
// pad_token_id row, and RoBERTa's position row pad_token_id — as torch's nn.Embedding(padding_idx) gives none.
#pragma once

#include "cputrain/kernels/layer_norm.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

#include "cputrain/kernels/row_blocks.hpp"
#include "cputrain/nn/parameters.hpp"

namespace cputrain::nn {

/// Where each token's position row comes from.
enum class position_rule {
  /// BERT: the token's index in its sequence.
  index,
  /// RoBERTa: pad_token_id + the count of real (non-pad) tokens up to and including it; pad_token_id for padding.
  after_padding,
};

struct embeddings {
  std::size_t hidden = 0, vocab = 0, positions = 0, types = 0;
  std::int64_t pad_token_id = 0;
  float eps = 1e-12f;
  position_rule rule = position_rule::index;
  bool token_types = true;  // DistilBERT has no token type table
  std::size_t word = 0, position = 0, token_type = 0, ln_weight = 0, ln_bias = 0;  // offsets

  /// Registers `<prefix>.embeddings.*` under Hugging Face's names.
  template <parameter_registry R>
  static embeddings create(R& table, const std::string& prefix, std::size_t vocab, std::size_t hidden,
                           std::size_t positions, std::size_t types, std::int64_t pad_token_id, float eps,
                           position_rule rule = position_rule::index, bool token_types = true) {
    embeddings e;
    e.token_types = token_types;
    e.hidden = hidden;
    e.vocab = vocab;
    e.positions = positions;
    e.types = types;
    e.pad_token_id = pad_token_id;
    e.eps = eps;
    e.rule = rule;
    const auto h = static_cast<std::int64_t>(hidden);
    const std::string p = prefix + ".embeddings.";
    e.word = table.add(p + "word_embeddings.weight", {static_cast<std::int64_t>(vocab), h},
                       parameter_role::word_embedding, pad_token_id);
    e.position = table.add(p + "position_embeddings.weight", {static_cast<std::int64_t>(positions), h},
                           parameter_role::embedding, rule == position_rule::after_padding ? pad_token_id : -1);
    if (token_types)
      e.token_type = table.add(p + "token_type_embeddings.weight", {static_cast<std::int64_t>(types), h},
                               parameter_role::embedding);
    e.ln_weight = table.add(p + "LayerNorm.weight", {h}, parameter_role::norm_weight);
    e.ln_bias = table.add(p + "LayerNorm.bias", {h}, parameter_role::norm_bias);
    return e;
  }

  /// The position row of token t, walking forward through its sequence: `real` counts the real tokens of the
  /// sequence so far (reset at each sequence's first token).
  [[nodiscard]] std::size_t position_at(const std::int32_t* ids, std::size_t t, std::size_t seq,
                                        std::size_t& real) const {
    if (t % seq == 0) real = 0;
    if (rule == position_rule::index) return t % seq;
    if (ids[t] == pad_token_id) return static_cast<std::size_t>(pad_token_id);
    return static_cast<std::size_t>(pad_token_id) + ++real;
  }

  /// sum[tokens, hidden] = word[ids] + position[position_at(t)] + token_type[types]; y = LayerNorm(sum).
  /// mean, rstd: [tokens], kept for backward with `sum`. One pass: each row is normalised right after it is summed.
  void forward(const float* params, const std::int32_t* ids, const std::int32_t* type_ids, std::size_t batch,
               std::size_t seq, float* sum, float* y, float* mean, float* rstd) const {
    const std::size_t tokens = batch * seq;
    kernels::for_row_blocks(tokens, kernels::rows_per_block(hidden), [&](std::size_t first, std::size_t end) {
      std::size_t real = real_count_before(ids, first, seq);  // a block may start inside a sequence
      for (std::size_t t = first; t < end; ++t) {
        const std::size_t pos = position_at(ids, t, seq, real);
        const float* w = params + word + static_cast<std::size_t>(ids[t]) * hidden;
        const float* p = params + position + pos * hidden;
        float* out = sum + t * hidden;
        if (token_types) {
          const float* ty = params + token_type + static_cast<std::size_t>(type_ids[t]) * hidden;
          // HF adds (word + token_type) first, then position: the same order, the same rounding.
          for (std::size_t j = 0; j < hidden; ++j) out[j] = (w[j] + ty[j]) + p[j];
        } else {
          for (std::size_t j = 0; j < hidden; ++j) out[j] = w[j] + p[j];
        }
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
      std::size_t real = 0;
      for (std::size_t t = 0; t < tokens; ++t) {
        const std::size_t pos = position_at(ids, t, seq, real);
        const float* d = dy + t * hidden;
        if (ids[t] != pad_token_id) {
          float* gw = grads + word + static_cast<std::size_t>(ids[t]) * hidden;
          for (std::size_t j = c0; j < c1; ++j) gw[j] += d[j];
        }
        if (rule == position_rule::index || ids[t] != pad_token_id) {  // RoBERTa's padding row learns nothing
          float* gp = grads + position + pos * hidden;
          for (std::size_t j = c0; j < c1; ++j) gp[j] += d[j];
        }
        if (token_types) {
          float* gt = grads + token_type + static_cast<std::size_t>(type_ids[t]) * hidden;
          for (std::size_t j = c0; j < c1; ++j) gt[j] += d[j];
        }
      }
    });
  }

 private:
  // Real tokens of t's sequence before t (RoBERTa's rule only counts them).
  [[nodiscard]] std::size_t real_count_before(const std::int32_t* ids, std::size_t t, std::size_t seq) const {
    std::size_t n = 0;
    if (rule == position_rule::index) return n;
    for (std::size_t u = t - t % seq; u < t; ++u) n += ids[u] != pad_token_id;
    return n;
  }
};

}  // namespace cputrain::nn
