// UTF-8 decoding for the tokenizer and the data readers: one code point at a time with an ASCII fast path, strict
// validation (no overlong forms, no surrogates, nothing above U+10FFFF — utf8proc decides), and the conversions
// between code-point positions (what Python and Hugging Face's offsets count) and byte positions (what a
// std::string indexes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <utf8proc.h>

#include "cputrain/text/text_error.hpp"

namespace cputrain::text {

/// Whether `byte` continues a UTF-8 sequence (10xxxxxx) rather than starting a code point.
[[nodiscard]] constexpr bool is_utf8_continuation(char byte) noexcept {
  return (static_cast<unsigned char>(byte) & 0xC0) == 0x80;
}

/// The length in bytes of the code point whose valid UTF-8 starts at byte `pos` of `s`, read from its lead byte.
[[nodiscard]] inline std::size_t utf8_char_length(std::string_view s, std::size_t pos) noexcept {
  const auto lead = static_cast<unsigned char>(s[pos]);
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

/// The byte position where the code point that ends just before `pos` starts in valid UTF-8 `s`, not before
/// `floor` (0 < pos, floor < pos).
[[nodiscard]] inline std::size_t previous_char_start(std::string_view s, std::size_t pos,
                                                     std::size_t floor = 0) noexcept {
  std::size_t start = pos - 1;
  while (start > floor && is_utf8_continuation(s[start])) --start;
  return start;
}

/// Decodes the code point starting at byte `pos` of `s` into `cp` and returns its length in bytes, or 0 if the
/// bytes there are not valid UTF-8.
inline std::size_t decode_utf8(std::string_view s, std::size_t pos, char32_t& cp) noexcept {
  const auto byte = static_cast<unsigned char>(s[pos]);
  if (byte < 0x80) {
    cp = byte;
    return 1;
  }
  utf8proc_int32_t value = 0;
  const auto length = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + pos),
                                       static_cast<utf8proc_ssize_t>(s.size() - pos), &value);
  if (length <= 0) return 0;
  cp = static_cast<char32_t>(value);
  return static_cast<std::size_t>(length);
}

/// Appends `cp` (a valid scalar value) to `out` as UTF-8.
inline void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
    return;
  }
  utf8proc_uint8_t buffer[4];
  const auto length = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buffer);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(length));
}

/// Byte position of the first invalid UTF-8 sequence in `s`, or std::string_view::npos when it is all valid.
inline std::size_t find_invalid_utf8(std::string_view s) noexcept {
  std::size_t pos = 0;
  char32_t cp = 0;
  while (pos < s.size()) {
    const std::size_t length = decode_utf8(s, pos, cp);
    if (length == 0) return pos;
    pos += length;
  }
  return std::string_view::npos;
}

/// Checks a text before tokenizing: valid UTF-8, shorter than 4 GiB (offsets are 32-bit). Throws text_error.
inline void check_tokenizer_input(std::string_view text) {
  if (text.size() >= 0xFFFFFFFFu) throw text_error("text: 4 GiB or longer; split it before tokenizing");
  if (const auto bad = find_invalid_utf8(text); bad != std::string_view::npos)
    throw text_error("text: invalid UTF-8 at byte " + std::to_string(bad));
}

/// Number of code points in valid UTF-8 `s` (continuation bytes are not counted).
inline std::size_t count_code_points(std::string_view s) noexcept {
  std::size_t count = 0;
  for (const char c : s) count += !is_utf8_continuation(c);
  return count;
}

/// Byte position of code point `index` in valid UTF-8 `s`; `s.size()` for index == count_code_points(s).
/// Throws text_error when `s` has fewer code points.
inline std::size_t byte_position(std::string_view s, std::size_t index) {
  std::size_t seen = 0;
  for (std::size_t pos = 0; pos < s.size(); ++pos) {
    if (is_utf8_continuation(s[pos])) continue;
    if (seen == index) return pos;
    ++seen;
  }
  if (seen == index) return s.size();
  throw text_error("text: code point " + std::to_string(index) + " is past the end (" + std::to_string(seen) +
                   " code points)");
}

}  // namespace cputrain::text
