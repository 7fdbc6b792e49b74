// cputrain::nn::token_classification_batch — a batch for a token classification head (NER, POS tagging): the
// encoder's inputs and a class id per token, -100 where no label counts (padding, special tokens, the pieces of
// a word after its first).
#pragma once

#include "cputrain/nn/classification_loss.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/nn/encoder_batch.hpp"

namespace cputrain::nn {

struct token_classification_batch : encoder_batch {
  std::vector<std::int64_t> labels;  // [batch, seq] class ids or -100; empty when there is no loss to compute

  [[nodiscard]] bool has_labels() const noexcept { return !labels.empty(); }
  /// The tokens whose label counts: what the loss averages over.
  [[nodiscard]] std::size_t labelled_tokens() const {
    return static_cast<std::size_t>(std::count_if(labels.begin(), labels.end(),
                                                  [](std::int64_t label) { return label != ignored_label; }));
  }

  /// Throws usage_error unless the inputs are valid (encoder_batch::validate_inputs) and there is one label per
  /// token. The head checks each against num_labels.
  void validate(std::size_t vocab_size, std::size_t type_vocab_size, std::size_t max_positions) const {
    validate_inputs(vocab_size, type_vocab_size, max_positions, "token_classification_batch");
    if (has_labels() && labels.size() != tokens())
      throw usage_error("token_classification_batch: " + std::to_string(labels.size()) + " labels for batch x seq = " +
                        std::to_string(tokens()) + " tokens");
  }
};

}  // namespace cputrain::nn
