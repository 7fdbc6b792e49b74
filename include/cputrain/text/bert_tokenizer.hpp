// cputrain::text::bert_tokenizer — BERT's WordPiece tokenizer, giving the same ids and offsets (in code points
// and in bytes) as Hugging Face's fast BertTokenizer for the same vocab.txt and settings, in one pass over the
// UTF-8 input. Thread-safe: encode() is const and keeps its scratch space per thread.
#pragma once

#include "cputrain/text/vocabulary.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <utf8proc.h>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/char_classes.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/token_sequence.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

/// The switches of BertTokenizerFast (tokenizer_config.json names in comments); the defaults are
/// bert-base-uncased's.
struct bert_tokenizer_options {
  bool lower_case = true;                  // do_lower_case
  std::optional<bool> strip_accents;       // strip_accents; unset: follows lower_case
  bool handle_chinese_chars = true;        // tokenize_chinese_chars
  bool clean_text = true;
  std::size_t max_input_chars_per_word = 100;
  bool match_special_tokens = true;        // [CLS] etc. written in the text become their ids

  bool strips_accents() const noexcept { return strip_accents.value_or(lower_case); }
};

class bert_tokenizer {
 public:
  explicit bert_tokenizer(vocabulary vocab, bert_tokenizer_options options = {});

  const vocabulary& vocab() const noexcept { return vocab_; }
  const bert_tokenizer_options& options() const noexcept { return options_; }

  /// Appends the tokens of `text` (no [CLS]/[SEP] added) to `out`. Throws text_error for invalid UTF-8 or a
  /// text of 4 GiB or more.
  void encode(std::string_view text, token_sequence& out) const;

  token_sequence encode(std::string_view text) const {
    token_sequence out;
    encode(text, out);
    return out;
  }

 private:
  struct special_token {
    std::string text;
    std::int32_t id;
  };

  // Where a normalised character came from in the original text.
  struct origin {
    std::uint32_t char_index;
    std::uint32_t byte;
    std::uint32_t bytes;
  };

  // The word being collected: its normalised UTF-8 and, per character, where it starts in `bytes` and where it
  // came from (several normalised characters can share one origin: an "ﬃ" ligature, a Hangul syllable).
  struct word_state {
    std::string bytes;
    std::vector<std::uint32_t> starts;
    std::vector<origin> origins;
    std::uint32_t index = 0;  // this word's number in the text (clear() keeps it)
    void clear() noexcept {
      bytes.clear();
      starts.clear();
      origins.clear();
    }
    bool empty() const noexcept { return origins.empty(); }
    void push(char32_t cp, const origin& from) {
      starts.push_back(static_cast<std::uint32_t>(bytes.size()));
      origins.push_back(from);
      append_utf8(bytes, cp);
    }
  };

  static word_state& scratch() {
    thread_local word_state state;
    return state;
  }

  const special_token* special_at(std::string_view text, std::size_t pos) const noexcept {
    const special_token* best = nullptr;  // longest match wins, as the reference's leftmost-longest matcher
    for (const auto& special : specials_)
      if (text.substr(pos).starts_with(special.text) && (!best || special.text.size() > best->text.size()))
        best = &special;
    return best;
  }

