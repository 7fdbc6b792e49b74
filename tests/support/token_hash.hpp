// FNV-1a (32 bits) over each token's id, begin and end as little-endian 32-bit words: what the reference scripts
// (scripts/make_tokenizer_reference.cjs, scripts/make_byte_level_reference.cjs) hash each sweep block's tokens with.
#pragma once

#include <cstdint>

#include "cputrain/text/bert_tokenizer.hpp"

namespace cputrain::test {

inline std::uint32_t token_hash(const text::token_sequence& t) {
  std::uint32_t h = 0x811c9dc5u;
  const auto word = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) {
      h ^= (v >> (8 * i)) & 0xFFu;
      h *= 16777619u;
    }
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    word(static_cast<std::uint32_t>(t.ids[i]));
    word(t.offsets[i].begin);
    word(t.offsets[i].end);
  }
  return h;
}

}  // namespace cputrain::test
