// The byte-level pieces of GPT-2-style tokenizers (GPT-2, RoBERTa, XLM's byte-level cousins): the alphabet that
// shows each byte as a printable character, so that BPE merges strings of bytes, and the pre-tokenizer's split,
// GPT-2's pattern  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+  as a scanner over
// code points (no regex engine), equal to Hugging Face's on every code point (tests/text/byte_level_test.cpp).
#pragma once

#include "cputrain/text/detail/gpt2_char_classes.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/char_classes.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

/// GPT-2's byte alphabet: the printable Latin-1 bytes (33-126, 161-172, 174-255) stand for themselves, every
/// other byte for 256 + n, n counting those bytes in order (a space is U+0120 'Ġ', a newline U+010A 'Ċ').
[[nodiscard]] constexpr std::array<char32_t, 256> byte_alphabet() noexcept {
  std::array<char32_t, 256> out{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    out[static_cast<std::size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
  }
  return out;
}

/// The class of a code point in GPT-2's pattern.
enum class gpt2_class : std::uint8_t { letter, number, space, other };

/// \p{L}, \p{N} and \s as the reference's regex engine answers them: its tables of letters and numbers (generated
/// from it: detail/gpt2_char_classes.hpp), and Unicode White_Space.
[[nodiscard]] inline gpt2_class gpt2_class_of(char32_t cp) noexcept {
  if (cp < 0x80) {
    if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return gpt2_class::letter;
    if (cp >= '0' && cp <= '9') return gpt2_class::number;
    return is_bert_whitespace(cp) ? gpt2_class::space : gpt2_class::other;
  }
  if (is_bert_whitespace(cp)) return gpt2_class::space;
  if (detail::in_ranges(detail::gpt2_letter_ranges, cp)) return gpt2_class::letter;
  if (detail::in_ranges(detail::gpt2_number_ranges, cp)) return gpt2_class::number;
  return gpt2_class::other;
}

namespace detail {

/// One decoded code point of the text being split.
struct scanned_char {
  std::uint32_t byte;
  gpt2_class kind;
};

/// The length in bytes of a contraction ('s 't 're 've 'm 'll 'd, case-sensitive) at `pos`, or 0.
[[nodiscard]] inline std::size_t contraction_at(std::string_view text, std::size_t pos) noexcept {
  if (text[pos] != '\'' || pos + 1 >= text.size()) return 0;
  const char a = text[pos + 1];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (pos + 2 >= text.size()) return 0;
  const char b = text[pos + 2];
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

}  // namespace detail

/// Splits valid UTF-8 `text` as GPT-2's pattern does, appending each piece as a [begin, end) byte range to
/// `pieces`. Throws text_error at the first invalid UTF-8 byte.
CPUTRAIN_DECL void split_gpt2(std::string_view text, std::vector<std::pair<std::uint32_t, std::uint32_t>>& pieces);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void split_gpt2(std::string_view text, std::vector<std::pair<std::uint32_t, std::uint32_t>>& pieces) {
  thread_local std::vector<detail::scanned_char> chars;
  chars.clear();
  for (std::size_t pos = 0; pos < text.size();) {
    char32_t cp = 0;
    const std::size_t length = decode_utf8(text, pos, cp);
    if (length == 0) throw text_error("text: invalid UTF-8 at byte " + std::to_string(pos));
    chars.push_back({static_cast<std::uint32_t>(pos), gpt2_class_of(cp)});
    pos += length;
  }
  const std::size_t n = chars.size();
  const auto byte_of = [&](std::size_t i) { return i < n ? chars[i].byte : static_cast<std::uint32_t>(text.size()); };
  // The end of the run of `kind` starting at char i.
  const auto run_end = [&](std::size_t i, gpt2_class kind) {
    while (i < n && chars[i].kind == kind) ++i;
    return i;
  };
  const auto run_of_other = [&](std::size_t i) {
    while (i < n && chars[i].kind == gpt2_class::other) ++i;
    return i;
  };
  std::size_t i = 0;
  while (i < n) {
    std::size_t end = i + 1;
    if (const std::size_t c = detail::contraction_at(text, chars[i].byte)) {
      end = i + c;  // ASCII: one char per byte
    } else {
      // " ?X+": a single ASCII space may lead a run of letters, numbers or others.
      const bool leading_space = text[chars[i].byte] == ' ' && i + 1 < n && chars[i + 1].kind != gpt2_class::space;
      const std::size_t first = leading_space ? i + 1 : i;
      const gpt2_class kind = chars[first].kind;
      if (kind == gpt2_class::other) {
        end = run_of_other(first);
      } else if (kind != gpt2_class::space) {
        end = run_end(first, kind);
      } else {
        // "\s+(?!\S)|\s+": a run of whitespace gives back its last character when a non-space follows (that one
        // leads the next piece), unless the run is that one character.
        end = run_end(i, gpt2_class::space);
        if (end < n && end - i > 1) --end;
      }
    }
    pieces.emplace_back(chars[i].byte, byte_of(end));
    i = end;
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
