// cputrain::text::precompiled_charsmap — SentencePiece's normalization rules (the model's precompiled_charsmap, which
// tokenizer.json's Precompiled normalizer carries): a double-array trie from UTF-8 sequences to replacement strings.
// normalize() applies it as Hugging Face does, which is not how SentencePiece does: each grapheme cluster shorter
// than 6 bytes is looked up whole and replaced by the shortest rule that matches its start; otherwise each
// character is looked up alone. Alignments follow the reference's, so offsets equal its offsets.
#pragma once

#include "cputrain/text/utf8.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <utf8proc.h>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/normalized_text.hpp"
#include "cputrain/text/text_error.hpp"

namespace cputrain::text {

class precompiled_charsmap {
 public:
  /// `blob`: [u32 trie size in bytes, little-endian][trie units, u32 each][replacement strings, NUL-terminated].
  /// Throws text_error naming `source` when the blob is cut short, its trie empty or its strings not UTF-8.
  precompiled_charsmap(std::string_view blob, const std::string& source);

  /// The blob it was read from, to write back.
  [[nodiscard]] const std::string& blob() const noexcept { return blob_; }

  /// The replacement for the shortest rule that matches the start of `chunk`, if any. Throws text_error when the
  /// rule points outside the replacement strings (a damaged charsmap).
  [[nodiscard]] std::optional<std::string_view> transform(std::string_view chunk) const {
    std::size_t node = offset(units_[0]);
    for (const char ch : chunk) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == 0) break;
      node ^= c;
      if (node >= units_.size()) return std::nullopt;
      const std::uint32_t unit = units_[node];
      if (label(unit) != c) return std::nullopt;
      node ^= offset(unit);
      if (node >= units_.size()) return std::nullopt;
      if ((unit >> 8) & 1) return replacement(units_[node] & 0x7FFFFFFFu);
    }
    return std::nullopt;
  }

  /// Rewrites `text` by the rules, grapheme cluster by grapheme cluster.
  void normalize(normalized_text& text) const;

 private:
  static std::uint32_t read_u32(std::string_view b, std::size_t at) noexcept {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
           static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
  }
  // The double array's unit fields, as darts-clone packs them.
  static std::size_t offset(std::uint32_t unit) noexcept { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }
  static std::uint32_t label(std::uint32_t unit) noexcept { return unit & ((1u << 31) | 0xFFu); }

  std::string_view replacement(std::size_t at) const {
    if (at > strings_.size()) throw text_error("precompiled_charsmap: a rule points past its replacement strings");
    const std::size_t end = std::min(strings_.find('\0', at), strings_.size());
    if (at < strings_.size() && is_utf8_continuation(strings_[at]))
      throw text_error("precompiled_charsmap: a rule points inside a character");
    return std::string_view(strings_).substr(at, end - at);
  }

  // One grapheme cluster: whole if short and a rule matches its start, else character by character. Returns
  // whether anything was replaced.
  bool rewrite_cluster(std::string_view cluster, std::vector<char_change>& changes) const {
    if (cluster.size() < 6) {
      if (const auto norm = transform(cluster)) {
        replace(changes, cluster, *norm);
        return true;
      }
    }
    bool modified = false;
    for (std::size_t pos = 0; pos < cluster.size();) {
      char32_t cp = 0;
      const std::size_t n = decode_utf8(cluster, pos, cp);
      const std::string_view part = cluster.substr(pos, n);
      if (const auto norm = transform(part)) {
        replace(changes, part, *norm);
        modified = true;
      } else {
        changes.push_back({cp, 0});
      }
      pos += n;
    }
    return modified;
  }

  // The reference's bookkeeping: the new characters replace the old ones one for one; extra new ones count as
  // inserted, and fewer new ones make the last change so far remove the difference (even one of an earlier part).
  static void replace(std::vector<char_change>& changes, std::string_view old_part, std::string_view new_part) {
    const auto old_count = static_cast<int>(count_code_points(old_part));
    int new_count = 0;
    for (std::size_t pos = 0; pos < new_part.size();) {
      char32_t cp = 0;
      pos += decode_utf8(new_part, pos, cp);
      changes.push_back({cp, 0});
      ++new_count;
    }
    const int diff = new_count - old_count;
    if (diff > 0) {
      for (int k = 0; k < diff; ++k) changes[changes.size() - 1 - static_cast<std::size_t>(k)].change = 1;
    } else if (diff < 0 && !changes.empty()) {
      changes.back().change += diff;
    }
  }

  std::string blob_;
  std::vector<std::uint32_t> units_;
  std::string strings_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL precompiled_charsmap::precompiled_charsmap(std::string_view blob, const std::string& source)
    : blob_(blob) {
  if (blob.size() < 4) throw text_error(source + ": shorter than its 4-byte trie size");
  const std::uint32_t trie_bytes = read_u32(blob, 0);
  const std::size_t units = trie_bytes / 4;
  if (units == 0) throw text_error(source + ": its trie is empty");
  if (blob.size() - 4 < units * 4)
    throw text_error(source + ": says its trie has " + std::to_string(trie_bytes) + " bytes, but only " +
                     std::to_string(blob.size() - 4) + " follow");
  units_.resize(units);
  for (std::size_t i = 0; i < units; ++i) units_[i] = read_u32(blob, 4 + 4 * i);
  strings_.assign(blob.substr(4 + 4 * units));
  if (const auto bad = find_invalid_utf8(strings_); bad != std::string_view::npos)
    throw text_error(source + ": its replacement strings are not UTF-8 (byte " + std::to_string(bad) + ")");
}

CPUTRAIN_DECL void precompiled_charsmap::normalize(normalized_text& text) const {
  thread_local std::vector<char_change> changes;
  changes.clear();
  bool modified = false;
  const std::string& s = text.str();
  std::size_t begin = 0;
  utf8proc_int32_t state = 0;
  char32_t previous = 0;
  for (std::size_t pos = 0; pos <= s.size();) {
    char32_t cp = 0;
    const std::size_t n = pos < s.size() ? decode_utf8(s, pos, cp) : 0;
    const bool boundary = pos == s.size() || (pos > 0 && utf8proc_grapheme_break_stateful(
                                                              static_cast<utf8proc_int32_t>(previous),
                                                              static_cast<utf8proc_int32_t>(cp), &state));
    if (boundary && pos > begin) {
      modified |= rewrite_cluster(std::string_view(s).substr(begin, pos - begin), changes);
      begin = pos;
    }
    if (pos == s.size()) break;
    previous = cp;
    pos += n;
  }
  if (modified) text.transform(changes);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
