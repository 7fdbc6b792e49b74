// cputrain::text::unigram_tokenizer — XLM-RoBERTa's tokenizer (SentencePiece Unigram) as Hugging Face's
// tokenizer.json sets it up: added tokens found in the raw text first (with the whitespace lstrip/rstrip takes),
// the normalizers (SentencePiece's Precompiled rules, Strip, Replace, or any other) on each stretch between them,
// then added tokens marked `normalized` found in the result, the pre-tokenizers' words (Metaspace's, or any other
// chain's), and the Unigram model on each word. Offsets (code points and bytes of the original
// text) follow the normalizers' alignments as the reference's do; each piece is a word. Thread-safe: encode() is
// const.
#pragma once

#include "cputrain/text/char_positions.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/added_tokens.hpp"
#include "cputrain/text/metaspace.hpp"
#include "cputrain/text/normalized_text.hpp"
#include "cputrain/text/normalizer_steps.hpp"
#include "cputrain/text/pre_tokenized_text.hpp"
#include "cputrain/text/pre_tokenizer_steps.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/token_sequence.hpp"
#include "cputrain/text/unigram_model.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

class unigram_tokenizer {
 public:
  unigram_tokenizer(std::shared_ptr<const unigram_model> model, normalizer_chain normalizer,
                    pre_tokenizer_chain pre_tokenizer, const std::vector<added_token>& added)
      : model_(std::move(model)), normalizer_(std::move(normalizer)), pre_tokenizer_(std::move(pre_tokenizer)),
        raw_added_(only(added, false)), normalized_added_(only(added, true)) {}

  [[nodiscard]] const unigram_model& model() const noexcept { return *model_; }
  [[nodiscard]] const normalizer_chain& normalizer() const noexcept { return normalizer_; }
  [[nodiscard]] const pre_tokenizer_chain& pre_tokenizer() const noexcept { return pre_tokenizer_; }
  /// Every added token, those matched in the raw text first.
  [[nodiscard]] std::vector<added_token> added_tokens() const {
    auto all = raw_added_.tokens();
    all.insert(all.end(), normalized_added_.tokens().begin(), normalized_added_.tokens().end());
    return all;
  }

  /// The id of `token`: an added token's, else the model's.
  [[nodiscard]] std::optional<std::int32_t> find(std::string_view token) const {
    for (const auto* m : {&raw_added_, &normalized_added_})
      for (const auto& t : m->tokens())
        if (t.content == token) return t.id;
    return model_->find(token);
  }
  /// The token `id` stands for: an added token's content, else the model's token.
  [[nodiscard]] std::optional<std::string> token(std::int32_t id) const {
    for (const auto* m : {&raw_added_, &normalized_added_})
      for (const auto& t : m->tokens())
        if (t.id == id) return t.content;
    if (id >= 0 && static_cast<std::size_t>(id) < model_->size()) return model_->vocab()[static_cast<std::size_t>(id)].first;
    return std::nullopt;
  }
  /// One past the largest id the model or an added token gives (Hugging Face's len(tokenizer)).
  [[nodiscard]] std::size_t id_count() const noexcept {
    std::size_t n = model_->size();
    for (const auto* m : {&raw_added_, &normalized_added_})
      for (const auto& t : m->tokens()) n = std::max(n, static_cast<std::size_t>(t.id) + 1);
    return n;
  }

  /// Appends the tokens of `text` (no special tokens added) to `out`. Throws text_error for invalid UTF-8 or a text
  /// of 4 GiB or more.
  void encode(std::string_view text, token_sequence& out) const;

  token_sequence encode(std::string_view text) const {
    token_sequence out;
    encode(text, out);
    return out;
  }

 private:
  static added_token_matcher only(const std::vector<added_token>& added, bool normalized) {
    std::vector<added_token> kept;
    for (const auto& t : added)
      if (t.normalized == normalized) kept.push_back(t);
    return added_token_matcher(std::move(kept));
  }

  // One normalized stretch between raw added tokens (it starts at byte `shift` of the text): the added tokens its
  // normalized form has, and the words of the rest.
  // `normalized` is scratch: the words are cut in place when no added token splits it.
  void encode_normalized(normalized_text& normalized, std::uint32_t shift, const char_positions& positions,
                         token_sequence& out, std::uint32_t& word) const;

