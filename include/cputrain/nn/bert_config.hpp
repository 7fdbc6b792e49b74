// cputrain::nn::bert_config — the hyper-parameters of a BERT encoder, named and defaulted as Hugging Face's
// BertConfig (bert-base-uncased), so config.json maps onto it field for field (io/bert_config_json.hpp).
// validate() throws usage_error naming the field for what the model cannot run (only the exact erf "gelu").
#pragma once

#include <algorithm>
#include <charconv>
#include <iterator>
#include <cmath>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::nn {

struct bert_config {
  /// Which family's names, position rule and layer shape: "bert" (also MiniLM), "roberta", "xlm-roberta",
  /// "distilbert" or "electra" (supported_model_types). DistilBERT's own keys (dim, n_layers, ...) are read into
  /// the BERT-named fields below (io/bert_config_json.hpp).
  std::string model_type = "bert";
  int vocab_size = 30522;
  int hidden_size = 768;
  int num_hidden_layers = 12;
  int num_attention_heads = 12;
  int intermediate_size = 3072;
  int max_position_embeddings = 512;
  int type_vocab_size = 2;
  float layer_norm_eps = 1e-12f;
  float hidden_dropout_prob = 0.1f;
  float attention_probs_dropout_prob = 0.1f;
  float initializer_range = 0.02f;
  int pad_token_id = 0;
  std::string hidden_act = "gelu";
  /// Outputs of a classification head (PretrainedConfig's default, 2); 1 with a sequence head is regression.
  int num_labels = 2;
  /// The labels' names by id (config.json's id2label); empty: Hugging Face's defaults, "LABEL_0", "LABEL_1", ...
  std::vector<std::string> label_names;
  /// "regression", "single_label_classification", "multi_label_classification", or empty: inferred from the
  /// labels as Hugging Face infers it (classification_loss.hpp).
  std::string problem_type;
  /// The classification heads' dropout; none: hidden_dropout_prob, as Hugging Face falls back.
  std::optional<float> classifier_dropout;
  /// DistilBERT's dropout before qa_outputs, and between pre_classifier and classifier (DistilBertConfig's defaults).
  float qa_dropout = 0.1f;
  float seq_classif_dropout = 0.2f;
  /// ELECTRA's embedding width, projected to hidden_size by `embeddings_project` when they differ; none: hidden_size.
  std::optional<int> embedding_size;

  /// The width of the embedding tables and their LayerNorm.
  [[nodiscard]] int embedding_width() const noexcept { return embedding_size.value_or(hidden_size); }
  /// ELECTRA's `embeddings_project`: present when the embeddings are narrower or wider than the layers.
  [[nodiscard]] bool projects_embeddings() const noexcept { return embedding_width() != hidden_size; }

  /// The dropout probability of a classification head.
  [[nodiscard]] float classifier_dropout_prob() const noexcept {
    return classifier_dropout.value_or(hidden_dropout_prob);
  }

  /// RoBERTa's rule (create_position_ids_from_input_ids): a real token's position is pad_token_id + 1 + its
  /// index among the sequence's real tokens, padding sits at pad_token_id; BERT's is the index in the sequence.
  [[nodiscard]] bool positions_after_padding() const noexcept {
    return model_type == "roberta" || model_type == "xlm-roberta";
  }
  /// DistilBERT: no token types, no dropout after the attention's output projection, its own tensor names.
  [[nodiscard]] bool distilbert() const noexcept { return model_type == "distilbert"; }
  /// The prefix of the encoder's tensor names in Hugging Face's checkpoints ("bert", "roberta", "distilbert").
  [[nodiscard]] std::string weights_prefix() const;
  /// The longest sequence the position table can place (RoBERTa's first pad_token_id + 1 rows are not positions
  /// of real tokens: 512 of roberta-base's 514).
  [[nodiscard]] int max_sequence_length() const noexcept {
    return positions_after_padding() ? max_position_embeddings - pad_token_id - 1 : max_position_embeddings;
  }

  /// The name of label `id`: config.json's id2label entry, or Hugging Face's default "LABEL_<id>".
  [[nodiscard]] std::string label_name(int id) const;

  /// Hugging Face's names of num_labels labels: "LABEL_0", "LABEL_1", ...
  [[nodiscard]] std::vector<std::string> default_label_names() const;

  /// Width of one attention head. Meaningful once validate() has passed.
  [[nodiscard]] int head_dim() const noexcept {
    return num_attention_heads > 0 ? hidden_size / num_attention_heads : 0;
  }

  /// Throws usage_error naming the first field that the model cannot run with, and its value.
  void validate() const;

  friend bool operator==(const bert_config&, const bert_config&) = default;
};

/// The model_type values cputrain implements, as config.json spells them.
inline constexpr const char* supported_model_types[] = {"bert", "roberta", "xlm-roberta", "distilbert", "electra"};

namespace detail {

/// The shortest decimal that reads back as the same float ("0.1", not "0.100000001"), so messages show the
/// value the user wrote.
inline std::string config_float_text(float value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (result.ec != std::errc()) return "?";
  return std::string(buffer, result.ptr);
}

[[noreturn]] inline void bad_config_field(const char* field, const std::string& value, const std::string& problem) {
  throw usage_error(std::string("bert_config: ") + field + " = " + value + " " + problem);
}

inline void require_positive_field(const char* field, int value) {
  if (value <= 0) bad_config_field(field, std::to_string(value), "must be positive");
}

inline void require_probability_field(const char* field, float value) {
  // Written as a negation so that NaN fails too.
  if (!(value >= 0.0f && value < 1.0f)) bad_config_field(field, config_float_text(value), "must be in [0, 1)");
}

}  // namespace detail

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::string bert_config::weights_prefix() const {
  if (positions_after_padding()) return "roberta";
  if (distilbert() || model_type == "electra") return model_type;
  return "bert";
}

