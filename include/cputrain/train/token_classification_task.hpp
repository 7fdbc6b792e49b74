// cputrain::train::token_classification_task — token classification (run_ner: NER, POS tagging) as the trainer
// sees it: the head (nn::token_classification_head), the features (data::token_classification_features), their
// batches, and what an evaluation makes of predict()'s logits: a label id per labelled position of each example
// (the positions run_ner's compute_metrics keeps), and the Trainer's eval_loss without a second forward pass.
// token_classification_trainer<Policy> is trainer<token_classification_task, Policy>.
#pragma once

#include "cputrain/train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/data/token_classification_features.hpp"
#include "cputrain/nn/classification_loss.hpp"
#include "cputrain/nn/encoder_model.hpp"
#include "cputrain/nn/token_classification_batch.hpp"
#include "cputrain/nn/token_classification_head.hpp"
#include "cputrain/policy/policy.hpp"

namespace cputrain::train {

struct token_classification_task {
  using head_type = nn::token_classification_head;
  using features_type = data::token_classification_features;
  using predictions_type = logit_rows;
  static constexpr const char* trainer_name = "token_classification_trainer";
  static constexpr const char* labels_name = "labels";

  [[nodiscard]] static nn::token_classification_batch batch(const features_type& features,
                                                            std::span<const std::size_t> indices,
                                                            bool pad_to_max_length, std::uint64_t /*key*/ = 0) {
    return features.batch(indices, pad_to_max_length ? data::token_classification_padding::max_length
                                                     : data::token_classification_padding::longest);
  }
  static void drop_labels(nn::token_classification_batch& batch) { batch.labels.clear(); }
  /// The labelled tokens, which the loss averages: the trainer weighs batches by them (trainer::micro_batch_weights).
  [[nodiscard]] static std::size_t loss_items(const nn::token_classification_batch& batch) { return batch.labelled_tokens(); }
  [[nodiscard]] static std::uint32_t length(const features_type& features, std::size_t i) { return features.length(i); }
  [[nodiscard]] static std::size_t max_seq_length(const features_type& features) { return features.max_seq_length(); }
  /// Per feature, [max_seq_length, num_labels] logits, -100 past the feature's batch.
  [[nodiscard]] static logit_rows predictions(logit_rows rows) { return rows; }
};

template <class Policy>
using token_classification_trainer = trainer<token_classification_task, Policy>;

/// Hugging Face's *ForTokenClassification under `Policy`.
template <class Policy = policy<>>
using token_classifier =
    nn::encoder_model<nn::token_classification_head, typename Policy::precision_policy, typename Policy::allocator_policy>;

namespace detail {

// Labels per position of predict()'s rows for `features`; usage_error, naming `caller`, when they are not those.
[[nodiscard]] inline std::size_t labels_per_position(const logit_rows& rows,
                                                     const data::token_classification_features& features,
                                                     const char* caller) {
  const std::size_t seq = features.max_seq_length();
  const bool shaped = seq > 0 && rows.row_length > 0 && rows.row_length % seq == 0 &&
                      rows.values.size() == features.size() * rows.row_length;
  if (!shaped)
    throw usage_error(std::string(caller) + ": " + std::to_string(rows.values.size()) + " logits in rows of " +
                      std::to_string(rows.row_length) + " are not predict()'s output for " +
                      std::to_string(features.size()) + " features of max_seq_length " + std::to_string(seq));
  return rows.row_length / seq;
}

}  // namespace detail

/// compute_metrics' true_predictions as label ids: for every feature, the argmax label of each position that
/// carries a label (the first token of a word; every token of it with label_all_tokens), in order. `rows` is
/// predict()'s output for `features`. usage_error when the rows are not those of `features`.
[[nodiscard]] inline std::vector<std::vector<std::int32_t>> predicted_word_labels(
    const logit_rows& rows, const data::token_classification_features& features) {
  const std::size_t num_labels = detail::labels_per_position(rows, features, "predicted_word_labels");
  std::vector<std::vector<std::int32_t>> out;
  out.reserve(features.size());
  for (std::size_t i = 0; i < features.size(); ++i) {
    const std::span<const float> row(rows.values.data() + i * rows.row_length, rows.row_length);
    out.push_back(features.word_predictions(i, row, num_labels));
  }
  return out;
}

/// The Trainer's eval_loss from predict()'s logits, without evaluation_loss()'s second forward pass: the features
/// taken in evaluation batches of `batch_size` in order (as the Trainer's evaluation loop takes them, however many
/// processes share them), each batch's loss the head's (the mean cross-entropy of its labelled tokens, in float),
/// and their mean weighted by the batches' features. A batch without a labelled token adds nothing, as in
/// evaluation_loss(). usage_error for features without labels.
[[nodiscard]] inline double token_classification_loss(const logit_rows& rows,
                                                      const data::token_classification_features& features,
                                                      std::size_t batch_size) {
  const std::size_t num_labels = detail::labels_per_position(rows, features, "token_classification_loss");
  if (!features.has_labels() || batch_size == 0)
    throw usage_error("token_classification_loss: needs features with labels and a batch size of 1 or more");
  double weighted = 0.0;
  for (std::size_t first = 0; first < features.size(); first += batch_size) {
    const std::size_t end = std::min(features.size(), first + batch_size);
    double sum = 0.0;
    std::size_t counted = 0;
    for (std::size_t i = first; i < end; ++i) {
      const auto labels = features.labels(i);
      for (std::size_t p = 0; p < labels.size(); ++p) {
        if (labels[p] == nn::ignored_label) continue;
        const float* x = rows.values.data() + i * rows.row_length + p * num_labels;
        const double top = *std::max_element(x, x + num_labels);
        double exps = 0.0;
        for (std::size_t c = 0; c < num_labels; ++c) exps += std::exp(static_cast<double>(x[c]) - top);
        sum += std::log(exps) + top - static_cast<double>(x[static_cast<std::size_t>(labels[p])]);
        ++counted;
      }
    }
    const auto batch_loss = static_cast<float>(sum / static_cast<double>(counted));  // NaN when none counted
    if (std::isfinite(batch_loss)) weighted += static_cast<double>(batch_loss) * static_cast<double>(end - first);
  }
  return features.size() > 0 ? weighted / static_cast<double>(features.size()) : 0.0;
}

}  // namespace cputrain::train

// Linked with cputrain's compiled component, this task's common trainers are compiled there, not in each file.
#if defined(CPUTRAIN_PREBUILT_MODELS)
#include "cputrain/train/prebuilt_trainers.hpp"  // IWYU pragma: export
CPUTRAIN_DETAIL_TRAINERS_OF_TASK(extern template, ::cputrain::train::token_classification_task);
#endif
