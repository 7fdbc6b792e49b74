// cputrain::text::tokenizer_pipeline — what Hugging Face's tokenizer does around its model (Unigram, WordPiece) as
// a tokenizer.json sets it up: added tokens found in the raw text first (with the whitespace lstrip/rstrip takes),
// the normalizers on each stretch between them, then added tokens marked `normalized` found in the result, the
// pre-tokenizers' words, and the model on each word. Offsets (code points and bytes of the original text) follow
// the normalizers' alignments as the reference's do; each added token and each word is a word of its own.
// Thread-safe: encode() is const and keeps its scratch space per thread.
#pragma once

#include "cputrain/text/added_tokens.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/text/char_positions.hpp"
#include "cputrain/text/metaspace.hpp"
#include "cputrain/text/normalized_text.hpp"
#include "cputrain/text/normalizer_steps.hpp"
#include "cputrain/text/pre_tokenized_text.hpp"
#include "cputrain/text/pre_tokenizer_steps.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/token_sequence.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

class tokenizer_pipeline {
 public:
  tokenizer_pipeline(normalizer_chain normalizer, pre_tokenizer_chain pre_tokenizer,
                     const std::vector<added_token>& added)
      : normalizer_(std::move(normalizer)), pre_tokenizer_(std::move(pre_tokenizer)), added_(added) {}

  [[nodiscard]] const normalizer_chain& normalizer() const noexcept { return normalizer_; }
  [[nodiscard]] const pre_tokenizer_chain& pre_tokenizer() const noexcept { return pre_tokenizer_; }
  [[nodiscard]] const added_token_sets& added() const noexcept { return added_; }

  /// Appends the tokens of `text` (no special tokens added) to `out`; `model.tokenize(word, tokens)` appends the
  /// model_tokens of each word. Throws text_error for invalid UTF-8 or a text of 4 GiB or more.
  template <class Model>
  void encode(std::string_view text, const Model& model, token_sequence& out) const {
    check_tokenizer_input(text);
    thread_local std::vector<text_segment> segments;
    segments.clear();
    added_.raw().split(text, segments);
    const char_positions positions(text);
    std::uint32_t word = 0;
    for (const auto& s : segments) {
      if (s.token >= 0) {
        out.push_back(added_.raw().tokens()[static_cast<std::size_t>(s.token)].id,
                      positions.chars(s.outer_begin, s.outer_end), {s.outer_begin, s.outer_end}, word++);
        continue;
      }
      thread_local normalized_text normalized;
      normalized.assign(text.substr(s.begin, s.end - s.begin));
      normalizer_.apply(normalized);
      encode_normalized(normalized, stretch<Model>{model, s.begin, positions, out, word});
    }
  }

 private:
  // Where the tokens of one normalized stretch go: it starts at byte `shift` of the text.
  template <class Model>
  struct stretch {
    const Model& model;
    std::uint32_t shift;
    const char_positions& positions;
    token_sequence& out;
    std::uint32_t& word;

    void push(std::int32_t id, text_span original) const {
      const std::uint32_t from = shift + original.begin, to = shift + original.end;
      out.push_back(id, positions.chars(from, to), {from, to}, word);
    }
    // Bytes [begin, end) of `text` as one word.
    void tokenize(const normalized_text& text, std::size_t begin, std::size_t end) const {
      thread_local std::vector<model_token> tokens;
      tokens.clear();
      model.tokenize(std::string_view(text.str()).substr(begin, end - begin), tokens);
      for (const auto& t : tokens) push(t.id, text.original(begin + t.begin, begin + t.end));
      ++word;
    }
    // Whether `t` begins the whole text: Metaspace's prepend_scheme "first".
    bool starts_text(const normalized_text& t) const noexcept {
      return shift + (t.alignments().empty() ? 0 : t.alignments()[0].begin) == 0;
    }
  };

  // The added tokens the stretch's normalized form has, and the words of the rest. `normalized` is scratch: the
  // words are cut in place when no added token splits it.
  template <class Model>
  void encode_normalized(normalized_text& normalized, const stretch<Model>& to) const {
    thread_local std::vector<text_segment> parts;
    parts.clear();
    if (normalized.empty()) return;
    added_.normalized().split(normalized.str(), parts);
    for (const auto& p : parts) {
      if (p.token >= 0) {
        to.push(added_.normalized().tokens()[static_cast<std::size_t>(p.token)].id,
                normalized.original(p.outer_begin, p.outer_end));
        ++to.word;
      } else if (parts.size() == 1) {
        encode_words(normalized, to);
      } else {
        normalized_text part = normalized.slice(p.begin, p.end);
        encode_words(part, to);
      }
    }
  }

  template <class Model>
  void encode_words(normalized_text& part, const stretch<Model>& to) const {
    if (const metaspace_options* metaspace = pre_tokenizer_.metaspace_only()) {  // cut in place, no copies
      thread_local byte_ranges pieces;
      pieces.clear();
      metaspace_split(*metaspace, part, to.starts_text(part), pieces);
      for (const auto& [begin, end] : pieces) to.tokenize(part, begin, end);
      return;
    }
    thread_local pre_tokenized_text words;
    words.assign(part);
    pre_tokenizer_.apply(words, to.shift);
    for (std::size_t i = 0; i < words.size(); ++i) to.tokenize(words[i], 0, words[i].str().size());
  }

  normalizer_chain normalizer_;
  pre_tokenizer_chain pre_tokenizer_;
  added_token_sets added_;
};

}  // namespace cputrain::text
