// cputrain::train::classification_task — sequence classification (run_glue) as the trainer sees it: the head
// (nn::sequence_classification_head), the features (data::classification_features), their batches, and what an
// evaluation makes of predict()'s logits: the predicted classes or values and the loss Hugging Face's Trainer
// reports as eval_loss. classification_trainer<Policy> is trainer<classification_task, Policy>.
#pragma once

#include "cputrain/data/classification_features.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cputrain/nn/classification_loss.hpp"
#include "cputrain/nn/encoder_model.hpp"
#include "cputrain/nn/sequence_classification_batch.hpp"
#include "cputrain/nn/sequence_classification_head.hpp"
#include "cputrain/policy/policy.hpp"
#include "cputrain/train/trainer.hpp"

namespace cputrain::train {

struct classification_task {
  using head_type = nn::sequence_classification_head;
  using features_type = data::classification_features;
  using predictions_type = logit_rows;
  static constexpr const char* trainer_name = "classification_trainer";
  static constexpr const char* labels_name = "labels";

  [[nodiscard]] static nn::sequence_classification_batch batch(const features_type& features,
                                                               std::span<const std::size_t> indices,
                                                               bool pad_to_max_length, std::uint64_t /*key*/ = 0) {
    return features.batch(indices, pad_to_max_length);
  }
  static void drop_labels(nn::sequence_classification_batch& batch) {
    batch.labels.clear();
    batch.label_values.clear();
  }
  [[nodiscard]] static std::uint32_t length(const features_type& features, std::size_t i) { return features.length(i); }
  [[nodiscard]] static std::size_t max_seq_length(const features_type& features) { return features.max_seq_length(); }
  [[nodiscard]] static logit_rows predictions(logit_rows rows) { return rows; }
};

template <class Policy>
using classification_trainer = trainer<classification_task, Policy>;

/// Hugging Face's *ForSequenceClassification under `Policy`.
template <class Policy = policy<>>
using sequence_classifier =
    nn::encoder_model<nn::sequence_classification_head, typename Policy::precision_policy, typename Policy::allocator_policy>;

/// The predicted class of every row (argmax, the first of equal logits, as numpy's).
[[nodiscard]] inline std::vector<std::int64_t> predicted_classes(const logit_rows& rows) {
  std::vector<std::int64_t> out;
  const std::size_t n = rows.row_length == 0 ? 0 : rows.values.size() / rows.row_length;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto row = rows.values.begin() + static_cast<std::ptrdiff_t>(i * rows.row_length);
    out.push_back(std::max_element(row, row + static_cast<std::ptrdiff_t>(rows.row_length)) - row);
  }
  return out;
}

/// The loss of the logits against the features' labels, as the Trainer's eval_loss: the mean over examples of
/// cross-entropy (class ids), mean squared error (one value) or BCE with logits (multi-label targets).
[[nodiscard]] inline double classification_loss(const logit_rows& rows, const data::classification_features& features) {
  std::vector<float> scratch(rows.values.size());
  const std::size_t n = features.size();
  switch (features.label_kind()) {
    case data::classification_labels::class_id:
      return nn::cross_entropy(rows.values.data(), features.class_ids().data(), n, rows.row_length, 1.0f, scratch.data());
    case data::classification_labels::values:
      if (rows.row_length == 1)
        return nn::mean_squared_error(rows.values.data(), features.values().data(), n, 1.0f, scratch.data());
      return nn::bce_with_logits(rows.values.data(), features.values().data(), rows.values.size(), 1.0f, scratch.data());
    case data::classification_labels::none:
      break;
  }
  return 0.0;
}

}  // namespace cputrain::train

// Linked with cputrain's compiled component, this task's common trainers are compiled there, not in each file.
#if defined(CPUTRAIN_PREBUILT_MODELS)
#include "cputrain/train/prebuilt_trainers.hpp"  // IWYU pragma: export
CPUTRAIN_DETAIL_TRAINERS_OF_TASK(extern template, ::cputrain::train::classification_task);
#endif
