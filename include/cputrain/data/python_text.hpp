// Python's view of text where SQuAD tooling depends on it: str.isspace() (what str.split(), str.strip() and
// run_qa.py's question.lstrip() treat as whitespace — not the same set as C's isspace nor as BERT's whitespace).
#pragma once

#include <cstddef>
#include <string_view>

#include "cputrain/text/utf8.hpp"

namespace cputrain::data {

namespace detail {

/// Python's str.isspace(), which str.split() and str.strip() use: the characters Unicode gives bidirectional
/// class WS, B or S, or category Zs. Not the same as C's isspace nor as BERT's whitespace.
[[nodiscard]] constexpr bool is_python_whitespace(char32_t cp) noexcept {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20);
  return cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/// Python's s.lstrip() on UTF-8 text. Invalid UTF-8 stops the stripping (nothing Python would strip is there).
[[nodiscard]] inline std::string_view python_lstrip(std::string_view s) noexcept {
  std::size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp = 0;
    const std::size_t n = text::decode_utf8(s, pos, cp);
    if (n == 0 || !is_python_whitespace(cp)) break;
    pos += n;
  }
  return s.substr(pos);
}

}  // namespace detail

}  // namespace cputrain::data
