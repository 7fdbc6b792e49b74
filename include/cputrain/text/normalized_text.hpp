// cputrain::text::normalized_text — a text being rewritten by a tokenizer's normalizer, with the original bytes
// each of its bytes came from (Hugging Face's NormalizedString). The rewrites keep those alignments exactly as the
// reference keeps them, its quirks included, so that a token of the rewritten text maps back to the same span of the
// original as there.
#pragma once

#include "cputrain/text/char_classes.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/token_sequence.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

/// One character of a rewrite, as the reference's transformations list it: `change` 0 takes the place of the next
/// character of the text, 1 is inserted, -n takes the place of the next character and removes n more.
struct char_change {
  char32_t c;
  int change;
};

class normalized_text {
 public:
  normalized_text() = default;
  explicit normalized_text(std::string_view original) { assign(original); }

  /// Starts over from `original` (valid UTF-8), each byte aligned to its own character.
  void assign(std::string_view original) {
    text_.assign(original);
    align_.resize(original.size());
    for (std::size_t pos = 0; pos < original.size();) {
      const std::size_t n = utf8_char_length(original, pos);
      for (std::size_t b = pos; b < pos + n; ++b)
        align_[b] = {static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(pos + n)};
      pos += n;
    }
  }

  [[nodiscard]] const std::string& str() const noexcept { return text_; }
  [[nodiscard]] bool empty() const noexcept { return text_.empty(); }
  /// Per byte of str(): the original bytes it came from.
  [[nodiscard]] std::span<const text_span> alignments() const noexcept { return align_; }

  /// Bytes [begin, end) of str() (whole characters) with their alignments.
  [[nodiscard]] normalized_text slice(std::size_t begin, std::size_t end) const {
    normalized_text out;
    slice_into(out, begin, end);
    return out;
  }

  /// slice() into `out`, reusing its memory.
  void slice_into(normalized_text& out, std::size_t begin, std::size_t end) const {
    out.text_.assign(text_, begin, end - begin);
    out.align_.assign(align_.begin() + static_cast<std::ptrdiff_t>(begin),
                      align_.begin() + static_cast<std::ptrdiff_t>(end));
  }

  /// The original bytes that bytes [begin, end) of str() came from (from the first one's start to the last one's end).
  [[nodiscard]] text_span original(std::size_t begin, std::size_t end) const noexcept {
    if (begin >= end) return {};
    return {align_[begin].begin, align_[end - 1].end};
  }

  /// The reference's transform: the first `skip` characters are removed, then `changes` rewrite the text from
  /// there; the characters no change reaches are dropped. A replacing character keeps the alignment of the character it
  /// replaces; an inserted one takes the alignment of the byte before it in the old text.
  void transform(std::span<const char_change> changes, std::size_t skip = 0);

  /// Removes Unicode White_Space from the start and/or the end; the characters kept keep their alignments.
  void strip(bool left, bool right);

  /// Replaces each match [begin, end) of str() (in order, not overlapping) with `content`, whose characters take
  /// the alignment of the match's last byte (the reference inserts them after removing the match).
  void replace(std::span<const std::pair<std::size_t, std::size_t>> matches, std::string_view content);

  /// Keeps the characters `keep(c)` is true for, as the reference's filter does: each kept character removes the
  /// ones dropped after it, and the ones dropped before the first kept character are skipped.
  template <class Keep>
  void filter(Keep keep) {
    thread_local std::vector<char_change> changes;
    changes.clear();
    int removed = 0;
    std::size_t skip = 0;
    bool kept_one = false;
    char32_t last = 0;
    for (std::size_t pos = 0; pos < text_.size();) {
      char32_t c = 0;
      pos += decode_utf8(text_, pos, c);
      if (!keep(c)) {
        ++removed;
        continue;
      }
      if (kept_one) changes.push_back({last, -removed});
      else skip = static_cast<std::size_t>(removed);
      kept_one = true;
      last = c;
      removed = 0;
    }
    if (kept_one) changes.push_back({last, -removed});
    transform(changes, skip);
  }

  /// Replaces each character c with `to(c)`, one for one.
  template <class To>
  void map(To to) {
    thread_local std::vector<char_change> changes;
    changes.clear();
    for (std::size_t pos = 0; pos < text_.size();) {
      char32_t c = 0;
      pos += decode_utf8(text_, pos, c);
      changes.push_back({to(c), 0});
    }
    transform(changes);
  }

  /// Puts `content` before a non-empty text, aligned to its first character (the reference replaces that character
  /// with the content's first and inserts the rest).
  void prepend(std::string_view content) {
    if (text_.empty()) return;
    const text_span first = align_[0];
    text_.insert(0, content);
    align_.insert(align_.begin(), content.size(), first);
  }

 private:
  void push(char32_t c, text_span a) {
    const std::size_t before = new_text_.size();
    append_utf8(new_text_, c);
    new_align_.insert(new_align_.end(), new_text_.size() - before, a);
  }

  std::string text_;
  std::vector<text_span> align_;
  std::string new_text_;  // scratch for the rewrites, kept to reuse its memory
  std::vector<text_span> new_align_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void normalized_text::transform(std::span<const char_change> changes, std::size_t skip) {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < skip && pos < text_.size(); ++i) pos += utf8_char_length(text_, pos);
  new_text_.clear();
  new_align_.clear();
  for (const auto& [c, change] : changes) {
    text_span a{};
    if (change > 0) {
      if (pos >= 1) a = align_[pos - 1];
    } else if (pos < align_.size()) {
      a = align_[pos];
    } else if (!align_.empty()) {
      a = {align_.back().end, align_.back().end};  // past the end: the reference would fail; keep an empty span
    }
    if (change <= 0 && pos < text_.size()) pos += utf8_char_length(text_, pos);
    for (int k = 0; k < -change && pos < text_.size(); ++k) pos += utf8_char_length(text_, pos);
    push(c, a);
  }
  text_.swap(new_text_);
  align_.swap(new_align_);
}

CPUTRAIN_DECL void normalized_text::strip(bool left, bool right) {
  std::size_t begin = 0, end = text_.size();
  char32_t cp = 0;
  while (left && begin < end && is_bert_whitespace((decode_utf8(text_, begin, cp), cp)))
    begin += utf8_char_length(text_, begin);
  while (right && end > begin) {
    const std::size_t start = previous_char_start(text_, end, begin);
    (void)decode_utf8(text_, start, cp);
    if (!is_bert_whitespace(cp)) break;
    end = start;
  }
  text_ = text_.substr(begin, end - begin);
  align_.erase(align_.begin() + static_cast<std::ptrdiff_t>(end), align_.end());
  align_.erase(align_.begin(), align_.begin() + static_cast<std::ptrdiff_t>(begin));
}

CPUTRAIN_DECL void normalized_text::replace(std::span<const std::pair<std::size_t, std::size_t>> matches,
                                            std::string_view content) {
  new_text_.clear();
  new_align_.clear();
  std::size_t last = 0;
  for (const auto& [begin, end] : matches) {
    new_text_.append(text_, last, begin - last);
    new_align_.insert(new_align_.end(), align_.begin() + static_cast<std::ptrdiff_t>(last),
                      align_.begin() + static_cast<std::ptrdiff_t>(begin));
    new_text_.append(content);
    new_align_.insert(new_align_.end(), content.size(), align_[end - 1]);
    last = end;
  }
  new_text_.append(text_, last);
  new_align_.insert(new_align_.end(), align_.begin() + static_cast<std::ptrdiff_t>(last), align_.end());
  text_.swap(new_text_);
  align_.swap(new_align_);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