  // Whether `t` (of the stretch at byte `shift`) begins the whole text: Metaspace's prepend_scheme "first".
  static bool starts_text(const normalized_text& t, std::uint32_t shift) noexcept {
    return shift + (t.alignments().empty() ? 0 : t.alignments()[0].begin) == 0;
  }

  void encode_words(normalized_text& part, std::uint32_t shift, bool at_text_start, const char_positions& positions,
                    token_sequence& out, std::uint32_t& word) const;

  static void push(std::int32_t id, text_span original, std::uint32_t shift, const char_positions& positions,
                   token_sequence& out, std::uint32_t word) {
    const std::uint32_t from = shift + original.begin, to = shift + original.end;
    out.push_back(id, positions.chars(from, to), {from, to}, word);
  }

  std::shared_ptr<const unigram_model> model_;
  normalizer_chain normalizer_;
  pre_tokenizer_chain pre_tokenizer_;
  added_token_matcher raw_added_;
  added_token_matcher normalized_added_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void unigram_tokenizer::encode(std::string_view text, token_sequence& out) const {
  check_tokenizer_input(text);
  thread_local std::vector<text_segment> segments;
  segments.clear();
  raw_added_.split(text, segments);
  const char_positions positions(text);
  std::uint32_t word = 0;
  for (const auto& s : segments) {
    if (s.token >= 0) {
      out.push_back(raw_added_.tokens()[static_cast<std::size_t>(s.token)].id,
                    positions.chars(s.outer_begin, s.outer_end), {s.outer_begin, s.outer_end}, word++);
      continue;
    }
    thread_local normalized_text normalized;
    normalized.assign(text.substr(s.begin, s.end - s.begin));
    normalizer_.apply(normalized);
    encode_normalized(normalized, s.begin, positions, out, word);
  }
}

CPUTRAIN_DECL void unigram_tokenizer::encode_normalized(normalized_text& normalized, std::uint32_t shift,
                                                     const char_positions& positions, token_sequence& out,
                                                     std::uint32_t& word) const {
  thread_local std::vector<text_segment> parts;
  parts.clear();
  if (normalized.empty()) return;
  normalized_added_.split(normalized.str(), parts);
  for (const auto& p : parts) {
    if (p.token >= 0) {
      const text_span o = normalized.original(p.outer_begin, p.outer_end);
      push(normalized_added_.tokens()[static_cast<std::size_t>(p.token)].id, o, shift, positions, out, word++);
      continue;
    }
    if (parts.size() == 1) {
      encode_words(normalized, shift, starts_text(normalized, shift), positions, out, word);
      continue;
    }
    normalized_text part = normalized.slice(p.begin, p.end);
    encode_words(part, shift, starts_text(part, shift), positions, out, word);
  }
}

CPUTRAIN_DECL void unigram_tokenizer::encode_words(normalized_text& part, std::uint32_t shift, bool at_text_start,
                                                const char_positions& positions, token_sequence& out,
                                                std::uint32_t& word) const {
  thread_local std::vector<unigram_token> tokens;
  const auto tokenize = [&](const normalized_text& text, std::size_t begin, std::size_t end) {
    tokens.clear();
    model_->tokenize(std::string_view(text.str()).substr(begin, end - begin), tokens);
    for (const auto& t : tokens) push(t.id, text.original(begin + t.begin, begin + t.end), shift, positions, out, word);
    ++word;
  };
  if (const metaspace_options* metaspace = pre_tokenizer_.metaspace_only()) {  // cut in place, no copies
    thread_local byte_ranges pieces;
    pieces.clear();
    metaspace_split(*metaspace, part, at_text_start, pieces);
    for (const auto& [begin, end] : pieces) tokenize(part, begin, end);
    return;
  }
  thread_local pre_tokenized_text words;
  words.assign(part);
  pre_tokenizer_.apply(words, shift);
  for (std::size_t i = 0; i < words.size(); ++i) tokenize(words[i], 0, words[i].str().size());
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
