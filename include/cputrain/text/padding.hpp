// cputrain::text::pad_batch — Hugging Face's padding of encodings: to a fixed length or to the longest of the batch,
// rounded up to a multiple when asked, on the right or the left; padding never cuts. Padding tokens have attention
// mask 0, special-tokens mask 1, type id 0, offsets (0, 0), no sequence and no word.
#pragma once

#include "cputrain/text/truncation.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/special_tokens.hpp"

namespace cputrain::text {

struct padding_options {
  std::optional<std::size_t> length;  // none: the longest of the batch
  std::size_t multiple_of = 0;        // 0: no rounding
  text_side side = text_side::right;
};

namespace detail {

template <class T>
void pad_column(std::vector<T>& v, std::size_t n, T value, text_side side) {
  v.insert(side == text_side::right ? v.end() : v.begin(), n, value);
}

}  // namespace detail

/// Pads `e` to `length` tokens with `pad_id` (nothing when it has that many already).
CPUTRAIN_DECL void pad(encoding& e, std::size_t length, std::int32_t pad_id, text_side side = text_side::right);

/// Pads every encoding of `batch` to one length: `o.length`, or the longest's; then up to a multiple of
/// `o.multiple_of`.
CPUTRAIN_DECL void pad_batch(std::span<encoding> batch, const padding_options& o, std::int32_t pad_id);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void pad(encoding& e, std::size_t length, std::int32_t pad_id, text_side side) {
  if (e.size() >= length) return;
  const std::size_t n = length - e.size();
  detail::pad_column(e.ids, n, pad_id, side);
  detail::pad_column(e.type_ids, n, std::int32_t{0}, side);
  detail::pad_column(e.offsets, n, text_span{}, side);
  detail::pad_column(e.byte_offsets, n, text_span{}, side);
  detail::pad_column(e.special_tokens_mask, n, std::uint8_t{1}, side);
  detail::pad_column(e.sequence_ids, n, std::int8_t{-1}, side);
  detail::pad_column(e.word_ids, n, std::int32_t{-1}, side);
  detail::pad_column(e.attention_mask, n, std::uint8_t{0}, side);
}

CPUTRAIN_DECL void pad_batch(std::span<encoding> batch, const padding_options& o, std::int32_t pad_id) {
  if (batch.empty()) return;
  std::size_t length = 0;
  if (o.length) {
    length = *o.length;
  } else {
    for (const auto& e : batch) length = std::max(length, e.size());
  }
  if (o.multiple_of > 0 && length % o.multiple_of != 0) length += o.multiple_of - length % o.multiple_of;
  for (auto& e : batch) pad(e, length, pad_id, o.side);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
