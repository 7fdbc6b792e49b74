// The character classes BERT's normaliser and pre-tokeniser use, answered exactly as Hugging Face's tokenizer
// answers them: whitespace (Unicode White_Space), control characters (dropped), punctuation (split off as its own
// word: ASCII 33–47, 58–64, 91–96, 123–126 and every P* category), non-spacing marks (dropped with the accents)
// and Chinese characters (each one a word). Categories come from utf8proc, corrected by the generated table of
// code points where the reference, which uses Unicode 8.0 tables, answers differently.
#pragma once

#include "cputrain/text/detail/reference_char_classes.hpp"

#include <algorithm>
#include <span>

#include <utf8proc.h>

namespace cputrain::text {

namespace detail {

// The reference's answer for `cp` when the table has one; -1 otherwise.
inline int override_for(std::span<const class_override> table, char32_t cp) noexcept {
  const auto it = std::upper_bound(table.begin(), table.end(), cp,
                                   [](char32_t value, const class_override& range) { return value < range.first; });
  if (it == table.begin()) return -1;
  const auto& range = *(it - 1);
  return cp <= range.last ? static_cast<int>(range.value) : -1;
}

inline utf8proc_category_t category(char32_t cp) noexcept {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

}  // namespace detail

/// Unicode White_Space (what Rust's char::is_whitespace answers).
constexpr bool is_bert_whitespace(char32_t cp) noexcept {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/// A control character that cleaning drops: categories Cc, Cf and Co, except tab, newline and carriage return
/// (which count as whitespace). Unassigned code points are kept, as in the reference.
inline bool is_bert_control(char32_t cp) noexcept {
  if (cp < 0x80) return (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F;
  if (const int known = detail::override_for(detail::control_overrides, cp); known >= 0) return known != 0;
  const auto c = detail::category(cp);
  return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CO;
}

/// Punctuation the pre-tokeniser splits off as a word of its own.
inline bool is_bert_punctuation(char32_t cp) noexcept {
  if (cp < 0x80) return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
                        (cp >= 123 && cp <= 126);
  if (const int known = detail::override_for(detail::punctuation_overrides, cp); known >= 0) return known != 0;
  const auto c = detail::category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

/// A non-spacing mark (category Mn), dropped when accents are stripped.
inline bool is_bert_nonspacing_mark(char32_t cp) noexcept {
  if (cp < 0x300) return false;
  if (const int known = detail::override_for(detail::nonspacing_mark_overrides, cp); known >= 0) return known != 0;
  return detail::category(cp) == UTF8PROC_CATEGORY_MN;
}

/// A CJK ideograph, which the normaliser surrounds with spaces so that each becomes a word.
constexpr bool is_bert_chinese_char(char32_t cp) noexcept {
  if (cp < 0x3400) return false;
  for (const auto& range : detail::chinese_char_ranges)
    if (cp >= range.first && cp <= range.last) return true;
  return false;
}

}  // namespace cputrain::text