  // Adds the normalised form of one kept character to the word, splitting off punctuation.
  void normalize_into(char32_t cp, const origin& from, word_state& word, token_sequence& out) const {
    if (cp < 0x80) {  // ASCII: no decomposition, simple lower case
      if (options_.lower_case && cp >= 'A' && cp <= 'Z') cp += 'a' - 'A';
      add_char(cp, from, word, out);
      return;
    }
    std::array<utf8proc_int32_t, 8> parts{};
    std::size_t count = 1;
    parts[0] = static_cast<utf8proc_int32_t>(cp);
    if (options_.strips_accents()) {
      int boundclass = 0;
      const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), parts.data(),
                                             static_cast<utf8proc_ssize_t>(parts.size()), UTF8PROC_DECOMPOSE,
                                             &boundclass);
      count = n > 0 && static_cast<std::size_t>(n) <= parts.size() ? static_cast<std::size_t>(n) : 1;
      if (n <= 0 || static_cast<std::size_t>(n) > parts.size()) parts[0] = static_cast<utf8proc_int32_t>(cp);
    }
    for (std::size_t i = 0; i < count; ++i) {
      const auto part = static_cast<char32_t>(parts[i]);
      if (options_.strips_accents() && is_bert_nonspacing_mark(part)) continue;
      if (!options_.lower_case) {
        add_char(part, from, word, out);
      } else if (part == 0x130) {  // İ is the one character whose full lower case is two: i + combining dot
        add_char(U'i', from, word, out);
        add_char(0x307, from, word, out);
      } else {
        add_char(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(part))), from, word, out);
      }
    }
  }

  void add_char(char32_t cp, const origin& from, word_state& word, token_sequence& out) const {
    if (is_bert_whitespace(cp)) {
      flush(word, out);
    } else if (is_bert_punctuation(cp)) {
      flush(word, out);
      word.push(cp, from);
      flush(word, out);
    } else {
      word.push(cp, from);
    }
  }

  // Turns the collected word into WordPiece tokens and empties it.
  void flush(word_state& word, token_sequence& out) const {
    if (word.empty()) return;
    const std::size_t n = word.origins.size();
    word.starts.push_back(static_cast<std::uint32_t>(word.bytes.size()));
    const auto span_of = [&](std::size_t first, std::size_t last) {  // characters [first, last)
      const origin& a = word.origins[first];
      const origin& b = word.origins[last - 1];
      return std::pair{text_span{a.char_index, b.char_index + 1}, text_span{a.byte, b.byte + b.bytes}};
    };
    const std::size_t mark = out.size();
    bool matched = n <= options_.max_input_chars_per_word;
    for (std::size_t start = 0; matched && start < n;) {
      std::size_t end = std::min(n, start + vocab_.max_piece_chars());
      std::optional<std::int32_t> id;
      for (; end > start; --end) {
        const std::string_view piece(word.bytes.data() + word.starts[start], word.starts[end] - word.starts[start]);
        id = start == 0 ? vocab_.find_word_start(piece) : vocab_.find_continuation(piece);
        if (id) break;
      }
      if (!id) {
        matched = false;
        break;
      }
      const auto [chars, bytes] = span_of(start, end);
      out.push_back(*id, chars, bytes, word.index);
      start = end;
    }
    if (!matched) {
      out.truncate(mark);
      const auto [chars, bytes] = span_of(0, n);
      out.push_back(vocab_.unk_id(), chars, bytes, word.index);
    }
    ++word.index;
    word.clear();
  }

  vocabulary vocab_;
  bert_tokenizer_options options_;
  std::vector<special_token> specials_;
  std::array<bool, 256> special_first_bytes_{};
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL bert_tokenizer::bert_tokenizer(vocabulary vocab, bert_tokenizer_options options)
    : vocab_(std::move(vocab)), options_(options) {
  for (const std::string_view name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    if (const auto id = vocab_.find(name)) specials_.push_back({std::string(name), *id});
  for (const auto& special : specials_) special_first_bytes_[static_cast<unsigned char>(special.text[0])] = true;
}

CPUTRAIN_DECL void bert_tokenizer::encode(std::string_view text, token_sequence& out) const {
  if (text.size() >= 0xFFFFFFFFu) throw text_error("text: 4 GiB or longer; split it before tokenizing");
  word_state& word = scratch();
  word.clear();
  word.index = 0;
  std::size_t pos = 0;
  std::uint32_t char_index = 0;
  while (pos < text.size()) {
    if (options_.match_special_tokens && special_first_bytes_[static_cast<unsigned char>(text[pos])]) {
      if (const special_token* special = special_at(text, pos)) {
        flush(word, out);
        const auto length = static_cast<std::uint32_t>(special->text.size());
        const auto chars = static_cast<std::uint32_t>(count_code_points(special->text));
        out.push_back(special->id, {char_index, char_index + chars},
                      {static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(pos) + length}, word.index++);
        pos += length;
        char_index += chars;
        continue;
      }
    }
    char32_t cp = 0;
    const std::size_t length = decode_utf8(text, pos, cp);
    if (length == 0)
      throw text_error("text: invalid UTF-8 at byte " + std::to_string(pos) + " (code point " +
                       std::to_string(char_index) + ")");
    const origin from{char_index, static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(length)};
    pos += length;
    ++char_index;
    if (options_.clean_text && (cp == 0 || cp == 0xFFFD || is_bert_control(cp))) continue;
    if (is_bert_whitespace(cp)) {
      flush(word, out);
    } else if (options_.handle_chinese_chars && is_bert_chinese_char(cp)) {
      flush(word, out);
      normalize_into(cp, from, word, out);
      flush(word, out);
    } else {
      normalize_into(cp, from, word, out);
    }
  }
  flush(word, out);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
