// cputrain::text::added_tokens — the tokens a tokenizer.json lists under "added_tokens" (RoBERTa's <s>, </s>,
// <mask>, ...), found in the raw text before anything else runs, as Hugging Face's added vocabulary finds them:
// leftmost-longest (a walk down a trie: as fast with thousands of them as with a few), `single_word` only between
// non-word characters, `lstrip`/`rstrip` swallowing the whitespace beside them (which then belongs to no token: the
// token's offsets are its own text). Those marked `normalized` are found later, in each normalized stretch
// (added_token_sets keeps the two sets apart).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <utf8proc.h>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/byte_trie.hpp"
#include "cputrain/text/char_classes.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

/// One entry of tokenizer.json's "added_tokens".
struct added_token {
  std::string content;
  std::int32_t id = 0;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = false;
};

/// A stretch of the text: an added token (`token` >= 0, the index into the list) or text for the model (-1).
struct text_segment {
  std::uint32_t begin;  // bytes
  std::uint32_t end;
  int token;
  std::uint32_t outer_begin = 0;  // an added token's bytes with the whitespace lstrip/rstrip took (the reference's
  std::uint32_t outer_end = 0;    // offsets for it unless a post-processor trims them)
};

class added_token_matcher {
 public:
  explicit added_token_matcher(std::vector<added_token> tokens)
      : tokens_(std::move(tokens)),
        contents_(tokens_.size(), [&](std::size_t i) -> std::string_view { return tokens_[i].content; },
                  byte_trie::repeated_key::keeps_first) {}

  [[nodiscard]] const std::vector<added_token>& tokens() const noexcept { return tokens_; }
  [[nodiscard]] bool empty() const noexcept { return tokens_.empty(); }

  /// Cuts valid UTF-8 `text` into segments, appended to `out` in order; text segments are never empty.
  void split(std::string_view text, std::vector<text_segment>& out) const;

 private:
  static void push_text(std::vector<text_segment>& out, std::size_t begin, std::size_t end) {
    const auto b = static_cast<std::uint32_t>(begin), e = static_cast<std::uint32_t>(end);
    out.push_back({b, e, -1, b, e});
  }
  // A word character as the reference's single_word test sees it: alphanumeric or '_'.
  static bool is_word_char(char32_t cp) noexcept {
    if (cp == '_') return true;
    const auto c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
    return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) || (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
  }
  static bool word_boundary_before(std::string_view text, std::size_t pos) {
    if (pos == 0) return true;
    char32_t cp = 0;
    (void)decode_utf8(text, previous_char_start(text, pos), cp);
    return !is_word_char(cp);
  }
  static bool word_boundary_after(std::string_view text, std::size_t end) {
    if (end >= text.size()) return true;
    char32_t cp = 0;
    (void)decode_utf8(text, end, cp);
    return !is_word_char(cp);
  }
  // The start of the whitespace that ends at `pos`, not before `floor`.
  static std::size_t whitespace_start(std::string_view text, std::size_t floor, std::size_t pos) {
    while (pos > floor) {
      const std::size_t start = previous_char_start(text, pos, floor);
      char32_t cp = 0;
      (void)decode_utf8(text, start, cp);
      if (!is_bert_whitespace(cp)) break;
      pos = start;
    }
    return pos;
  }
  static std::size_t whitespace_end(std::string_view text, std::size_t pos) {
    while (pos < text.size()) {
      char32_t cp = 0;
      const std::size_t length = decode_utf8(text, pos, cp);
      if (length == 0 || !is_bert_whitespace(cp)) break;
      pos += length;
    }
    return pos;
  }

  std::vector<added_token> tokens_;
  byte_trie contents_;  // the tokens' texts; where two are the same, the first
};

/// A tokenizer.json's added tokens as Hugging Face matches them: those found in the raw text first, and those marked
/// `normalized`, found in each normalized stretch between the first ones.
class added_token_sets {
 public:
  explicit added_token_sets(const std::vector<added_token>& all)
      : raw_(only(all, false)), normalized_(only(all, true)) {}

  [[nodiscard]] const added_token_matcher& raw() const noexcept { return raw_; }
  [[nodiscard]] const added_token_matcher& normalized() const noexcept { return normalized_; }
  /// Every added token, the raw ones first.
  [[nodiscard]] std::vector<added_token> all() const {
    auto out = raw_.tokens();
    out.insert(out.end(), normalized_.tokens().begin(), normalized_.tokens().end());
    return out;
  }
  /// The id of the added token `content`.
  [[nodiscard]] std::optional<std::int32_t> find(std::string_view content) const {
    for (const auto* m : {&raw_, &normalized_})
      for (const auto& t : m->tokens())
        if (t.content == content) return t.id;
    return std::nullopt;
  }
  /// The content of the added token with id `id`.
  [[nodiscard]] std::optional<std::string> content(std::int32_t id) const {
    for (const auto* m : {&raw_, &normalized_})
      for (const auto& t : m->tokens())
        if (t.id == id) return t.content;
    return std::nullopt;
  }
  /// One past the largest id of a model of `model_size` tokens and of the added tokens (Hugging Face's
  /// len(tokenizer)).
  [[nodiscard]] std::size_t id_count(std::size_t model_size) const noexcept {
    for (const auto* m : {&raw_, &normalized_})
      for (const auto& t : m->tokens()) model_size = std::max(model_size, static_cast<std::size_t>(t.id) + 1);
    return model_size;
  }

 private:
  static added_token_matcher only(const std::vector<added_token>& all, bool normalized) {
    std::vector<added_token> kept;
    for (const auto& t : all)
      if (t.normalized == normalized) kept.push_back(t);
    return added_token_matcher(std::move(kept));
  }

  added_token_matcher raw_;
  added_token_matcher normalized_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void added_token_matcher::split(std::string_view text, std::vector<text_segment>& out) const {
  std::size_t plain = 0;  // where the current text segment starts
  for (std::size_t pos = 0; pos < text.size();) {
    if (contents_.child(byte_trie::root, static_cast<unsigned char>(text[pos])) == byte_trie::no_node) {
      ++pos;  // most bytes start no token: one table lookup
      continue;
    }
    const auto [best, length] = contents_.longest_prefix(text.substr(pos));
    if (best < 0) {
      ++pos;
      continue;
    }
    const added_token& t = tokens_[static_cast<std::size_t>(best)];
    const std::size_t end = pos + length;
    if (t.single_word && !(word_boundary_before(text, pos) && word_boundary_after(text, end))) {
      pos = end;  // the reference's matches do not overlap: a refused one is not searched again
      continue;
    }
    std::size_t cut = pos, resume = end;
    if (t.lstrip) cut = whitespace_start(text, plain, pos);
    if (t.rstrip) resume = whitespace_end(text, end);
    if (cut > plain) push_text(out, plain, cut);
    out.push_back({static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(end), best,
                   static_cast<std::uint32_t>(cut), static_cast<std::uint32_t>(resume)});
    pos = plain = resume;
  }
  if (text.size() > plain) push_text(out, plain, text.size());
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
