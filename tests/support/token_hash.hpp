// FNV-1a (32 bits), as the reference scripts hash their sweep blocks (scripts/tokenizer_reference_common.cjs):
// token_hash over each token's id, begin and end as little-endian 32-bit words, bytes_hash over a text's bytes.
#pragma once

#include <cstdint>
#include <string_view>

#include "cputrain/text/bert_tokenizer.hpp"

namespace cputrain::test {

constexpr std::uint32_t fnv_basis = 0x811c9dc5u;
constexpr std::uint32_t fnv_byte(std::uint32_t h, std::uint32_t byte) { return (h ^ (byte & 0xFFu)) * 16777619u; }

inline std::uint32_t bytes_hash(std::string_view bytes) {
  std::uint32_t h = fnv_basis;
  for (const unsigned char b : bytes) h = fnv_byte(h, b);
  return h;
}

inline std::uint32_t token_hash(const text::token_sequence& t) {
  std::uint32_t h = fnv_basis;
  const auto word = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) h = fnv_byte(h, v >> (8 * i));
  };
  for (std::size_t i = 0; i < t.size(); ++i) {
    word(static_cast<std::uint32_t>(t.ids[i]));
    word(t.offsets[i].begin);
    word(t.offsets[i].end);
  }
  return h;
}

}  // namespace cputrain::test
