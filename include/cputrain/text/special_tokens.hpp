// cputrain::text::special_tokens — what a post-processor puts around one text or a pair, and the special tokens
// programs need by role (padding, masking, unknown). The layouts of the encoders cputrain trains:
//   bert     [CLS] A [SEP] B [SEP]     type ids 1 from B on (BERT, ELECTRA, MiniLM, DistilBERT)
//   roberta  <s> A </s></s> B </s>     type ids all 0 (RoBERTa, XLM-RoBERTa)
//   none     A B                       nothing added (GPT-2), B typed 1 as Hugging Face types a pair
// wrap() builds an encoding as Hugging Face's Encoding reports it: ids, type ids, offsets ((0, 0) for the added
// tokens), special-tokens mask, sequence ids and word ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/token_sequence.hpp"

namespace cputrain::text {

enum class special_layout { none, bert, roberta };

/// A text or a pair with the special tokens in place. sequence_ids: 0 for the first text's tokens, 1 for the
/// second's, -1 for the added special tokens; word_ids: the word within its text, -1 for the added tokens.
struct encoding {
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> type_ids;
  std::vector<text_span> offsets;       // code points of the text the token came from; (0, 0) for added tokens
  std::vector<text_span> byte_offsets;  // the same in bytes
  std::vector<std::uint8_t> special_tokens_mask;
  std::vector<std::int8_t> sequence_ids;
  std::vector<std::int32_t> word_ids;
  std::vector<std::uint8_t> attention_mask;  // 1 for tokens, 0 for padding (text/padding.hpp)

  [[nodiscard]] std::size_t size() const noexcept { return ids.size(); }
};

struct special_tokens {
  special_layout layout = special_layout::none;
  std::int32_t cls = -1;  // bert and roberta: the token before A (<s> for RoBERTa)
  std::int32_t sep = -1;  // bert and roberta: the token after each text (</s> for RoBERTa)
  std::optional<std::int32_t> pad, mask, unk;

  /// Tokens added around one text (pair = false) or a pair.
  [[nodiscard]] std::size_t added(bool pair) const noexcept {
    switch (layout) {
      case special_layout::none: return 0;
      case special_layout::bert: return pair ? 3 : 2;
      case special_layout::roberta: return pair ? 4 : 2;
    }
    return 0;
  }
  /// Position of the second text's first token when the first has `first_tokens` tokens.
  [[nodiscard]] std::size_t second_begin(std::size_t first_tokens) const noexcept {
    switch (layout) {
      case special_layout::none: return first_tokens;
      case special_layout::bert: return first_tokens + 2;
      case special_layout::roberta: return first_tokens + 3;
    }
    return first_tokens;
  }
  /// The type id of the second text's tokens and of the special token after it.
  [[nodiscard]] std::int32_t second_type_id() const noexcept { return layout == special_layout::roberta ? 0 : 1; }

  /// The padding id; throws text_error naming `what` when the tokenizer has none (GPT-2's).
  [[nodiscard]] std::int32_t pad_id(const char* what) const {
    if (!pad) throw text_error(std::string(what) + ": this tokenizer has no padding token (GPT-2's has none)");
    return *pad;
  }
};

namespace detail {

inline void append_special(encoding& e, std::int32_t id, std::int32_t type_id) {
  e.ids.push_back(id);
  e.type_ids.push_back(type_id);
  e.offsets.push_back({0, 0});
  e.byte_offsets.push_back({0, 0});
  e.special_tokens_mask.push_back(1);
  e.sequence_ids.push_back(-1);
  e.word_ids.push_back(-1);
  e.attention_mask.push_back(1);
}

inline void append_text(encoding& e, const token_sequence& tokens, std::int32_t type_id, std::int8_t sequence) {
  e.ids.insert(e.ids.end(), tokens.ids.begin(), tokens.ids.end());
  e.type_ids.insert(e.type_ids.end(), tokens.size(), type_id);
  e.offsets.insert(e.offsets.end(), tokens.offsets.begin(), tokens.offsets.end());
  e.byte_offsets.insert(e.byte_offsets.end(), tokens.byte_offsets.begin(), tokens.byte_offsets.end());
  e.special_tokens_mask.insert(e.special_tokens_mask.end(), tokens.size(), 0);
  e.sequence_ids.insert(e.sequence_ids.end(), tokens.size(), sequence);
  e.word_ids.insert(e.word_ids.end(), tokens.words.begin(), tokens.words.end());
  e.attention_mask.insert(e.attention_mask.end(), tokens.size(), 1);
}

}  // namespace detail

/// `first` (and `second` when given) as the layout wraps them; add_special = false leaves the specials out, as
/// Hugging Face's add_special_tokens=False.
CPUTRAIN_DECL encoding wrap(const special_tokens& specials, const token_sequence& first, const token_sequence* second,
                            bool add_special = true);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL encoding wrap(const special_tokens& specials, const token_sequence& first, const token_sequence* second,
                            bool add_special) {
  encoding e;
  const bool pair = second != nullptr;
  const std::size_t total = first.size() + (pair ? second->size() : 0) + (add_special ? specials.added(pair) : 0);
  e.ids.reserve(total);
  e.type_ids.reserve(total);
  e.offsets.reserve(total);
  e.byte_offsets.reserve(total);
  e.special_tokens_mask.reserve(total);
  e.sequence_ids.reserve(total);
  e.word_ids.reserve(total);
  e.attention_mask.reserve(total);
  const bool wraps = add_special && specials.layout != special_layout::none;
  if (wraps) detail::append_special(e, specials.cls, 0);
  detail::append_text(e, first, 0, 0);
  if (wraps) detail::append_special(e, specials.sep, 0);
  if (!pair) return e;
  const std::int32_t second_type = specials.second_type_id();
  if (wraps && specials.layout == special_layout::roberta) detail::append_special(e, specials.sep, 0);
  detail::append_text(e, *second, second_type, 1);
  if (wraps) detail::append_special(e, specials.sep, second_type);
  return e;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
