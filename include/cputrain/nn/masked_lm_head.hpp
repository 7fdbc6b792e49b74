// cputrain::nn::masked_lm_head — the masked-LM head of Hugging Face's *ForMaskedLM: a dense layer [W, hidden],
// GELU, LayerNorm(W), then the decoder — the word table itself [vocab, W], tied as Hugging Face ties it, plus a
// bias [vocab]. W is the word table's width (ELECTRA's embedding_size, else hidden). Names: BERT
// `cls.predictions.transform.{dense,LayerNorm}` + `cls.predictions.bias`; RoBERTa `lm_head.{dense,layer_norm,bias}`;
// DistilBERT `vocab_transform`, `vocab_layer_norm`, `vocab_projector.bias`; ELECTRA
// `generator_predictions.{dense,LayerNorm}` + `generator_lm_head.bias`. The loss is cross-entropy over every
// token, -100 ignored; the word table's gradient is dense.
#pragma once

#include "cputrain/nn/linear.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/kernels/fused.hpp"
#include "cputrain/kernels/gelu.hpp"
#include "cputrain/kernels/layer_norm.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "cputrain/nn/classification_loss.hpp"
#include "cputrain/nn/encoder.hpp"
#include "cputrain/nn/parameters.hpp"
#include "cputrain/nn/token_classification_batch.hpp"

namespace cputrain::nn {

/// A masked-LM batch: the inputs with their masked tokens, and the original id of each masked token (-100
/// elsewhere), one label per token as a token classification batch has.
using masked_lm_batch = token_classification_batch;

struct masked_lm_head {
  using batch_type = masked_lm_batch;
  static constexpr const char* model_name = "masked language model";
  /// Hugging Face\'s class is the family\'s prefix and this ("BertFor..."): config.json\'s `architectures`.
  static constexpr const char* hf_class_suffix = "ForMaskedLM";
  /// The config fields that size the head's workspace, for the memory bill ("vocab_size 30522 logits").
  [[nodiscard]] static std::string logit_fields(const bert_config& c) { return "vocab_size " + std::to_string(c.vocab_size) + " logits"; }
  static constexpr bool ties_word_embeddings = true;
  [[nodiscard]] static constexpr std::uint64_t dropout_sites() noexcept { return 0; }

  linear transform;  // dense [W, hidden]
  linear decoder;    // weight: the word table (offset 0 of the flat buffers), bias: the head's own
  std::size_t ln_weight = 0, ln_bias = 0;
  float eps = 1e-12f;

  template <parameter_registry R>
  static masked_lm_head create(R& table, const bert_config& config) {
    const auto H = static_cast<std::size_t>(config.hidden_size);
    const auto W = static_cast<std::size_t>(config.embedding_width());
    const auto V = static_cast<std::size_t>(config.vocab_size);
    const names n = names_of(config);
    masked_lm_head head;
    head.eps = config.layer_norm_eps;
    head.transform = linear::create(table, n.dense, H, W);
    head.ln_weight = table.add(n.norm + ".weight", {static_cast<std::int64_t>(W)}, parameter_role::norm_weight);
    head.ln_bias = table.add(n.norm + ".bias", {static_cast<std::int64_t>(W)}, parameter_role::norm_bias);
    head.decoder.in = W;
    head.decoder.out = V;
    head.decoder.weight = 0;  // the encoder registers its word table first
    head.decoder.bias = table.add(n.bias, {static_cast<std::int64_t>(V)}, parameter_role::bias);
    return head;
  }

  /// The decoder's names in Hugging Face's checkpoints: copies of the word table (and of the bias) that
  /// transformers ties on loading, so a file that has them uses them.
  [[nodiscard]] static std::vector<std::string> tied_copies(const bert_config& c) {
    if (c.weights_prefix() == "roberta") return {"lm_head.decoder.weight", "lm_head.decoder.bias"};
    if (c.distilbert()) return {"vocab_projector.weight"};
    if (c.model_type == "electra") return {"generator_lm_head.weight"};
    return {"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"};
  }

  /// T tokens, H hidden, W the word table's width, V vocab.
  template <class A>
  struct workspace {
    A* hidden = nullptr;          // [T, H] the encoder's output, kept (the operand of the dense layer)
    float* dense_out = nullptr;   // [T, W] GELU's input, kept
    float* norm_in = nullptr;     // [T, W] GELU's output, LayerNorm's input, kept
    float* mean = nullptr;        // [T]
    float* rstd = nullptr;        // [T]
    A* transformed = nullptr;     // [T, W] LayerNorm's output, kept (the decoder's operand)
    float* norm_out = nullptr;    // [T, W] scratch
    float* logits = nullptr;      // [T, V]
    float* dlogits = nullptr;     // [T, V]

