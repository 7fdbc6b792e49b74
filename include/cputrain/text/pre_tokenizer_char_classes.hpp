// The character classes Hugging Face's pre-tokenizers cut on, answered as the reference answers them (from the
// generated table detail/reference_pre_tokenizer_classes.hpp): Whitespace's word characters, Digits' numeric ones,
// and UnicodeScripts' script of a character. Whitespace (White_Space) and punctuation are char_classes.hpp's, the
// same as BERT's.
#pragma once

#include "cputrain/text/detail/reference_pre_tokenizer_classes.hpp"

#include <algorithm>

#include "cputrain/text/detail/code_point_ranges.hpp"

namespace cputrain::text {

/// A character of Whitespace's words (its regex's \w).
[[nodiscard]] inline bool is_word_char(char32_t cp) noexcept {
  if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z') || cp == '_';
  return detail::in_ranges(detail::reference_word_chars, cp);
}

/// A character Digits cuts off (Rust's char::is_numeric: decimal digits, letter numbers such as Ⅻ, and other
/// numbers such as ² and ½).
[[nodiscard]] inline bool is_numeric_char(char32_t cp) noexcept {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return detail::in_ranges(detail::reference_numeric_chars, cp);
}

/// The script UnicodeScripts gives `cp`, or -1 where a character belongs to none and so never starts a piece.
[[nodiscard]] inline int unicode_script(char32_t cp) noexcept {
  const auto& table = detail::reference_scripts;
  const auto* it = std::upper_bound(std::begin(table), std::end(table), cp,
                                    [](char32_t value, const detail::script_range& r) { return value < r.first; });
  if (it == std::begin(table) || cp > (it - 1)->last) return -1;
  return (it - 1)->script;
}

}  // namespace cputrain::text
