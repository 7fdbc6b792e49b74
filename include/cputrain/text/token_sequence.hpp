// cputrain::text::token_sequence — what every tokenizer here produces: token ids with the span of the original
// text each came from, in code points (as Hugging Face reports offsets) and in bytes (to cut the UTF-8 text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cputrain::text {

/// [begin, end) positions in a text.
struct text_span {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  friend bool operator==(const text_span&, const text_span&) = default;
};

/// Tokens of one text: ids with their offsets into it. Appending encodes keep growing it; clear() reuses memory.
struct token_sequence {
  std::vector<std::int32_t> ids;
  std::vector<text_span> offsets;       // code points of the original text
  std::vector<text_span> byte_offsets;  // bytes of the original text

  std::size_t size() const noexcept { return ids.size(); }
  bool empty() const noexcept { return ids.empty(); }
  void clear() noexcept {
    ids.clear();
    offsets.clear();
    byte_offsets.clear();
  }
  void push_back(std::int32_t id, text_span chars, text_span bytes) {
    ids.push_back(id);
    offsets.push_back(chars);
    byte_offsets.push_back(bytes);
  }
};

}  // namespace cputrain::text
