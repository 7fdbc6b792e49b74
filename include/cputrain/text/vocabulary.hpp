// cputrain::text::vocabulary — a WordPiece vocab.txt (line number = id), read as Hugging Face's Rust tokenizer
// reads it. Lookups take string_views and keep "##" continuation pieces in their own table, so the tokenizer
// never builds strings; [UNK], [CLS], [SEP] and [PAD] must be present.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/char_classes.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

class vocabulary {
 public:
  static constexpr std::string_view continuation_prefix = "##";

  /// Builds a vocabulary from tokens in id order; `source` names it in messages.
  explicit vocabulary(std::vector<std::string> tokens, std::string source = "vocabulary");

  /// Reads vocab.txt. Throws text_error naming the file and the line for an unreadable file, invalid UTF-8 or a
  /// missing special token.
  static vocabulary load(const std::filesystem::path& file);

  /// Parses the contents of a vocab.txt; `source` names it in messages.
  static vocabulary parse(std::string_view text, std::string source);

  std::size_t size() const noexcept { return tokens_.size(); }
  const std::string& source() const noexcept { return source_; }

  /// The id of a whole token as written in vocab.txt ("##ing" included).
  std::optional<std::int32_t> find(std::string_view token) const {
    if (token.size() > continuation_prefix.size() && token.starts_with(continuation_prefix))
      return lookup(continuations_, token.substr(continuation_prefix.size()));
    return lookup(words_, token);
  }
  /// The id of a word-initial piece.
  std::optional<std::int32_t> find_word_start(std::string_view piece) const { return lookup(words_, piece); }
  /// The id of "##" + piece.
  std::optional<std::int32_t> find_continuation(std::string_view piece) const {
    return lookup(continuations_, piece);
  }

  /// The token with this id; throws text_error when the id is out of range.
  const std::string& token(std::int32_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size())
      throw text_error(source_ + ": token id " + std::to_string(id) + " is outside the vocabulary of " +
                       std::to_string(tokens_.size()));
    return tokens_[static_cast<std::size_t>(id)];
  }

  std::int32_t unk_id() const noexcept { return unk_; }
  std::int32_t cls_id() const noexcept { return cls_; }
  std::int32_t sep_id() const noexcept { return sep_; }
  std::int32_t pad_id() const noexcept { return pad_; }
  std::optional<std::int32_t> mask_id() const noexcept { return mask_; }

  /// Longest piece in code points, without "##": the WordPiece search never tries longer substrings.
  std::size_t max_piece_chars() const noexcept { return max_piece_chars_; }

 private:
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  using table = std::unordered_map<std::string, std::int32_t, string_hash, std::equal_to<>>;

  static std::optional<std::int32_t> lookup(const table& t, std::string_view piece) {
    const auto it = t.find(piece);
    if (it == t.end()) return std::nullopt;
    return it->second;
  }

  // Rust's str::trim_end: drops trailing White_Space, which also takes the '\r' of CRLF files.
  static std::string_view trim_end(std::string_view line) {
    while (!line.empty()) {
      const std::size_t start = previous_char_start(line, line.size());
      char32_t cp = 0;
      if (decode_utf8(line, start, cp) == 0 || !is_bert_whitespace(cp)) break;
      line.remove_suffix(line.size() - start);
    }
    return line;
  }

  std::int32_t require(std::string_view token) const {
    const auto id = find(token);
    if (!id)
      throw text_error(source_ + ": the vocabulary has no " + std::string(token) +
                       " token (a BERT vocab.txt lists [PAD], [UNK], [CLS], [SEP] and [MASK])");
    return *id;
  }

  std::vector<std::string> tokens_;
  std::string source_;
  table words_;
  table continuations_;
  std::size_t max_piece_chars_ = 0;
  std::int32_t unk_ = 0, cls_ = 0, sep_ = 0, pad_ = 0;
  std::optional<std::int32_t> mask_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL vocabulary::vocabulary(std::vector<std::string> tokens, std::string source)
    : tokens_(std::move(tokens)), source_(std::move(source)) {
  if (tokens_.empty()) throw text_error(source_ + ": the vocabulary is empty");
  if (tokens_.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw text_error(source_ + ": more tokens than 32-bit ids can number");
  words_.reserve(tokens_.size());
  for (std::size_t id = 0; id < tokens_.size(); ++id) {
    const std::string& token = tokens_[id];
    std::string_view piece = token;
    auto* table = &words_;
    if (piece.size() > continuation_prefix.size() && piece.starts_with(continuation_prefix)) {
      piece.remove_prefix(continuation_prefix.size());
      table = &continuations_;
    }
    (*table)[std::string(piece)] = static_cast<std::int32_t>(id);
    max_piece_chars_ = std::max(max_piece_chars_, count_code_points(piece));
  }
  unk_ = require("[UNK]");
  cls_ = require("[CLS]");
  sep_ = require("[SEP]");
  pad_ = require("[PAD]");
  mask_ = find("[MASK]");
}

CPUTRAIN_DECL vocabulary vocabulary::load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw text_error(file.string() + ": cannot open the vocabulary: " + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw text_error(file.string() + ": cannot read the vocabulary");
  return parse(bytes.str(), file.string());
}

CPUTRAIN_DECL vocabulary vocabulary::parse(std::string_view text, std::string source) {
  std::vector<std::string> tokens;
  std::size_t line_start = 0;
  while (line_start < text.size()) {
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    if (const std::size_t bad = find_invalid_utf8(line); bad != std::string_view::npos)
      throw text_error(source + ": line " + std::to_string(tokens.size() + 1) + ": invalid UTF-8 at byte " +
                       std::to_string(line_start + bad) + " of the file");
    tokens.emplace_back(trim_end(line));
    line_start = line_end + 1;
  }
  return vocabulary(std::move(tokens), std::move(source));
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
