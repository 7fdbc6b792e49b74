// cputrain::nn::sequence_classification_batch — a batch for a sequence classification head: the encoder's inputs
// and one label per sequence, either a class id (single-label classification) or num_labels float values
// (multi-label targets in [0, 1], or the regression target when num_labels is 1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/nn/encoder_batch.hpp"

namespace cputrain::nn {

struct sequence_classification_batch : encoder_batch {
  std::vector<std::int64_t> labels;  // [batch] class ids; empty for float labels or none
  std::vector<float> label_values;   // [batch, num_labels] multi-label targets or regression values; or empty

  [[nodiscard]] bool has_labels() const noexcept { return !labels.empty() || !label_values.empty(); }
  [[nodiscard]] bool integer_labels() const noexcept { return !labels.empty(); }

  /// Throws usage_error unless the inputs are valid (encoder_batch::validate_inputs) and there is at most one
  /// kind of label, one class id per sequence. The head checks the label values against num_labels.
  void validate(std::size_t vocab_size, std::size_t type_vocab_size, std::size_t max_positions) const {
    validate_inputs(vocab_size, type_vocab_size, max_positions, "sequence_classification_batch");
    if (!labels.empty() && !label_values.empty())
      throw usage_error("sequence_classification_batch: both class ids and float label values given");
    if (!labels.empty() && labels.size() != batch)
      throw usage_error("sequence_classification_batch: " + std::to_string(labels.size()) + " labels for " +
                        std::to_string(batch) + " sequences");
    if (!label_values.empty() && label_values.size() % batch != 0)
      throw usage_error("sequence_classification_batch: " + std::to_string(label_values.size()) +
                        " label values do not divide into " + std::to_string(batch) + " sequences");
  }
};

}  // namespace cputrain::nn
