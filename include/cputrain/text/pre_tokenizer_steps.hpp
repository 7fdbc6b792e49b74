// cputrain::text::pre_tokenizer_chain — the pre-tokenizers a tokenizer.json lists (BertPreTokenizer, Whitespace,
// WhitespaceSplit, Punctuation, Digits, Split, CharDelimiterSplit, UnicodeScripts, Metaspace, in a Sequence or
// alone), applied in order to a pre_tokenized_text so that the words and their alignments come out as Hugging
// Face's pre-tokenizers draw them. Split takes a literal string pattern; a regex is refused when the file is read.
#pragma once

#include "cputrain/text/pre_tokenized_text.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/char_classes.hpp"
#include "cputrain/text/metaspace.hpp"
#include "cputrain/text/normalized_text.hpp"
#include "cputrain/text/pre_tokenizer_char_classes.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

struct bert_pre_tokenizer_step {};  // whitespace removed, then each punctuation character a word
struct whitespace_step {};          // runs of word characters, and runs of other non-space characters
struct whitespace_split_step {};    // whitespace removed
struct punctuation_step {
  split_behavior behavior = split_behavior::isolated;
};
struct digits_step {
  bool individual_digits = false;  // each digit a word, else each run of digits
};
struct char_delimiter_step {
  char32_t delimiter = ' ';
};
/// Split with a literal pattern (Hugging Face matches it as an escaped regex: non-overlapping, from the left).
struct split_step {
  std::string pattern;
  split_behavior behavior = split_behavior::removed;
  bool invert = false;  // the matches are the words and the rest the delimiters
};
struct unicode_scripts_step {};  // a word wherever the script changes; spaces join either side

class pre_tokenizer_chain {
 public:
  using step = std::variant<metaspace_options, bert_pre_tokenizer_step, whitespace_step, whitespace_split_step,
                            punctuation_step, digits_step, char_delimiter_step, split_step, unicode_scripts_step>;

  pre_tokenizer_chain() = default;
  explicit pre_tokenizer_chain(std::vector<step> steps) : steps_(std::move(steps)) {}

  [[nodiscard]] const std::vector<step>& steps() const noexcept { return steps_; }
  /// The options of a chain that is Metaspace alone (SentencePiece's tokenizers), for its in-place fast path.
  [[nodiscard]] const metaspace_options* metaspace_only() const noexcept {
    return steps_.size() == 1 ? std::get_if<metaspace_options>(&steps_[0]) : nullptr;
  }
  /// The first Metaspace step's options, if any (the decoder a tokenizer.json writes back follows it).
  [[nodiscard]] const metaspace_options* metaspace() const noexcept {
    for (const auto& s : steps_)
      if (const auto* m = std::get_if<metaspace_options>(&s)) return m;
    return nullptr;
  }

  /// Cuts `text` into words. `shift`: where the text's original bytes start in the whole input (Metaspace's
  /// prepend_scheme "first" prepends only to a piece that starts the input).
  void apply(pre_tokenized_text& text, std::uint32_t shift) const {
    for (const auto& s : steps_) std::visit([&](const auto& one) { apply_step(one, text, shift); }, s);
  }

 private:
  static void apply_step(const metaspace_options& m, pre_tokenized_text& text, std::uint32_t shift);
  static void apply_step(bert_pre_tokenizer_step, pre_tokenized_text& text, std::uint32_t);
  static void apply_step(whitespace_step, pre_tokenized_text& text, std::uint32_t);
  static void apply_step(whitespace_split_step, pre_tokenized_text& text, std::uint32_t);
  static void apply_step(const punctuation_step& p, pre_tokenized_text& text, std::uint32_t);
  static void apply_step(const digits_step& d, pre_tokenized_text& text, std::uint32_t);
  static void apply_step(const char_delimiter_step& c, pre_tokenized_text& text, std::uint32_t);
  static void apply_step(const split_step& s, pre_tokenized_text& text, std::uint32_t);
  static void apply_step(unicode_scripts_step, pre_tokenized_text& text, std::uint32_t);

  std::vector<step> steps_;
};

namespace detail {

/// Each character `is_delimiter` is true for as a delimiter of its own, as Hugging Face matches a character
/// predicate.
template <class IsDelimiter>
void find_delimiter_chars(const normalized_text& piece, std::vector<split_part>& parts, IsDelimiter is_delimiter) {
  const std::string& s = piece.str();
  std::size_t last = 0;
  for (std::size_t pos = 0; pos < s.size();) {
    char32_t cp = 0;
    const std::size_t n = decode_utf8(s, pos, cp);
    if (is_delimiter(cp)) {
      if (last < pos) parts.push_back({last, pos, false});
      parts.push_back({pos, pos + n, true});
      last = pos + n;
    }
    pos += n;
  }
  if (last < s.size()) parts.push_back({last, s.size(), false});
}

}  // namespace detail

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void pre_tokenizer_chain::apply_step(const metaspace_options& m, pre_tokenized_text& text,
                                                   std::uint32_t shift) {
  text.cut([&](normalized_text& piece, byte_ranges& ranges) {
    const bool at_text_start = shift + (piece.alignments().empty() ? 0 : piece.alignments()[0].begin) == 0;
    metaspace_split(m, piece, at_text_start, ranges);
  });
}

