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

/// A token a model (WordPiece, Unigram) found in one word: its id and its bytes [begin, end) within the word.
struct model_token {
  std::int32_t id;
  std::uint32_t begin;
  std::uint32_t end;
};

/// Tokens of one text: ids with their offsets into it and the word each came from (the pre-tokenizer's pieces,
/// numbered from 0 in each encoded text, as Hugging Face's word_ids()). Appending encodes keep growing it; clear()
/// reuses memory.
struct token_sequence {
  std::vector<std::int32_t> ids;
  std::vector<text_span> offsets;       // code points of the original text
  std::vector<text_span> byte_offsets;  // bytes of the original text
  std::vector<std::uint32_t> words;     // word index within its text

  std::size_t size() const noexcept { return ids.size(); }
  bool empty() const noexcept { return ids.empty(); }
  void clear() noexcept { truncate(0); }
  /// Keeps the first n tokens.
  void truncate(std::size_t n) {
    ids.resize(n);
    offsets.resize(n);
    byte_offsets.resize(n);
    words.resize(n);
  }
  void push_back(std::int32_t id, text_span chars, text_span bytes, std::uint32_t word) {
    ids.push_back(id);
    offsets.push_back(chars);
    byte_offsets.push_back(bytes);
    words.push_back(word);
  }
  /// A token that is a word of its own.
  void push_back(std::int32_t id, text_span chars, text_span bytes) {
    push_back(id, chars, bytes, words.empty() ? 0 : words.back() + 1);
  }
};

}  // namespace cputrain::text
