// cputrain::nn::model_memory — the sizes an encoder model (encoder_model.hpp) of a config allocates, from the config
// alone: the parameter count (a config whose products overflow 64 bits is refused naming its fields), the model's
// bill (weights, gradients, the bf16 copy) and the workspace a batch x seq forward uses. Both are counted from the
// same descriptions the model builds its buffers from (the encoder's and the head's create() and lay_out()), each
// layer described once and multiplied, so the bill cannot drift from the model and a hostile config costs nothing
// to refuse.
#pragma once

#include "cputrain/machine/memory_bill.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "cputrain/nn/encoder.hpp"
#include "cputrain/nn/parameters.hpp"
#include "cputrain/nn/qa_head.hpp"
#include "cputrain/nn/workspace_layout.hpp"

namespace cputrain::nn {

namespace detail {

CPUTRAIN_DECL std::string layer_fields(const bert_config& c);

}  // namespace detail

/// Floats of an encoder_model<Head>(config)'s parameter buffer, padding included (= its params().size()).
/// usage_error naming the fields when the count does not fit in 64 bits.
template <class Head = qa_head>
[[nodiscard]] std::uint64_t parameter_count(const bert_config& c) {
  parameter_tally tally("bert_config: " + detail::layer_fields(c) + " with vocab_size " +
                        std::to_string(c.vocab_size) + ": the parameter count");
  encoder::tally(tally, c);
  Head::create(tally, c);
  return tally.total();
}

/// What the biggest part of the parameters comes from, in the config's own field names: the layers, or one of
/// the embedding tables (a position table made huge by max_position_embeddings is named as such).
[[nodiscard]] CPUTRAIN_DECL std::string parameter_cause(const bert_config& c);

/// The model's own buffers: weights, gradients, and (when the matrix products take `gemm_input_bytes` < 4) the
/// rounded copy they read.
template <class Head = qa_head>
[[nodiscard]] memory_bill model_memory(const bert_config& config, std::size_t gemm_input_bytes) {
  const double params = static_cast<double>(parameter_count<Head>(config));
  const std::string cause = parameter_cause(config);
  memory_bill bill;
  bill.add("parameters", params * 4, cause);
  bill.add("gradients", params * 4, cause);
  if (gemm_input_bytes < 4)
    bill.add("bf16 copy of the weights", params * static_cast<double>(gemm_input_bytes), cause);
  return bill;
}

/// The sequences a forward pass takes at once, and what the caller calls them in messages.
struct activation_shape {
  std::size_t batch = 1;
  std::size_t seq = 1;
  std::string batch_name = "batch";
  std::string seq_name = "seq";
};

namespace detail {
/// "batch 4 x seq 128 tokens", in the caller's names for the two settings.
CPUTRAIN_DECL std::string tokens_text(const activation_shape& shape);
}  // namespace detail

/// The elements encoder_model<Head>'s workspace takes for `shape` (every layer's activations, or `laid_layers`
/// layers' for a forward that keeps none for backward), counted from the one description the model carves its
/// buffers with. usage_error naming the settings when they do not fit in 64 bits.
template <class Head = qa_head>
[[nodiscard]] workspace_size workspace_elements(const bert_config& c, const activation_shape& shape,
                                                std::optional<std::size_t> laid_layers = std::nullopt) {
  const std::string what = detail::tokens_text(shape) + " x num_hidden_layers " +
                           std::to_string(c.num_hidden_layers) + " (with num_attention_heads " +
                           std::to_string(c.num_attention_heads) + " x seq^2 attention probabilities): the activations";
  workspace_tally<float> tokens(what);
  (void)tokens.scratch({shape.batch, shape.seq});  // batch x seq checked once: the descriptions multiply by it
  workspace_tally<float> all(what);
  (void)encoder_workspace<float>::lay_out(all, c, shape.batch, shape.seq, 0);
  workspace_tally<float> layer(what);
  (void)layer_activations<float>::lay_out(layer, shape.batch, shape.seq, static_cast<std::uint64_t>(c.hidden_size),
                                          static_cast<std::uint64_t>(c.intermediate_size),
                                          static_cast<std::uint64_t>(c.num_attention_heads));
  all.add_copies(layer, laid_layers ? static_cast<std::uint64_t>(*laid_layers) : static_cast<std::uint64_t>(c.num_hidden_layers));
  (void)Head::template workspace<float>::lay_out(all, c, shape.batch, shape.seq);
  return all.size();
}

/// The workspace encoder_model<Head>::forward allocates for `shape`: what it keeps for backward (`activation_bytes`
/// per element of the activation type, plus float row statistics), the float scratch the layers share, and the
/// head's own scratch (its logits and their gradient: [tokens, vocab_size] for a masked-LM head), each with the
/// settings and config fields that size it.
template <class Head = qa_head>
[[nodiscard]] memory_bill activation_memory(const bert_config& c, std::size_t activation_bytes,
                                            const activation_shape& shape,
                                            std::optional<std::size_t> laid_layers = std::nullopt) {
  const workspace_size size = workspace_elements<Head>(c, shape, laid_layers);
  workspace_tally<float> head(detail::tokens_text(shape) + ": the head's workspace");
  (void)Head::template workspace<float>::lay_out(head, c, shape.batch, shape.seq);
  const std::string cause = detail::tokens_text(shape) + " x num_hidden_layers " + std::to_string(c.num_hidden_layers);
  memory_bill bill;
  bill.add("activations kept for backward",
           static_cast<double>(size.kept) * static_cast<double>(activation_bytes) +
               4.0 * static_cast<double>(size.kept_floats),
           cause);
  bill.add("layer workspace", 4.0 * static_cast<double>(size.scratch - head.size().scratch), detail::tokens_text(shape));
  bill.add("head workspace", 4.0 * static_cast<double>(head.size().scratch),
           detail::tokens_text(shape) + " x " + Head::logit_fields(c));
  return bill;
}

#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

CPUTRAIN_DECL std::string layer_fields(const bert_config& c) {
  return "num_hidden_layers " + std::to_string(c.num_hidden_layers) + " x (hidden_size " +
         std::to_string(c.hidden_size) + ", intermediate_size " + std::to_string(c.intermediate_size) + ")";
}

CPUTRAIN_DECL std::string tokens_text(const activation_shape& shape) {
  return shape.batch_name + " " + std::to_string(shape.batch) + " x " + shape.seq_name + " " +
         std::to_string(shape.seq) + " tokens";
}

}  // namespace detail

CPUTRAIN_DECL std::string parameter_cause(const bert_config& c) {
  const double H = c.hidden_size, I = c.intermediate_size;
  std::string cause = detail::layer_fields(c);
  double biggest = static_cast<double>(c.num_hidden_layers) * (4 * H * H + 2 * H * I);
  const std::pair<const char*, int> tables[] = {
      {"vocab_size", c.vocab_size}, {"max_position_embeddings", c.max_position_embeddings},
      {"type_vocab_size", c.type_vocab_size}};
  for (const auto& [field, rows] : tables) {
    if (static_cast<double>(rows) * H > biggest) {
      biggest = static_cast<double>(rows) * H;
      cause = std::string(field) + " " + std::to_string(rows) + " x hidden_size " + std::to_string(c.hidden_size);
    }
  }
  return cause;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::nn
