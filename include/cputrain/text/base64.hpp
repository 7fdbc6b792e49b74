// cputrain::text::decode_base64, encode_base64 — the standard base64 alphabet (RFC 4648; '=' padding optional when
// reading), strict: tokenizer.json stores SentencePiece's precompiled_charsmap this way, and a damaged one must be
// refused, not half-read.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::text {

/// The bytes `text` encodes, or nullopt (with the position of the first bad character in `bad_at`) when it is not
/// base64.
CPUTRAIN_DECL std::optional<std::string> decode_base64(std::string_view text, std::size_t* bad_at = nullptr);

/// `bytes` as base64 with '=' padding.
CPUTRAIN_DECL std::string encode_base64(std::string_view bytes);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::optional<std::string> decode_base64(std::string_view text, std::size_t* bad_at) {
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::size_t end = text.size();
  for (int pad = 0; pad < 2 && end > 0 && text[end - 1] == '='; ++pad) --end;
  const auto fail = [&](std::size_t at) -> std::optional<std::string> {
    if (bad_at) *bad_at = at;
    return std::nullopt;
  };
  if (end != text.size() && text.size() % 4 != 0) return fail(end);
  if (end % 4 == 1) return fail(end);
  std::string out;
  out.reserve(end / 4 * 3 + 2);
  std::uint32_t bits = 0;
  int count = 0;
  for (std::size_t i = 0; i < end; ++i) {
    const int v = value(text[i]);
    if (v < 0) return fail(i);
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  if ((bits & ((1u << count) - 1)) != 0) return fail(end - 1);  // bits left over that are not zero
  return out;
}

CPUTRAIN_DECL std::string encode_base64(std::string_view bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 3; ++k)
      v = (v << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out.push_back(k <= n ? alphabet[(v >> (18 - 6 * k)) & 63] : '=');
  }
  return out;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
