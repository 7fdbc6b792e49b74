// cputrain::text::wordpiece_model — Hugging Face's WordPiece model on one word, for any tokenizer.json that names
// it: the longest vocabulary token that starts the word, then the longest continuation token (the prefix, "##" in
// BERT's files, followed by the next bytes) from there on; a word with a character no token covers, or longer than
// max_input_chars_per_word characters, is one unknown token. BERT's own files keep bert_tokenizer.hpp's one-pass
// path; this one serves the files whose normalizer, pre-tokenizer, prefix or added tokens differ.
#pragma once

#include "cputrain/text/byte_trie.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/token_sequence.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

struct wordpiece_options {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
};

class wordpiece_model {
 public:
  /// `tokens` in id order. Throws text_error naming `source` when the unknown token is not among them.
  wordpiece_model(std::vector<std::string> tokens, wordpiece_options options, const std::string& source);

  [[nodiscard]] const std::vector<std::string>& tokens() const noexcept { return tokens_; }
  [[nodiscard]] std::size_t size() const noexcept { return tokens_.size(); }
  /// The token with id `id` (below size()).
  [[nodiscard]] const std::string& token(std::int32_t id) const noexcept {
    return tokens_[static_cast<std::size_t>(id)];
  }
  [[nodiscard]] const wordpiece_options& options() const noexcept { return options_; }
  [[nodiscard]] std::int32_t unk_id() const noexcept { return unk_id_; }
  [[nodiscard]] std::optional<std::int32_t> find(std::string_view token) const noexcept { return words_.find(token); }

  /// Appends the tokens of `word` (bytes within it) to `out`.
  void tokenize(std::string_view word, std::vector<model_token>& out) const;

 private:
  // The id and end of the longest token of `trie` that `word` has at byte `start`; {-1, start} where none.
  static std::pair<std::int32_t, std::size_t> longest_at(const byte_trie& trie, std::span<const std::int32_t> ids,
                                                         std::string_view word, std::size_t start) noexcept {
    std::pair<std::int32_t, std::size_t> best{-1, start};
    std::uint32_t node = byte_trie::root;
    for (std::size_t pos = start; pos < word.size(); ++pos) {
      node = trie.child(node, static_cast<unsigned char>(word[pos]));
      if (node == byte_trie::no_node) break;
      if (const std::int32_t v = trie.value(node); v >= 0)
        best = {ids.empty() ? v : ids[static_cast<std::size_t>(v)], pos + 1};
    }
    return best;
  }

  std::vector<std::string> tokens_;
  wordpiece_options options_;
  std::int32_t unk_id_ = 0;
  byte_trie words_;               // every token, its value its id
  byte_trie continuations_;       // the prefixed tokens without their prefix, valued by index into continuation_ids_
  std::vector<std::int32_t> continuation_ids_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL wordpiece_model::wordpiece_model(std::vector<std::string> tokens, wordpiece_options options,
                                               const std::string& source)
    : tokens_(std::move(tokens)), options_(std::move(options)) {
  // Keys must stay alive while the tries are built: views into tokens_.
  words_ = byte_trie(tokens_.size(), [&](std::size_t i) { return std::string_view(tokens_[i]); },
                     byte_trie::repeated_key::keeps_last);
  const std::string& prefix = options_.continuing_subword_prefix;
  std::vector<std::string_view> rests;
  for (std::size_t id = 0; id < tokens_.size(); ++id) {
    if (tokens_[id].size() > prefix.size() && tokens_[id].starts_with(prefix)) {
      rests.push_back(std::string_view(tokens_[id]).substr(prefix.size()));
      continuation_ids_.push_back(static_cast<std::int32_t>(id));
    }
  }
  continuations_ =
      byte_trie(rests.size(), [&](std::size_t i) { return rests[i]; }, byte_trie::repeated_key::keeps_last);
  const auto unk = words_.find(options_.unk_token);
  if (!unk)
    throw text_error(source + ": the unknown token \"" + options_.unk_token + "\" is not in the vocabulary");
  unk_id_ = *unk;
}

CPUTRAIN_DECL void wordpiece_model::tokenize(std::string_view word, std::vector<model_token>& out) const {
  const auto whole_unknown = [&](std::size_t first) {
    out.resize(first);
    out.push_back({unk_id_, 0, static_cast<std::uint32_t>(word.size())});
  };
  const std::size_t first = out.size();
  if (count_code_points(word) > options_.max_input_chars_per_word) return whole_unknown(first);
  for (std::size_t start = 0; start < word.size();) {
    const auto [id, end] = start == 0 ? longest_at(words_, {}, word, start)
                                      : longest_at(continuations_, continuation_ids_, word, start);
    if (id < 0) return whole_unknown(first);
    out.push_back({id, static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(end)});
    start = end;
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
