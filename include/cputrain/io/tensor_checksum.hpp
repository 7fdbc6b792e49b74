// Per-tensor checksums for safetensors files, which have none of their own: XXH3-64 (xxHash, seed 0) of a tensor's
// bytes as stored, kept in "__metadata__" as "cputrain.xxh3_64.<tensor name>" -> 16 lowercase hex digits, with the
// marker "cputrain.checksum" -> "xxh3_64" (then every tensor must have one). The "cputrain." prefix keeps them apart
// from user metadata; Hugging Face's loaders read only "format". tensor_checksum, checksum_key, checksum_hex.
#pragma once

#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cputrain::io {

/// Metadata key prefix of a tensor's checksum; the tensor's name follows it.
inline constexpr std::string_view checksum_key_prefix = "cputrain.xxh3_64.";
/// Metadata key saying which checksum the file carries for every tensor, and its one known value.
inline constexpr std::string_view checksum_marker_key = "cputrain.checksum";
inline constexpr std::string_view checksum_marker_value = "xxh3_64";

/// XXH3-64 of `bytes`, as written and verified.
[[nodiscard]] inline std::uint64_t tensor_checksum(std::span<const std::byte> bytes) noexcept {
  return XXH3_64bits(bytes.data(), bytes.size());
}

/// The metadata key holding the checksum of tensor `name`.
[[nodiscard]] inline std::string checksum_key(std::string_view name) {
  return std::string(checksum_key_prefix) + std::string(name);
}

/// 16 lowercase hex digits, most significant first.
[[nodiscard]] inline std::string checksum_hex(std::uint64_t value) {
  constexpr char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) out[static_cast<std::size_t>(i)] = digits[value & 0xf];
  return out;
}

/// The value of exactly 16 lowercase hex digits, or nothing: one spelling per value, so a file either carries the
/// text checksum_hex writes or is refused.
[[nodiscard]] inline std::optional<std::uint64_t> parse_checksum_hex(std::string_view text) noexcept {
  if (text.size() != 16) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    std::uint64_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<std::uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<std::uint64_t>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
    value = (value << 4) | digit;
  }
  return value;
}

}  // namespace cputrain::io
