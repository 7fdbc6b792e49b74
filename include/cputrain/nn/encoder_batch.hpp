// cputrain::nn::encoder_batch — what every task's batch gives the encoder: token ids, segment ids and the
// attention mask of batch sequences padded to one length. A task's batch (qa_batch, ...) adds its labels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"

namespace cputrain::nn {

struct encoder_batch {
  std::size_t batch = 0;  // sequences
  std::size_t seq = 0;    // positions per sequence (all sequences padded to it)
  std::vector<std::int32_t> input_ids;       // [batch, seq]
  std::vector<std::int32_t> token_type_ids;  // [batch, seq]; 0 for the first segment, 1 for the second
  std::vector<std::int32_t> attention_mask;  // [batch, seq]; 1 for real tokens, 0 for padding

  [[nodiscard]] std::size_t tokens() const noexcept { return batch * seq; }

  /// Throws usage_error (its message starting with `what`) unless the arrays have the sizes batch and seq say,
  /// ids are inside the vocabulary and type vocabulary, and the mask is 0/1.
  void validate_inputs(std::size_t vocab_size, std::size_t type_vocab_size, std::size_t max_positions,
                       const std::string& what) const {
    auto fail = [&](const std::string& problem) { throw usage_error(what + ": " + problem); };
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
        fail("input_ids[" + std::to_string(i) + "] = " + std::to_string(input_ids[i]) +
             " is outside the vocabulary of " + std::to_string(vocab_size));
      }
      if (token_type_ids[i] < 0 || static_cast<std::size_t>(token_type_ids[i]) >= type_vocab_size) {
        fail("token_type_ids[" + std::to_string(i) + "] = " + std::to_string(token_type_ids[i]) +
             " is outside type_vocab_size " + std::to_string(type_vocab_size));
      }
      if (attention_mask[i] != 0 && attention_mask[i] != 1) {
        fail("attention_mask[" + std::to_string(i) + "] = " + std::to_string(attention_mask[i]) + " is not 0 or 1");
      }
    }
  }
};

}  // namespace cputrain::nn
