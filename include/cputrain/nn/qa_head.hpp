// cputrain::nn::qa_head — the span question-answering head of Hugging Face's *ForQuestionAnswering: one linear
// layer `qa_outputs` [2, hidden] over every token's final hidden state (after dropout with qa_dropout in
// DistilBERT, the one family that has it) gives its start and end logits, and the loss is qa_loss.hpp's. Composed
// with the encoder by encoder_model.hpp.
#pragma once

#include "cputrain/nn/encoder.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/fused.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "cputrain/nn/linear.hpp"
#include "cputrain/nn/parameters.hpp"
#include "cputrain/nn/qa_batch.hpp"
#include "cputrain/nn/qa_loss.hpp"

namespace cputrain::nn {

struct qa_head {
  using batch_type = qa_batch;
  /// What messages call a model with this head.
  static constexpr const char* model_name = "bert_qa";
  /// Hugging Face\'s class is the family\'s prefix and this ("BertFor..."): config.json\'s `architectures`.
  static constexpr const char* hf_class_suffix = "ForQuestionAnswering";
  /// The config fields that size the head's workspace, for the memory bill ("vocab_size 30522 logits").
  [[nodiscard]] static std::string logit_fields(const bert_config&) { return "2 logits (start, end)"; }
  /// Whether the head reads the word table too (a tied decoder): its gradient is then dense, not row-sparse.
  static constexpr bool ties_word_embeddings = false;
  linear qa_outputs;
  float dropout = 0.0f;
  bool has_dropout = false;  // DistilBERT's qa_dropout

  template <parameter_registry R>
  static qa_head create(R& table, const bert_config& config) {
    return qa_head{linear::create(table, "qa_outputs", static_cast<std::size_t>(config.hidden_size), 2),
                   config.qa_dropout, config.distilbert()};
  }

  /// Dropout streams per step after the encoder's: DistilBERT's one; none for the others, whose streams (and so
  /// the masks of a resumed run) stay as they always were.
  [[nodiscard]] std::uint64_t dropout_sites() const noexcept { return has_dropout ? 1 : 0; }

  /// The head's part of a batch's workspace (workspace_layout.hpp). T = batch * seq tokens.
  template <class A>
  struct workspace {
    A* hidden = nullptr;        // [T, H] the encoder's output after dropout, kept (the operand of qa_outputs)
    float* dropped = nullptr;   // [T, H] scratch for the dropout
    float* logits = nullptr;    // [T, 2] start and end logit of every token
    float* dlogits = nullptr;   // [T, 2]

    template <class Carver>
    static workspace lay_out(Carver& c, const bert_config& config, std::uint64_t batch, std::uint64_t seq) {
      const std::uint64_t T = batch * seq;
      workspace w;
      w.hidden = c.kept({T, static_cast<std::uint64_t>(config.hidden_size)});
      if (config.distilbert()) w.dropped = c.scratch({T, static_cast<std::uint64_t>(config.hidden_size)});
      w.logits = c.scratch({T, 2});
      w.dlogits = c.scratch({T, 2});
      return w;
    }
  };

  /// Logits of a forward: [tokens, 2], start and end of each token side by side, seq * 2 per sequence.
  [[nodiscard]] static std::size_t logits_per_sequence(const bert_config& /*config*/, std::size_t seq) noexcept {
    return seq * 2;
  }
  [[nodiscard]] static std::size_t logit_count(const qa_batch& batch) noexcept { return batch.tokens() * 2; }

  /// Logits from h [T, H] (the encoder's output); the loss when the batch has labels (its gradient prepared in
  /// w.dlogits), NaN otherwise.
  template <class A, class TW>
  float forward(const TW* gemm_weights, const float* params, const qa_batch& batch, const float* h,
                const forward_options& options, std::uint64_t first_stream, workspace<A>& w) const {
    const std::size_t T = batch.tokens();
    if (has_dropout) {
      kernels::dropout_forward(h, T * qa_outputs.in, probability(options), options.seed, first_stream, w.dropped);
      h = w.dropped;
    }
    kernels::keep(h, w.hidden, T * qa_outputs.in);
    qa_outputs.forward(gemm_weights, params, w.hidden, T, w.logits);
    if (!batch.has_labels()) return std::numeric_limits<float>::quiet_NaN();
    return qa_loss(w.logits, batch.start_positions.data(), batch.end_positions.data(), batch.batch, batch.seq,
                   w.dlogits);
  }

  /// dh[T, H] = the loss's gradient (times loss_scale) at the encoder's output; qa_outputs' gradients into grads.
  template <class A, class TW>
  void backward(const TW* gemm_weights, const float* /*params*/, float* grads, const qa_batch& batch, float loss_scale,
                const forward_options& options, std::uint64_t first_stream, workspace<A>& w,
                float* dh) const {
    const std::size_t T = batch.tokens();
    if (loss_scale != 1.0f) {
      for (std::size_t i = 0; i < T * 2; ++i) w.dlogits[i] *= loss_scale;
    }
    qa_outputs.backward(gemm_weights, grads, w.hidden, w.dlogits, T, dh);
    if (has_dropout)
      kernels::dropout_backward(dh, T * qa_outputs.in, probability(options), options.seed, first_stream, dh);
  }

 private:
  [[nodiscard]] float probability(const forward_options& options) const { return options.training ? dropout : 0.0f; }
};

}  // namespace cputrain::nn