CPUTRAIN_DECL std::string bert_config::label_name(int id) const {
  if (!label_names.empty()) return label_names.at(static_cast<std::size_t>(id));
  std::string name = "LABEL_";
  name += std::to_string(id);
  return name;
}

CPUTRAIN_DECL std::vector<std::string> bert_config::default_label_names() const {
  std::vector<std::string> names;
  for (int i = 0; i < num_labels; ++i) {
    std::string name = "LABEL_";
    name += std::to_string(i);
    names.push_back(std::move(name));
  }
  return names;
}

CPUTRAIN_DECL void bert_config::validate() const {
  if (std::find(std::begin(supported_model_types), std::end(supported_model_types), model_type) ==
      std::end(supported_model_types)) {
    std::string known;
    for (const char* t : supported_model_types) known += std::string(known.empty() ? "" : ", ") + "\"" + t + "\"";
    detail::bad_config_field("model_type", "\"" + model_type + "\"", "is not supported; supported: " + known);
  }
  detail::require_positive_field("vocab_size", vocab_size);
  detail::require_positive_field("hidden_size", hidden_size);
  detail::require_positive_field("num_hidden_layers", num_hidden_layers);
  detail::require_positive_field("num_attention_heads", num_attention_heads);
  detail::require_positive_field("intermediate_size", intermediate_size);
  detail::require_positive_field("max_position_embeddings", max_position_embeddings);
  detail::require_positive_field("type_vocab_size", type_vocab_size);
  if (hidden_size % num_attention_heads != 0) {
    detail::bad_config_field("hidden_size", std::to_string(hidden_size),
                             "is not divisible by num_attention_heads = " + std::to_string(num_attention_heads));
  }
  if (!(layer_norm_eps > 0.0f && std::isfinite(layer_norm_eps))) {
    detail::bad_config_field("layer_norm_eps", detail::config_float_text(layer_norm_eps),
                             "must be positive and finite");
  }
  detail::require_probability_field("hidden_dropout_prob", hidden_dropout_prob);
  detail::require_probability_field("attention_probs_dropout_prob", attention_probs_dropout_prob);
  if (!(initializer_range >= 0.0f && std::isfinite(initializer_range))) {
    detail::bad_config_field("initializer_range", detail::config_float_text(initializer_range),
                             "must be >= 0 and finite");
  }
  if (pad_token_id < 0 || pad_token_id >= vocab_size) {
    detail::bad_config_field("pad_token_id", std::to_string(pad_token_id),
                             "must be in [0, vocab_size = " + std::to_string(vocab_size) + ")");
  }
  if (positions_after_padding() && max_sequence_length() < 1) {
    detail::bad_config_field("max_position_embeddings", std::to_string(max_position_embeddings),
                             "leaves no position for a real token: " + model_type +
                                 " places them after pad_token_id = " + std::to_string(pad_token_id) +
                                 ", so it must be at least pad_token_id + 2");
  }
  // Before any estimate or allocation: sizes whose products no 64-bit count can hold (a typo's extra digits).
  const double H = hidden_size, weights = static_cast<double>(num_hidden_layers) * (4.0 * H * H + 2.0 * H * intermediate_size) +
                                          (static_cast<double>(vocab_size) + max_position_embeddings + type_vocab_size) * H;
  if (weights >= 0x1p62) {
    detail::bad_config_field("num_hidden_layers", std::to_string(num_hidden_layers),
                             "x (hidden_size " + std::to_string(hidden_size) + ", intermediate_size " +
                                 std::to_string(intermediate_size) + ") with vocab_size " + std::to_string(vocab_size) +
                                 " and max_position_embeddings " + std::to_string(max_position_embeddings) +
                                 " makes more parameters than a 64-bit size can count");
  }
  detail::require_positive_field("num_labels", num_labels);
  if (!label_names.empty() && label_names.size() != static_cast<std::size_t>(num_labels)) {
    detail::bad_config_field("num_labels", std::to_string(num_labels),
                             "contradicts id2label, which names " + std::to_string(label_names.size()) + " labels");
  }
  if (embedding_size) {
    detail::require_positive_field("embedding_size", *embedding_size);
    if (*embedding_size > hidden_size)  // the embeddings' LayerNorm input shares the layers' [T, H] scratch
      detail::bad_config_field("embedding_size", std::to_string(*embedding_size),
                               "is larger than hidden_size = " + std::to_string(hidden_size) +
                                   ", which cputrain does not implement (ELECTRA's are equal or smaller)");
  }
  if (classifier_dropout) detail::require_probability_field("classifier_dropout", *classifier_dropout);
  detail::require_probability_field("qa_dropout", qa_dropout);
  detail::require_probability_field("seq_classif_dropout", seq_classif_dropout);
  if (!problem_type.empty() && problem_type != "regression" && problem_type != "single_label_classification" &&
      problem_type != "multi_label_classification") {
    detail::bad_config_field("problem_type", "\"" + problem_type + "\"",
                             "is not one of \"regression\", \"single_label_classification\", "
                             "\"multi_label_classification\"");
  }
  if (hidden_act != "gelu") {
    detail::bad_config_field("hidden_act", "\"" + hidden_act + "\"",
                             "is not supported: only \"gelu\" (the exact erf GELU) is implemented");
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::nn
