// cputrain::train::qa_task — extractive question answering as the trainer sees it: the span head (nn::qa_head),
// the features it trains and predicts on (data::qa_features), how a batch is made from them, and what predict()
// hands on: the start and end logits of every feature, the rows data::postprocess_qa_predictions reads.
#pragma once

#include "cputrain/nn/qa_head.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cputrain/data/qa_features.hpp"
#include "cputrain/nn/qa_batch.hpp"
#include "cputrain/train/trainer.hpp"

namespace cputrain::train {

/// Start and end logits of features, one row of `row_length` per feature.
struct qa_logits {
  std::vector<float> start, end;
  std::size_t row_length = 0;
};

struct qa_task {
  using head_type = nn::qa_head;
  using features_type = data::qa_features;
  using predictions_type = qa_logits;
  /// How messages name the trainer and the labels the features must have for training.
  static constexpr const char* trainer_name = "qa_trainer";
  static constexpr const char* labels_name = "answer positions";

  [[nodiscard]] static nn::qa_batch batch(const features_type& features, std::span<const std::size_t> indices,
                                          bool pad_to_max_length, std::uint64_t /*key*/ = 0) {
    return features.batch(indices, pad_to_max_length ? data::qa_padding::max_length : data::qa_padding::longest);
  }
  static void drop_labels(nn::qa_batch& batch) {
    batch.start_positions.clear();
    batch.end_positions.clear();
  }
  /// Tokens of feature i, for --group_by_length.
  [[nodiscard]] static std::uint32_t length(const features_type& features, std::size_t i) {
    return features.all()[i].length;
  }
  [[nodiscard]] static std::size_t max_seq_length(const features_type& features) { return features.max_seq_length(); }

  /// The head's rows ([seq, 2] per feature) split into start and end rows of seq.
  [[nodiscard]] static qa_logits predictions(const logit_rows& rows) {
    qa_logits out;
    out.row_length = rows.row_length / 2;
    out.start.resize(rows.values.size() / 2);
    out.end.resize(rows.values.size() / 2);
    for (std::size_t i = 0; i < out.start.size(); ++i) {
      out.start[i] = rows.values[2 * i];
      out.end[i] = rows.values[2 * i + 1];
    }
    return out;
  }
};

}  // namespace cputrain::train

// Linked with cputrain's compiled component, this task's common trainers are compiled there, not in each file.
#if defined(CPUTRAIN_PREBUILT_MODELS)
#include "cputrain/train/prebuilt_trainers.hpp"  // IWYU pragma: export
CPUTRAIN_DETAIL_TRAINERS_OF_TASK(extern template, ::cputrain::train::qa_task);
#endif