    template <class Carver>
    static workspace lay_out(Carver& c, const bert_config& config, std::uint64_t batch, std::uint64_t seq) {
      const std::uint64_t T = batch * seq, H = static_cast<std::uint64_t>(config.hidden_size);
      const auto W = static_cast<std::uint64_t>(config.embedding_width());
      const auto V = static_cast<std::uint64_t>(config.vocab_size);
      workspace w;
      w.hidden = c.kept({T, H});
      w.dense_out = c.kept_float({T, W});
      w.norm_in = c.kept_float({T, W});
      w.mean = c.kept_float({T});
      w.rstd = c.kept_float({T});
      w.transformed = c.kept({T, W});
      w.norm_out = c.scratch({T, W});
      w.logits = c.scratch({T, V});
      w.dlogits = c.scratch({T, V});
      return w;
    }
  };

  [[nodiscard]] static std::size_t logits_per_sequence(const bert_config& config, std::size_t seq) noexcept {
    return seq * static_cast<std::size_t>(config.vocab_size);
  }
  [[nodiscard]] std::size_t logit_count(const masked_lm_batch& batch) const noexcept {
    return batch.tokens() * decoder.out;
  }

  /// Logits [T, V] from h [T, H]; the loss when the batch has labels, NaN otherwise.
  template <class A, class TW>
  float forward(const TW* gemm_weights, const float* params, const masked_lm_batch& batch, const float* h,
                const forward_options& /*options*/, std::uint64_t /*first_stream*/, workspace<A>& w) const {
    const std::size_t T = batch.tokens(), W = decoder.in;
    kernels::keep(h, w.hidden, T * transform.in);
    transform.forward(gemm_weights, params, w.hidden, T, w.dense_out);
    kernels::gelu_forward(w.dense_out, T * W, w.norm_in);
    kernels::layer_norm_forward(w.norm_in, params + ln_weight, params + ln_bias, eps, T, W, w.norm_out, w.mean,
                                w.rstd);
    kernels::keep(w.norm_out, w.transformed, T * W);
    decoder.forward(gemm_weights, params, w.transformed, T, w.logits);
    if (!batch.has_labels()) return std::numeric_limits<float>::quiet_NaN();
    return cross_entropy(w.logits, batch.labels.data(), T, decoder.out, 1.0f, w.dlogits);
  }

  /// dh [T, H] = the loss's gradient (times loss_scale) at the encoder's output; the decoder's share of the word
  /// table's gradient goes into grads at offset 0.
  template <class A, class TW>
  void backward(const TW* gemm_weights, const float* params, float* grads, const masked_lm_batch& batch, float loss_scale,
                const forward_options& /*options*/, std::uint64_t /*first_stream*/, workspace<A>& w,
                float* dh) const {
    const std::size_t T = batch.tokens(), W = decoder.in;
    if (loss_scale != 1.0f) {
      for (std::size_t i = 0; i < T * decoder.out; ++i) w.dlogits[i] *= loss_scale;
    }
    float* d = w.norm_out;
    decoder.backward(gemm_weights, grads, w.transformed, w.dlogits, T, d);
    kernels::layer_norm_backward(d, w.norm_in, w.mean, w.rstd, params + ln_weight, T, W, d,
                                 grads + ln_weight, grads + ln_bias);
    kernels::gelu_backward(d, w.dense_out, T * W, d);
    transform.backward(gemm_weights, grads, w.hidden, d, T, dh);
  }

 private:
  struct names {
    std::string dense, norm, bias;
  };
  static names names_of(const bert_config& c) {
    if (c.weights_prefix() == "roberta") return {"lm_head.dense", "lm_head.layer_norm", "lm_head.bias"};
    if (c.distilbert()) return {"vocab_transform", "vocab_layer_norm", "vocab_projector.bias"};
    if (c.model_type == "electra")
      return {"generator_predictions.dense", "generator_predictions.LayerNorm", "generator_lm_head.bias"};
    return {"cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm", "cls.predictions.bias"};
  }
};

}  // namespace cputrain::nn
