// cputrain::nn::sequence_classification_head — the head of Hugging Face's *ForSequenceClassification, each
// family's own, on each sequence's first token:
//   BERT     `bert.pooler.dense` [hidden, hidden], tanh, dropout, `classifier` [num_labels, hidden]
//   RoBERTa  dropout, `classifier.dense`, tanh, dropout, `classifier.out_proj` (RobertaClassificationHead)
//   ELECTRA  as RoBERTa's with GELU for tanh (ElectraClassificationHead)
//   DistilBERT `pre_classifier`, ReLU, dropout (seq_classif_dropout), `classifier`
// (dropout: classifier_dropout, else hidden_dropout_prob). The loss follows the problem type as Hugging Face infers
// it (classification_loss.hpp): cross-entropy, BCE with logits for multi-label targets, MSE for regression.
#pragma once

#include "cputrain/kernels/fused.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "cputrain/core/error.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/gelu.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "cputrain/nn/classification_loss.hpp"
#include "cputrain/nn/encoder.hpp"
#include "cputrain/nn/linear.hpp"
#include "cputrain/nn/parameters.hpp"
#include "cputrain/nn/sequence_classification_batch.hpp"

namespace cputrain::nn {

struct sequence_classification_head {
  using batch_type = sequence_classification_batch;
  static constexpr const char* model_name = "sequence classification model";
  /// Hugging Face\'s class is the family\'s prefix and this ("BertFor..."): config.json\'s `architectures`.
  static constexpr const char* hf_class_suffix = "ForSequenceClassification";
  /// The config fields that size the head's workspace, for the memory bill ("vocab_size 30522 logits").
  [[nodiscard]] static std::string logit_fields(const bert_config& c) { return "num_labels " + std::to_string(c.num_labels) + " logits per sequence"; }
  /// Whether the head reads the word table too (a tied decoder): its gradient is then dense, not row-sparse.
  static constexpr bool ties_word_embeddings = false;
  /// Two dropout streams per step: before the dense layer (RoBERTa's only) and before the classifier.
  [[nodiscard]] static constexpr std::uint64_t dropout_sites() noexcept { return 2; }

  linear pooler, classifier;  // BERT's names; RoBERTa's classifier.dense and classifier.out_proj
  float dropout = 0.0f;
  bool dropout_first = false;  // RoBERTa drops out the first token before its dense layer
  enum class activation { tanh, relu, gelu };
  activation act = activation::tanh;  // after the dense layer: DistilBERT's ReLU, ELECTRA's GELU, the others' tanh
  std::string configured_problem;

  template <parameter_registry R>
  static sequence_classification_head create(R& table, const bert_config& config) {
    const auto H = static_cast<std::size_t>(config.hidden_size);
    const auto L = static_cast<std::size_t>(config.num_labels);
    sequence_classification_head head;
    head.dropout_first = config.weights_prefix() == "roberta" || config.model_type == "electra";
    head.act = config.distilbert()              ? activation::relu
               : config.model_type == "electra" ? activation::gelu
                                                : activation::tanh;
    if (head.dropout_first) {
      head.pooler = linear::create(table, "classifier.dense", H, H);
      head.classifier = linear::create(table, "classifier.out_proj", H, L);
    } else if (head.act == activation::relu) {
      head.pooler = linear::create(table, "pre_classifier", H, H);
      head.classifier = linear::create(table, "classifier", H, L);
    } else {
      head.pooler = linear::create(table, "bert.pooler.dense", H, H);
      head.classifier = linear::create(table, "classifier", H, L);
    }
    head.dropout = config.distilbert() ? config.seq_classif_dropout : config.classifier_dropout_prob();
    head.configured_problem = config.problem_type;
    return head;
  }

  /// B = batch sequences, H hidden, L num_labels.
  template <class A>
  struct workspace {
    A* first = nullptr;         // [B, H] each sequence's first token, the operand of the pooler
    float* pooled = nullptr;    // [B, H] tanh or ReLU of the dense layer, kept for its gradient; GELU's input
    float* activated = nullptr;  // [B, H] GELU's output (ELECTRA)
    A* dropped = nullptr;       // [B, H] dropout(pooled), the operand of the classifier
    float* scratch = nullptr;   // [B, H]
    float* scratch2 = nullptr;  // [B, H]
    float* logits = nullptr;    // [B, L]
    float* dlogits = nullptr;   // [B, L]

    template <class Carver>
    static workspace lay_out(Carver& c, const bert_config& config, std::uint64_t batch, std::uint64_t /*seq*/) {
      const auto H = static_cast<std::uint64_t>(config.hidden_size), L = static_cast<std::uint64_t>(config.num_labels);
      workspace w;
      w.first = c.kept({batch, H});
      w.pooled = c.kept_float({batch, H});
      w.activated = c.scratch({batch, H});
      w.dropped = c.kept({batch, H});
      w.scratch = c.scratch({batch, H});
      w.scratch2 = c.scratch({batch, H});
      w.logits = c.scratch({batch, L});
      w.dlogits = c.scratch({batch, L});
      return w;
    }
  };

