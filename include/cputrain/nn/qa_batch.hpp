// cputrain::nn::qa_batch — one batch of question-answering features as the model consumes them: token ids,
// segment ids and attention mask per position, and for training the answer's start and end token positions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"

namespace cputrain::nn {

struct qa_batch {
  std::size_t batch = 0;  // sequences
  std::size_t seq = 0;    // positions per sequence (all sequences padded to it)
  std::vector<std::int32_t> input_ids;       // [batch, seq]
  std::vector<std::int32_t> token_type_ids;  // [batch, seq]; 0 for the question, 1 for the context
  std::vector<std::int32_t> attention_mask;  // [batch, seq]; 1 for real tokens, 0 for padding
  std::vector<std::int64_t> start_positions;  // [batch]; empty when there is no loss to compute
  std::vector<std::int64_t> end_positions;    // [batch]

  [[nodiscard]] std::size_t tokens() const noexcept { return batch * seq; }
  [[nodiscard]] bool has_labels() const noexcept { return !start_positions.empty(); }

  /// Throws usage_error unless the arrays have the sizes batch and seq say, ids are inside the vocabulary and
  /// type vocabulary, and the mask is 0/1.
  void validate(std::size_t vocab_size, std::size_t type_vocab_size, std::size_t max_positions) const {
    auto fail = [](const std::string& what) { throw usage_error("qa_batch: " + what); };
    if (batch == 0 || seq == 0) fail("empty batch (" + std::to_string(batch) + " x " + std::to_string(seq) + ")");
    if (seq > max_positions) {
      fail("sequence length " + std::to_string(seq) + " exceeds max_position_embeddings " +
           std::to_string(max_positions));
    }
    const std::size_t n = tokens();
    if (input_ids.size() != n || token_type_ids.size() != n || attention_mask.size() != n) {
      fail("input_ids, token_type_ids and attention_mask must each have batch x seq = " + std::to_string(n) +
           " entries (have " + std::to_string(input_ids.size()) + ", " + std::to_string(token_type_ids.size()) +
           ", " + std::to_string(attention_mask.size()) + ")");
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (input_ids[i] < 0 || static_cast<std::size_t>(input_ids[i]) >= vocab_size) {
        fail("input_ids[" + std::to_string(i) + "] = " + std::to_string(input_ids[i]) + " is outside the vocabulary of " +
             std::to_string(vocab_size));
      }
      if (token_type_ids[i] < 0 || static_cast<std::size_t>(token_type_ids[i]) >= type_vocab_size) {
        fail("token_type_ids[" + std::to_string(i) + "] = " + std::to_string(token_type_ids[i]) +
             " is outside type_vocab_size " + std::to_string(type_vocab_size));
      }
      if (attention_mask[i] != 0 && attention_mask[i] != 1) {
        fail("attention_mask[" + std::to_string(i) + "] = " + std::to_string(attention_mask[i]) + " is not 0 or 1");
      }
    }
    if (has_labels() && (start_positions.size() != batch || end_positions.size() != batch)) {
      fail("start_positions and end_positions must have one entry per sequence");
    }
  }
};

}  // namespace cputrain::nn
