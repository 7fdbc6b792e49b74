// cputrain::text::normalizer_chain — the normalizers a tokenizer.json lists (Precompiled, NFC, NFD, NFKC, NFKD,
// Lowercase, StripAccents, Strip, Replace, Prepend, Nmt, BertNormalizer, ByteLevel, in a Sequence or alone), applied
// in order to a normalized_text so that alignments follow each rewrite as in Hugging Face's normalizers.
// Replace takes a literal string or a regex of one repeated character ("X{n,}", "X+"): the patterns Hugging Face's
// converters write; any other regex is refused when the file is read.
#pragma once

#include "cputrain/text/precompiled_charsmap.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/byte_level.hpp"
#include "cputrain/text/char_classes.hpp"
#include "cputrain/text/detail/reference_combining_marks.hpp"
#include "cputrain/text/normalized_text.hpp"
#include "cputrain/text/unicode_forms.hpp"

namespace cputrain::text {

struct strip_step {
  bool left = false;
  bool right = true;
};

/// Replace: each match of a literal string, or each run of at least `min_run` copies of one character.
struct replace_step {
  std::string pattern;     // the literal, or the repeated character
  std::size_t min_run = 0;  // 0: `pattern` is a literal
  std::string content;
  std::string regex;        // the regex as the file wrote it (empty for a literal), to write back
};

struct lowercase_step {};
struct strip_accents_step {};  // drops every combining mark (detail/reference_combining_marks.hpp)
struct prepend_step {
  std::string content;
};
struct nmt_step {};  // SentencePiece's NMT rules: ASCII controls dropped, other spaces made ' '
struct bert_normalizer_step {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  std::optional<bool> strip_accents;  // unset: as lowercase
  bool lowercase = true;
};
struct byte_level_step {};  // each byte as GPT-2's alphabet spells it

class normalizer_chain {
 public:
  using step = std::variant<std::shared_ptr<const precompiled_charsmap>, strip_step, replace_step, unicode_form,
                            lowercase_step, strip_accents_step, prepend_step, nmt_step, bert_normalizer_step,
                            byte_level_step>;

  normalizer_chain() = default;
  explicit normalizer_chain(std::vector<step> steps) : steps_(std::move(steps)) {}

  [[nodiscard]] const std::vector<step>& steps() const noexcept { return steps_; }

  void apply(normalized_text& text) const;

 private:
  static void apply_step(const step& s, normalized_text& text);
  static void bert_normalize(const bert_normalizer_step& b, normalized_text& text);
  static void byte_level(normalized_text& text);
  static void replace(const replace_step& r, normalized_text& text) {
    thread_local std::vector<std::pair<std::size_t, std::size_t>> matches;
    matches.clear();
    const std::string& s = text.str();
    if (r.min_run == 0) {
      for (std::size_t at = s.find(r.pattern); at != std::string::npos; at = s.find(r.pattern, at + r.pattern.size()))
        matches.emplace_back(at, at + r.pattern.size());
    } else {
      for (std::size_t at = s.find(r.pattern); at != std::string::npos; at = s.find(r.pattern, at)) {
        std::size_t end = at, copies = 0;
        for (; s.compare(end, r.pattern.size(), r.pattern) == 0; end += r.pattern.size()) ++copies;
        if (copies >= r.min_run) matches.emplace_back(at, end);
        at = end;
      }
    }
    if (!matches.empty()) text.replace(matches, r.content);
  }

  std::vector<step> steps_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void normalizer_chain::apply(normalized_text& text) const {
  for (const auto& s : steps_) apply_step(s, text);
}

CPUTRAIN_DECL void normalizer_chain::apply_step(const step& s, normalized_text& text) {
  if (const auto* map = std::get_if<std::shared_ptr<const precompiled_charsmap>>(&s)) {
    (*map)->normalize(text);
  } else if (const auto* strip = std::get_if<strip_step>(&s)) {
    text.strip(strip->left, strip->right);
  } else if (const auto* r = std::get_if<replace_step>(&s)) {
    replace(*r, text);
  } else if (const auto* form = std::get_if<unicode_form>(&s)) {
    apply_unicode_form(text, *form);
  } else if (std::holds_alternative<lowercase_step>(s)) {
    apply_lowercase(text);
  } else if (std::holds_alternative<strip_accents_step>(s)) {
    // The reference's own table: marks assigned after its Unicode version are kept there.
    text.filter([](char32_t c) { return !detail::in_ranges(detail::reference_combining_marks, c); });
  } else if (const auto* prepend = std::get_if<prepend_step>(&s)) {
    text.prepend(prepend->content);
  } else if (std::holds_alternative<nmt_step>(s)) {
    text.filter([](char32_t c) {
      return !((c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || c == 0x8F ||
               c == 0x9F);
    });
    text.map([](char32_t c) {
      const bool space = c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x1680 ||
                         (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 || c == 0x2581 || c == 0xFEFF ||
                         c == 0xFFFD;
      return space ? U' ' : c;
    });
  } else if (const auto* bert = std::get_if<bert_normalizer_step>(&s)) {
    bert_normalize(*bert, text);
  } else {
    byte_level(text);
  }
}

// BertNormalizer's four passes in its order, with BERT's character classes (text/char_classes.hpp).
CPUTRAIN_DECL void normalizer_chain::bert_normalize(const bert_normalizer_step& b, normalized_text& text) {
  if (b.clean_text) {
    text.filter([](char32_t c) { return !(c == 0 || c == 0xFFFD || is_bert_control(c)); });
    text.map([](char32_t c) { return is_bert_whitespace(c) ? U' ' : c; });
  }
  if (b.handle_chinese_chars) {
    thread_local std::vector<char_change> changes;
    changes.clear();
    const std::string& s = text.str();
    for (std::size_t pos = 0; pos < s.size();) {
      char32_t c = 0;
      pos += decode_utf8(s, pos, c);
      if (is_bert_chinese_char(c)) {
        changes.insert(changes.end(), {{U' ', 0}, {c, 1}, {U' ', 1}});
      } else {
        changes.push_back({c, 0});
      }
    }
    text.transform(changes);
  }
  if (b.strip_accents.value_or(b.lowercase)) {
    apply_unicode_form(text, unicode_form::nfd);
    text.filter([](char32_t c) { return !is_bert_nonspacing_mark(c); });
  }
  if (b.lowercase) apply_lowercase(text);
}

CPUTRAIN_DECL void normalizer_chain::byte_level(normalized_text& text) {
  static constexpr auto alphabet = byte_alphabet();
  thread_local std::vector<char_change> changes;
  changes.clear();
  const std::string& s = text.str();
  for (std::size_t pos = 0; pos < s.size();) {
    const std::size_t length = utf8_char_length(s, pos);
    for (std::size_t i = 0; i < length; ++i)
      changes.push_back({alphabet[static_cast<unsigned char>(s[pos + i])], i > 0 ? 1 : 0});
    pos += length;
  }
  text.transform(changes);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
