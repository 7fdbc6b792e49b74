// cputrain::text::truncate — Hugging Face's truncation of one text or a pair to a length that leaves room for the
// special tokens: longest_first (the longer text gives up tokens first; when both are long each keeps half),
// only_first, only_second; cutting at the end (right) or at the start (left). The windows of a context that does
// not fit are the QA features' business (data/qa_features.hpp), not this one's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/token_sequence.hpp"

namespace cputrain::text {

enum class truncation_strategy { longest_first, only_first, only_second };
/// Where tokens are cut (truncation) or added (padding).
enum class text_side { right, left };

struct truncation_options {
  std::size_t max_length = 512;  // with the special tokens
  truncation_strategy strategy = truncation_strategy::longest_first;
  text_side side = text_side::right;
};

namespace detail {

inline void keep_tokens(token_sequence& t, std::size_t n, text_side side) {
  if (n >= t.size()) return;
  if (side == text_side::right) return t.truncate(n);
  const auto cut = static_cast<std::ptrdiff_t>(t.size() - n);
  t.ids.erase(t.ids.begin(), t.ids.begin() + cut);
  t.offsets.erase(t.offsets.begin(), t.offsets.begin() + cut);
  t.byte_offsets.erase(t.byte_offsets.begin(), t.byte_offsets.begin() + cut);
  t.words.erase(t.words.begin(), t.words.begin() + cut);
}

}  // namespace detail

/// Cuts `first` (and `second`, for a pair) to at most `budget` tokens together: max_length less the special tokens
/// the layout adds. Throws text_error, when something must be cut, if only_second has no second text or the text
/// it may cut is shorter than what must go (Hugging Face refuses both then, and only then).
CPUTRAIN_DECL void truncate(token_sequence& first, token_sequence* second, std::size_t budget,
                            const truncation_options& o);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void truncate(token_sequence& first, token_sequence* second, std::size_t budget,
                            const truncation_options& o) {
  const std::size_t n_first = first.size(), n_second = second ? second->size() : 0;
  if (budget == 0) {
    first.clear();
    if (second) second->clear();
    return;
  }
  if (n_first + n_second <= budget) return;
  const std::size_t to_remove = n_first + n_second - budget;
  if (o.strategy == truncation_strategy::only_second && second == nullptr)
    throw text_error("truncation: only_second needs a pair of texts");
  if (o.strategy != truncation_strategy::longest_first) {
    token_sequence& target = o.strategy == truncation_strategy::only_first ? first : *second;
    if (target.size() <= to_remove)
      throw text_error("truncation: the " + std::string(o.strategy == truncation_strategy::only_first ? "first" : "second") +
                       " text has " + std::to_string(target.size()) + " tokens, too few to drop the " +
                       std::to_string(to_remove) + " that max_length " + std::to_string(o.max_length) + " requires");
    return detail::keep_tokens(target, target.size() - to_remove, o.side);
  }
  if (second == nullptr) return detail::keep_tokens(first, budget, o.side);
  // The shorter text keeps all it can; if the two still do not fit, each gets half (the shorter the smaller half).
  std::size_t short_n = std::min(n_first, n_second), long_n = std::max(n_first, n_second);
  long_n = short_n > budget ? short_n : std::max(short_n, budget - short_n);
  if (short_n + long_n > budget) {
    short_n = budget / 2;
    long_n = short_n + budget % 2;
  }
  const bool first_is_short = n_first <= n_second;
  detail::keep_tokens(first, first_is_short ? short_n : long_n, o.side);
  detail::keep_tokens(*second, first_is_short ? long_n : short_n, o.side);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