CPUTRAIN_DECL void pre_tokenizer_chain::apply_step(bert_pre_tokenizer_step, pre_tokenized_text& text,
                                                   std::uint32_t shift) {
  apply_step(whitespace_split_step{}, text, shift);
  apply_step(punctuation_step{}, text, shift);
}

CPUTRAIN_DECL void pre_tokenizer_chain::apply_step(whitespace_step, pre_tokenized_text& text, std::uint32_t) {
  // Hugging Face's regex \w+|[^\w\s]+, inverted and removed: runs of word characters and runs of other characters
  // are the words, whitespace goes.
  text.split(
      [](const normalized_text& piece, std::vector<split_part>& parts) {
        const std::string& s = piece.str();
        int run = -1;  // the kind of the last part: 0 whitespace, 1 word characters, 2 others
        for (std::size_t pos = 0; pos < s.size();) {
          char32_t cp = 0;
          const std::size_t n = decode_utf8(s, pos, cp);
          const int kind = is_word_char(cp) ? 1 : is_bert_whitespace(cp) ? 0 : 2;
          if (kind == run) parts.back().end = pos + n;
          else parts.push_back({pos, pos + n, kind == 0});
          run = kind;
          pos += n;
        }
      },
      split_behavior::removed);
}

CPUTRAIN_DECL void pre_tokenizer_chain::apply_step(whitespace_split_step, pre_tokenized_text& text, std::uint32_t) {
  text.split([](const normalized_text& piece,
                std::vector<split_part>& parts) { detail::find_delimiter_chars(piece, parts, is_bert_whitespace); },
             split_behavior::removed);
}

CPUTRAIN_DECL void pre_tokenizer_chain::apply_step(const punctuation_step& p, pre_tokenized_text& text,
                                                   std::uint32_t) {
  text.split([](const normalized_text& piece,
                std::vector<split_part>& parts) { detail::find_delimiter_chars(piece, parts, is_bert_punctuation); },
             p.behavior);
}

CPUTRAIN_DECL void pre_tokenizer_chain::apply_step(const digits_step& d, pre_tokenized_text& text, std::uint32_t) {
  text.split([](const normalized_text& piece,
                std::vector<split_part>& parts) { detail::find_delimiter_chars(piece, parts, is_numeric_char); },
             d.individual_digits ? split_behavior::isolated : split_behavior::contiguous);
}

CPUTRAIN_DECL void pre_tokenizer_chain::apply_step(const char_delimiter_step& c, pre_tokenized_text& text,
                                                   std::uint32_t) {
  const char32_t delimiter = c.delimiter;
  text.split(
      [delimiter](const normalized_text& piece, std::vector<split_part>& parts) {
        detail::find_delimiter_chars(piece, parts, [delimiter](char32_t cp) { return cp == delimiter; });
      },
      split_behavior::removed);
}

CPUTRAIN_DECL void pre_tokenizer_chain::apply_step(const split_step& split, pre_tokenized_text& text, std::uint32_t) {
  text.split(
      [&split](const normalized_text& piece, std::vector<split_part>& parts) {
        const std::string& s = piece.str();
        std::size_t last = 0;
        for (std::size_t at = s.find(split.pattern); at != std::string::npos;
             at = s.find(split.pattern, at + split.pattern.size())) {
          if (last < at) parts.push_back({last, at, split.invert});
          parts.push_back({at, at + split.pattern.size(), !split.invert});
          last = at + split.pattern.size();
        }
        if (last < s.size()) parts.push_back({last, s.size(), split.invert});
      },
      split.behavior);
}

CPUTRAIN_DECL void pre_tokenizer_chain::apply_step(unicode_scripts_step, pre_tokenized_text& text, std::uint32_t) {
  // A new piece wherever a character's script differs from the last script seen; characters of no script (the space
  // among them) neither start a piece nor count as the last script. As there, the pieces start at the first
  // character of a script: whatever comes before it (leading spaces) is dropped, and so is a piece of no script.
  text.cut([](normalized_text& piece, byte_ranges& ranges) {
    const std::string& s = piece.str();
    int last = -1;
    std::size_t begin = 0;
    for (std::size_t pos = 0; pos < s.size();) {
      char32_t cp = 0;
      const std::size_t n = decode_utf8(s, pos, cp);
      const int script = unicode_script(cp);
      if (script >= 0 && script != last) {
        if (last >= 0) ranges.emplace_back(begin, pos);
        begin = pos;
        last = script;
      }
      pos += n;
    }
    if (last >= 0) ranges.emplace_back(begin, s.size());
  });
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
