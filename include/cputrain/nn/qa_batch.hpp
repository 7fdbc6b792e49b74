// cputrain::nn::qa_batch — one batch of question-answering features as the model consumes them: token ids,
// segment ids and attention mask per position, and for training the answer's start and end token positions.
#pragma once

#include "cputrain/nn/encoder_batch.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cputrain/core/error.hpp"

namespace cputrain::nn {

struct qa_batch : encoder_batch {
  std::vector<std::int64_t> start_positions;  // [batch]; empty when there is no loss to compute
  std::vector<std::int64_t> end_positions;    // [batch]

  [[nodiscard]] bool has_labels() const noexcept { return !start_positions.empty(); }

  /// Throws usage_error unless the inputs are valid (encoder_batch::validate_inputs) and the labels, when there
  /// are any, have one entry per sequence.
  void validate(std::size_t vocab_size, std::size_t type_vocab_size, std::size_t max_positions) const {
    validate_inputs(vocab_size, type_vocab_size, max_positions, "qa_batch");
    if (has_labels() && (start_positions.size() != batch || end_positions.size() != batch)) {
      throw usage_error("qa_batch: start_positions and end_positions must have one entry per sequence");
    }
  }
};

}  // namespace cputrain::nn
