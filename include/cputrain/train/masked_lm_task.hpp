// cputrain::train::masked_lm_task — masked language modelling (run_mlm) as the trainer sees it: the head
// (nn::masked_lm_head, the decoder tied to the word table), the features (data::mlm_features) and their batches,
// masked afresh from the key the trainer gives each batch, so a resumed run and every evaluation draw the same masks.
// The masking settings travel in the features (mlm_feature_options::masking): Task::batch is static and sees only
// them. An evaluation reads trainer::evaluation_loss (eval_loss); predict() would hand on tokens x vocabulary
// logits. masked_lm_trainer<Policy> is trainer<masked_lm_task, Policy>.
#pragma once

#include "cputrain/data/mlm_features.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

#include "cputrain/nn/encoder_model.hpp"
#include "cputrain/nn/masked_lm_head.hpp"
#include "cputrain/policy/policy.hpp"
#include "cputrain/train/trainer.hpp"

namespace cputrain::train {

struct masked_lm_task {
  using head_type = nn::masked_lm_head;
  using features_type = data::mlm_features;
  using predictions_type = logit_rows;
  static constexpr const char* trainer_name = "masked_lm_trainer";
  static constexpr const char* labels_name = "masked tokens";

  /// The features `indices`, padded as asked (group_texts blocks are all max_seq_length long), with the features'
  /// masking drawn from `key`.
  [[nodiscard]] static nn::masked_lm_batch batch(const features_type& features, std::span<const std::size_t> indices,
                                                 bool pad_to_max_length, std::uint64_t key = 0) {
    return features.batch(indices, pad_to_max_length ? data::mlm_padding::max_length : data::mlm_padding::longest,
                          key);
  }
  static void drop_labels(nn::masked_lm_batch& batch) { batch.labels.clear(); }
  /// The labelled tokens, which the loss averages: the trainer weighs batches by them (trainer::micro_batch_weights).
  [[nodiscard]] static std::size_t loss_items(const nn::masked_lm_batch& batch) { return batch.labelled_tokens(); }
  [[nodiscard]] static std::uint32_t length(const features_type& features, std::size_t i) { return features.length(i); }
  [[nodiscard]] static std::size_t max_seq_length(const features_type& features) { return features.max_seq_length(); }
  /// Every masked input's logits over the vocabulary, [seq, vocab] per feature: gigabytes for a real corpus.
  [[nodiscard]] static logit_rows predictions(logit_rows rows) { return rows; }
};

template <class Policy>
using masked_lm_trainer = trainer<masked_lm_task, Policy>;

/// Hugging Face's *ForMaskedLM under `Policy`.
template <class Policy = policy<>>
using masked_lm_model =
    nn::encoder_model<nn::masked_lm_head, typename Policy::precision_policy, typename Policy::allocator_policy>;

}  // namespace cputrain::train

// Linked with cputrain's compiled component, this task's common trainers are compiled there, not in each file.
#if defined(CPUTRAIN_PREBUILT_MODELS)
#include "cputrain/train/prebuilt_trainers.hpp"  // IWYU pragma: export
CPUTRAIN_DETAIL_TRAINERS_OF_TASK(extern template, ::cputrain::train::masked_lm_task);
#endif
