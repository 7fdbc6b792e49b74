// cputrain::nn::token_classification_head — the head of Hugging Face's *ForTokenClassification: dropout
// (classifier_dropout, else hidden_dropout_prob: DistilBERT's `dropout`) on every token's final hidden state, then `classifier`
// [num_labels, hidden]; the loss is cross_entropy over every token with -100 ignored.
#pragma once

#include "cputrain/nn/bert_config.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/fused.hpp"
#include "cputrain/nn/classification_loss.hpp"
#include "cputrain/nn/encoder.hpp"
#include "cputrain/nn/linear.hpp"
#include "cputrain/nn/parameters.hpp"
#include "cputrain/nn/token_classification_batch.hpp"

namespace cputrain::nn {

struct token_classification_head {
  using batch_type = token_classification_batch;
  static constexpr const char* model_name = "token classification model";
  /// Hugging Face\'s class is the family\'s prefix and this ("BertFor..."): config.json\'s `architectures`.
  static constexpr const char* hf_class_suffix = "ForTokenClassification";
  /// The config fields that size the head's workspace, for the memory bill ("vocab_size 30522 logits").
  [[nodiscard]] static std::string logit_fields(const bert_config& c) { return "num_labels " + std::to_string(c.num_labels) + " logits"; }
  /// Whether the head reads the word table too (a tied decoder): its gradient is then dense, not row-sparse.
  static constexpr bool ties_word_embeddings = false;
  /// One dropout stream per step: the dropout before the classifier.
  [[nodiscard]] static constexpr std::uint64_t dropout_sites() noexcept { return 1; }

  linear classifier;
  float dropout = 0.0f;

  template <parameter_registry R>
  static token_classification_head create(R& table, const bert_config& config) {
    return {linear::create(table, "classifier", static_cast<std::size_t>(config.hidden_size),
                           static_cast<std::size_t>(config.num_labels)),
            config.classifier_dropout_prob()};
  }

  /// T = batch * seq tokens, H hidden, L num_labels.
  template <class A>
  struct workspace {
    A* dropped = nullptr;      // [T, H] dropout(hidden), the operand of classifier
    float* scratch = nullptr;  // [T, H]
    float* logits = nullptr;   // [T, L]
    float* dlogits = nullptr;  // [T, L]

    template <class Carver>
    static workspace lay_out(Carver& c, const bert_config& config, std::uint64_t batch, std::uint64_t seq) {
      const std::uint64_t T = batch * seq, H = static_cast<std::uint64_t>(config.hidden_size);
      const auto L = static_cast<std::uint64_t>(config.num_labels);
      workspace w;
      w.dropped = c.kept({T, H});
      w.scratch = c.scratch({T, H});
      w.logits = c.scratch({T, L});
      w.dlogits = c.scratch({T, L});
      return w;
    }
  };

  [[nodiscard]] static std::size_t logits_per_sequence(const bert_config& config, std::size_t seq) noexcept {
    return seq * static_cast<std::size_t>(config.num_labels);
  }
  [[nodiscard]] std::size_t logit_count(const token_classification_batch& batch) const noexcept {
    return batch.tokens() * classifier.out;
  }

  /// Logits [T, L] from h [T, H]; the loss when the batch has labels, NaN otherwise.
  template <class A, class TW>
  float forward(const TW* gemm_weights, const float* params, const token_classification_batch& batch, const float* h,
                const forward_options& options, std::uint64_t first_stream, workspace<A>& w) const {
    const std::size_t T = batch.tokens(), H = classifier.in;
    kernels::dropout_forward(h, T * H, probability(options), options.seed, first_stream, w.scratch);
    kernels::keep(w.scratch, w.dropped, T * H);
    classifier.forward(gemm_weights, params, w.dropped, T, w.logits);
    if (!batch.has_labels()) return std::numeric_limits<float>::quiet_NaN();
    return cross_entropy(w.logits, batch.labels.data(), T, classifier.out, 1.0f, w.dlogits);
  }

  /// dh [T, H] = the loss's gradient (times loss_scale) at the encoder's output.
  template <class A, class TW>
  void backward(const TW* gemm_weights, const float* /*params*/, float* grads, const token_classification_batch& batch, float loss_scale,
                const forward_options& options, std::uint64_t first_stream, workspace<A>& w,
                float* dh) const {
    const std::size_t T = batch.tokens(), H = classifier.in;
    if (loss_scale != 1.0f) {
      for (std::size_t i = 0; i < T * classifier.out; ++i) w.dlogits[i] *= loss_scale;
    }
    classifier.backward(gemm_weights, grads, w.dropped, w.dlogits, T, dh);
    kernels::dropout_backward(dh, T * H, probability(options), options.seed, first_stream, dh);
  }

 private:
  [[nodiscard]] float probability(const forward_options& options) const { return options.training ? dropout : 0.0f; }
};

}  // namespace cputrain::nn
