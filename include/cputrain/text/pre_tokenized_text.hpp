// cputrain::text::pre_tokenized_text — a normalized text being cut into words by a tokenizer's pre-tokenizers
// (Hugging Face's PreTokenizedString, without the added tokens, which the tokenizers keep apart). Each piece is a
// normalized_text of its own, so that a later step may rewrite one (Metaspace) without moving the others, and each
// keeps the original bytes its bytes came from. A cut finds delimiters in a piece, and one of Hugging Face's five
// behaviours decides whether each stays a piece, goes, or joins its neighbour.
#pragma once

#include "cputrain/text/normalized_text.hpp"

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::text {

/// What a cut does with the delimiters it finds (Hugging Face's SplitDelimiterBehavior).
enum class split_behavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

/// A stretch of a piece, in bytes: a delimiter (`matched`) or the text between two.
struct split_part {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool matched = false;
};

using byte_ranges = std::vector<std::pair<std::size_t, std::size_t>>;

/// The byte ranges `behavior` leaves of `parts` (which cover a piece in order), as Hugging Face's
/// NormalizedString::split draws them; empty ranges included (the caller drops them).
CPUTRAIN_DECL void resolve_split(std::span<const split_part> parts, split_behavior behavior, byte_ranges& kept);

class pre_tokenized_text {
 public:
  /// Starts over with `whole` as the one piece (even when empty, as there: only a cut drops empty pieces).
  void assign(const normalized_text& whole) {
    size_ = 1;
    whole.slice_into(slot(pieces_, 0), 0, whole.str().size());
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] const normalized_text& operator[](std::size_t i) const noexcept { return pieces_[i]; }

  /// Cuts every piece: `find(piece, parts)` appends the parts of the piece; `behavior` decides what stays.
  template <class Find>
  void split(Find find, split_behavior behavior) {
    thread_local std::vector<split_part> parts;
    thread_local byte_ranges kept;
    cut([&](normalized_text& piece, byte_ranges& ranges) {
      parts.clear();
      kept.clear();
      find(static_cast<const normalized_text&>(piece), parts);
      resolve_split(parts, behavior, kept);
      ranges.insert(ranges.end(), kept.begin(), kept.end());
    });
  }

  /// Cuts every piece into the byte ranges `cut(piece, ranges)` appends, in order; it may rewrite the piece first.
  /// Empty ranges are dropped, as Hugging Face drops empty pieces.
  template <class Cut>
  void cut(Cut cut) {
    thread_local byte_ranges ranges;
    std::size_t next = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      ranges.clear();
      cut(pieces_[i], ranges);
      for (const auto& [begin, end] : ranges)
        if (end > begin) pieces_[i].slice_into(slot(next_, next++), begin, end);
    }
    pieces_.swap(next_);
    size_ = next;
  }

 private:
  // Element `i` of `pool`, grown as needed; elements are kept between texts to reuse their memory.
  static normalized_text& slot(std::vector<normalized_text>& pool, std::size_t i) {
    if (i == pool.size()) pool.emplace_back();
    return pool[i];
  }

  std::vector<normalized_text> pieces_;
  std::vector<normalized_text> next_;
  std::size_t size_ = 0;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void resolve_split(std::span<const split_part> parts, split_behavior behavior, byte_ranges& kept) {
  bool previous_matched = false;
  switch (behavior) {
    case split_behavior::removed:
      for (const auto& p : parts)
        if (!p.matched) kept.emplace_back(p.begin, p.end);
      return;
    case split_behavior::isolated:
      for (const auto& p : parts) kept.emplace_back(p.begin, p.end);
      return;
    case split_behavior::contiguous:  // runs of delimiters, and runs of the rest, each one piece
      for (const auto& p : parts) {
        if (p.matched == previous_matched && !kept.empty()) kept.back().second = p.end;
        else kept.emplace_back(p.begin, p.end);
        previous_matched = p.matched;
      }
      return;
    case split_behavior::merged_with_previous:  // a delimiter ends the piece before it
      for (const auto& p : parts) {
        if (p.matched && !previous_matched && !kept.empty()) kept.back().second = p.end;
        else kept.emplace_back(p.begin, p.end);
        previous_matched = p.matched;
      }
      return;
    case split_behavior::merged_with_next: {  // a delimiter starts the piece after it: walked from the end
      const std::size_t first = kept.size();
      for (std::size_t i = parts.size(); i-- > 0;) {
        const auto& p = parts[i];
        if (p.matched && !previous_matched && kept.size() > first) kept.back().first = p.begin;
        else kept.emplace_back(p.begin, p.end);
        previous_matched = p.matched;
      }
      std::reverse(kept.begin() + static_cast<std::ptrdiff_t>(first), kept.end());
      return;
    }
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
