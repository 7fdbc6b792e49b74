// cputrain::nn::model_memory — the sizes a bert_qa of a config allocates, from the config alone: the parameter
// count (a config whose products overflow 64 bits is refused naming its fields), the model's bill (weights,
// gradients, the bf16 copy) and the workspace a batch x seq forward keeps for backward. bert_qa lays its buffers
// out with these same functions, so the estimate and the model cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "cputrain/core/error.hpp"
#include "cputrain/machine/memory_bill.hpp"
#include "cputrain/nn/bert_config.hpp"

namespace cputrain::nn {

namespace detail {

/// a * b, or a usage_error saying `what` does not fit in 64 bits.
inline std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) throw usage_error(what + " is more than 64-bit sizes can count");
  return out;
}
inline std::uint64_t checked_sum(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) throw usage_error(what + " is more than 64-bit sizes can count");
  return out;
}

/// A tensor of n floats in the flat buffer: parameter_table rounds every tensor up to 16 floats.
inline std::uint64_t padded_tensor(std::uint64_t n, const std::string& what) {
  return checked_sum(n, 15, what) / 16 * 16;
}

inline std::string layer_fields(const bert_config& c) {
  return "num_hidden_layers " + std::to_string(c.num_hidden_layers) + " x (hidden_size " +
         std::to_string(c.hidden_size) + ", intermediate_size " + std::to_string(c.intermediate_size) + ")";
}

}  // namespace detail

/// Elements of the activation type one layer keeps for backward: x q k v context ln1_in h1 ln2_in ([T, H] each),
/// ff_in ff_out ([T, I] each) and the attention probabilities ([batch, heads, seq, seq]).
[[nodiscard]] constexpr std::size_t kept_per_layer(std::size_t batch, std::size_t seq, std::size_t hidden,
                                                   std::size_t inter, std::size_t heads) noexcept {
  const std::size_t T = batch * seq;
  return 8 * T * hidden + 2 * T * inter + batch * heads * seq * seq;
}

/// Parameters of bert_qa(config), padding included (= its params().size()). usage_error naming the fields when
/// the count does not fit in 64 bits.
[[nodiscard]] inline std::uint64_t parameter_count(const bert_config& c) {
  using detail::checked_product, detail::checked_sum, detail::padded_tensor;
  const std::string what = "bert_config: " + detail::layer_fields(c) + " with vocab_size " +
                           std::to_string(c.vocab_size) + ": the parameter count";
  const auto H = static_cast<std::uint64_t>(c.hidden_size), I = static_cast<std::uint64_t>(c.intermediate_size);
  std::uint64_t total = 0;
  for (const int rows : {c.vocab_size, c.max_position_embeddings, c.type_vocab_size})
    total = checked_sum(total, padded_tensor(checked_product(static_cast<std::uint64_t>(rows), H, what), what), what);
  total = checked_sum(total, 2 * padded_tensor(H, what), what);  // LayerNorm
  const std::uint64_t square = padded_tensor(checked_product(H, H, what), what);
  const std::uint64_t wide = padded_tensor(checked_product(H, I, what), what);
  // four H x H projections, the two feed-forward matrices, their biases, two LayerNorms
  std::uint64_t layer = checked_sum(checked_product(4, square, what), checked_product(2, wide, what), what);
  layer = checked_sum(layer, 9 * padded_tensor(H, what) + padded_tensor(I, what), what);
  total = checked_sum(total, checked_product(static_cast<std::uint64_t>(c.num_hidden_layers), layer, what), what);
  return checked_sum(total, padded_tensor(2 * H, what) + padded_tensor(2, what), what);  // qa_outputs
}

/// What the biggest part of the parameters comes from, in the config's own field names: the layers, or one of
/// the embedding tables (a position table made huge by max_position_embeddings is named as such).
[[nodiscard]] inline std::string parameter_cause(const bert_config& c) {
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

/// The model's own buffers: weights, gradients, and (when the matrix products take `gemm_input_bytes` < 4) the
/// rounded copy they read.
[[nodiscard]] inline memory_bill model_memory(const bert_config& config, std::size_t gemm_input_bytes) {
  const double params = static_cast<double>(parameter_count(config));
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

/// The workspace bert_qa::forward allocates for `shape`: the activations kept for backward (`activation_bytes`
/// per element) and the float buffers every layer shares. usage_error naming the settings when the element
/// counts do not fit in 64 bits.
[[nodiscard]] inline memory_bill activation_memory(const bert_config& c, std::size_t activation_bytes,
                                                   const activation_shape& shape) {
  using detail::checked_product, detail::checked_sum;
  const std::string tokens = shape.batch_name + " " + std::to_string(shape.batch) + " x " + shape.seq_name + " " +
                             std::to_string(shape.seq) + " tokens";
  const std::string cause = tokens + " x num_hidden_layers " + std::to_string(c.num_hidden_layers);
  const std::string what = cause + " (with num_attention_heads " + std::to_string(c.num_attention_heads) +
                           " x seq^2 attention probabilities): the activations";
  const auto H = static_cast<std::uint64_t>(c.hidden_size), I = static_cast<std::uint64_t>(c.intermediate_size);
  const std::uint64_t T = checked_product(shape.batch, shape.seq, what);
  const auto heads = static_cast<std::uint64_t>(c.num_attention_heads);
  const std::uint64_t probs = checked_product(checked_product(shape.batch, heads, what),
                                              checked_product(shape.seq, shape.seq, what), what);
  const std::uint64_t rows = checked_sum(checked_product(8, H, what), checked_product(2, I, what), what);
  const std::uint64_t per_layer = checked_sum(checked_product(T, rows, what), probs, what);
  const double t = static_cast<double>(T), bytes = static_cast<double>(activation_bytes);
  memory_bill bill;
  // kept_per_layer elements, and four [T] float statistics of the two LayerNorms
  bill.add("activations kept for backward", c.num_hidden_layers * (static_cast<double>(per_layer) * bytes + 16.0 * t),
           cause);
  // embedding sum and final hidden state (activation type); hidden, its gradient, 4 scratch rows, the
  // feed-forward scratch and a few [T] / [T, 2] vectors (float)
  const double h = static_cast<double>(H), inter = static_cast<double>(I);
  bill.add("layer workspace", 2 * t * h * bytes + 4.0 * t * (6.0 * h + inter + 7.0), tokens);
  return bill;
}

}  // namespace cputrain::nn
