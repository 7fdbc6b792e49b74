// cputrain::text::char_positions — byte positions of one UTF-8 text turned into code-point positions, as Hugging
// Face reports offsets: a position inside a character rounds down for a token's begin and up for its end, so a
// token made of part of a character's bytes covers that whole character.
#pragma once

#include "cputrain/text/token_sequence.hpp"
#include "cputrain/text/utf8.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace cputrain::text {

/// One alive per thread at a time: its table is a thread-local buffer, reused so that short texts allocate nothing.
class char_positions {
 public:
  explicit char_positions(std::string_view text) : text_(text), before_(buffer()) {
    before_.resize(text.size() + 1);
    std::uint32_t count = 0;
    for (std::size_t b = 0; b < text.size(); ++b) {
      before_[b] = count;  // characters that start before byte b
      count += !continuation(b);
    }
    before_[text.size()] = count;
  }
  /// Bytes [begin, end) as characters.
  [[nodiscard]] text_span chars(std::uint32_t begin, std::uint32_t end) const {
    const std::uint32_t first = before_[begin] - (continuation(begin) ? 1 : 0);
    return {first, std::max(first, before_[end])};
  }
  /// Bytes [begin, end) widened to whole characters.
  [[nodiscard]] text_span whole_bytes(std::uint32_t begin, std::uint32_t end) const {
    while (continuation(begin)) --begin;
    while (continuation(end)) ++end;
    return {begin, end};
  }

 private:
  [[nodiscard]] bool continuation(std::size_t b) const noexcept {
    return b < text_.size() && is_utf8_continuation(text_[b]);
  }
  static std::vector<std::uint32_t>& buffer() {
    thread_local std::vector<std::uint32_t> before;
    return before;
  }
  std::string_view text_;
  std::vector<std::uint32_t>& before_;
};

}  // namespace cputrain::text
