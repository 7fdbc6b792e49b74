// cputrain::text::detail::code_point_range — sorted, disjoint ranges of code points, the form of the tables
// generated from Hugging Face's tokenizer (GPT-2's letters and numbers, StripAccents' marks), and the lookup in them.
#pragma once

#include <algorithm>
#include <span>

namespace cputrain::text::detail {

struct code_point_range {
  char32_t first;
  char32_t last;
};

/// Whether `cp` is in one of `ranges` (sorted by first, disjoint).
[[nodiscard]] inline bool in_ranges(std::span<const code_point_range> ranges, char32_t cp) noexcept {
  const auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                                   [](char32_t value, const code_point_range& r) { return value < r.first; });
  return it != ranges.begin() && cp <= (it - 1)->last;
}

}  // namespace cputrain::text::detail