  [[nodiscard]] static std::size_t logits_per_sequence(const bert_config& config, std::size_t /*seq*/) noexcept {
    return static_cast<std::size_t>(config.num_labels);
  }
  [[nodiscard]] std::size_t logit_count(const sequence_classification_batch& batch) const noexcept {
    return batch.batch * classifier.out;
  }

  /// Logits [B, L] from h [T, H]; the loss when the batch has labels, NaN otherwise.
  template <class A, class TW>
  float forward(const TW* gemm_weights, const float* params, const sequence_classification_batch& batch,
                const float* h, const forward_options& options, std::uint64_t first_stream, workspace<A>& w) const {
    const std::size_t B = batch.batch, H = pooler.in;
    for (std::size_t b = 0; b < B; ++b) std::copy_n(h + b * batch.seq * H, H, w.scratch + b * H);
    if (dropout_first)
      kernels::dropout_forward(w.scratch, B * H, probability(options), options.seed, first_stream, w.scratch);
    kernels::keep(w.scratch, w.first, B * H);
    pooler.forward(gemm_weights, params, w.first, B, w.pooled);
    const float* activated = w.pooled;
    if (act == activation::gelu) {
      kernels::gelu_forward(w.pooled, B * H, w.activated);
      activated = w.activated;
    } else {
      for (std::size_t i = 0; i < B * H; ++i)
        w.pooled[i] = act == activation::relu ? std::max(w.pooled[i], 0.0f) : std::tanh(w.pooled[i]);
    }
    kernels::dropout_forward(activated, B * H, probability(options), options.seed, first_stream + 1, w.scratch);
    kernels::keep(w.scratch, w.dropped, B * H);
    classifier.forward(gemm_weights, params, w.dropped, B, w.logits);
    if (!batch.has_labels()) return std::numeric_limits<float>::quiet_NaN();
    return loss(batch, w.logits, w.dlogits);
  }

  /// dh [T, H] = the loss's gradient (times loss_scale) at the encoder's output: nonzero on first tokens only.
  template <class A, class TW>
  void backward(const TW* gemm_weights, const float* /*params*/, float* grads, const sequence_classification_batch& batch, float loss_scale,
                const forward_options& options, std::uint64_t first_stream, workspace<A>& w,
                float* dh) const {
    const std::size_t B = batch.batch, H = pooler.in;
    if (loss_scale != 1.0f) {
      for (std::size_t i = 0; i < B * classifier.out; ++i) w.dlogits[i] *= loss_scale;
    }
    float* d_pooled = w.scratch;
    classifier.backward(gemm_weights, grads, w.dropped, w.dlogits, B, d_pooled);
    kernels::dropout_backward(d_pooled, B * H, probability(options), options.seed, first_stream + 1, d_pooled);
    if (act == activation::gelu) {
      kernels::gelu_backward(d_pooled, w.pooled, B * H, d_pooled);
    } else {
      for (std::size_t i = 0; i < B * H; ++i)
        d_pooled[i] *= act == activation::relu ? (w.pooled[i] > 0.0f ? 1.0f : 0.0f) : 1.0f - w.pooled[i] * w.pooled[i];
    }
    float* d_first = w.scratch2;
    pooler.backward(gemm_weights, grads, w.first, d_pooled, B, d_first);
    if (dropout_first)
      kernels::dropout_backward(d_first, B * H, probability(options), options.seed, first_stream, d_first);
    std::fill(dh, dh + batch.tokens() * H, 0.0f);
    for (std::size_t b = 0; b < B; ++b) std::copy_n(d_first + b * H, H, dh + b * batch.seq * H);
  }

 private:
  [[nodiscard]] float probability(const forward_options& options) const { return options.training ? dropout : 0.0f; }

  // The loss of the problem type the config names or the labels imply, its gradient into dlogits.
  float loss(const sequence_classification_batch& batch, const float* logits, float* dlogits) const {
    const std::size_t B = batch.batch, L = classifier.out;
    const int labels = static_cast<int>(L);
    switch (problem_type_of(configured_problem, labels, batch.integer_labels())) {
      case problem_type::single_label_classification:
        if (!batch.integer_labels())
          throw usage_error("single-label classification needs class ids as labels, not float values");
        return cross_entropy(logits, batch.labels.data(), B, L, 1.0f, dlogits);
      case problem_type::multi_label_classification:
        require_values(batch, "multi-label classification");
        return bce_with_logits(logits, batch.label_values.data(), B * L, 1.0f, dlogits);
      case problem_type::regression:
        require_values(batch, "regression");
        return mean_squared_error(logits, batch.label_values.data(), B * L, 1.0f, dlogits);
    }
    return std::numeric_limits<float>::quiet_NaN();
  }
  void require_values(const sequence_classification_batch& batch, const char* problem) const {
    if (batch.label_values.size() != batch.batch * classifier.out)
      throw usage_error(std::string(problem) + " needs num_labels = " + std::to_string(classifier.out) +
                        " float label values per sequence; the batch has " + std::to_string(batch.label_values.size()) +
                        " for " + std::to_string(batch.batch) + " sequences");
  }
};

}  // namespace cputrain::nn
