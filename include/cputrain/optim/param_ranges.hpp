// cputrain::optim::param_range — how the optimizer sees the one flat parameter buffer: a list of ranges (one per
// tensor, or merged runs of them), each with or without weight decay. Hugging Face's Trainer decays every weight
// except biases and LayerNorm weights; the caller, who knows the names, sets `decay` accordingly.
// check_ranges() enforces what the optimizer relies on: ranges inside the buffer, no overlap, no gap.
#pragma once

#include "cputrain/core/error.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::optim {

/// A run of the flat parameter buffer, [offset, offset + size), and whether weight decay applies to it.
struct param_range {
  std::size_t offset = 0;
  std::size_t size = 0;
  bool decay = true;

  friend bool operator==(const param_range&, const param_range&) = default;
};

namespace detail {

/// Shortest text that reads back as the same number (for a double, what Python's repr prints), for messages.
template <class Float>
std::string number_text(Float x) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

inline std::string range_text(std::size_t index, const param_range& r) {
  return "range " + std::to_string(index) + " (offset " + std::to_string(r.offset) + ", size " +
         std::to_string(r.size) + ")";
}

}  // namespace detail

/// Throws usage_error, prefixed by `who`, unless `ranges` (in any order) tile [0, buffer_size) exactly. Empty
/// ranges are allowed anywhere inside the buffer; they own no element.
CPUTRAIN_DECL void check_ranges(std::span<const param_range> ranges, std::size_t buffer_size, std::string_view who);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void check_ranges(std::span<const param_range> ranges, std::size_t buffer_size, std::string_view who) {
  const std::string prefix = std::string(who) + ": parameter ";
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const param_range& r = ranges[i];
    // Written as two comparisons so that offset + size cannot wrap around.
    if (r.offset > buffer_size || r.size > buffer_size - r.offset) {
      throw usage_error(prefix + detail::range_text(i, r) + " ends past the end of the buffer of " +
                        std::to_string(buffer_size) + " elements");
    }
  }
  std::vector<std::size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return ranges[a].offset < ranges[b].offset; });
  std::size_t covered = 0;          // [0, covered) is owned by the ranges seen so far
  std::size_t last = ranges.size();  // the non-empty range that ends at `covered`
  for (const std::size_t i : order) {
    const param_range& r = ranges[i];
    if (r.size == 0) continue;
    if (r.offset < covered) {
      throw usage_error(prefix + detail::range_text(i, r) + " overlaps " + detail::range_text(last, ranges[last]));
    }
    if (r.offset > covered) {
      throw usage_error(prefix + "ranges leave a gap: elements [" + std::to_string(covered) + ", " +
                        std::to_string(r.offset) + ") belong to no range");
    }
    covered = r.offset + r.size;
    last = i;
  }
  if (covered != buffer_size) {
    throw usage_error(prefix + "ranges leave a gap: elements [" + std::to_string(covered) + ", " +
                      std::to_string(buffer_size) + ") belong to no range");
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::optim
