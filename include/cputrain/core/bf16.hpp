// cputrain::bf16 — the 16-bit brain-float storage scalar, with no arithmetic of its own: compute happens in float
// after an explicit conversion. float -> bf16 rounds to nearest even (NaN stays quiet, subnormals kept); bf16 ->
// float is exact. Works as an Eigen scalar (numeric_limits, NumTraits); bulk conversion: core/bf16_convert.hpp.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

namespace cputrain {

class bf16 {
 public:
  /// Zero, so value-initialised buffers are zero like float buffers.
  constexpr bf16() noexcept = default;

  /// Rounds to nearest even (see the header comment for NaN, Inf and subnormals). Explicit on purpose:
  /// a float silently becoming a bf16 is a precision loss the reader should see.
  constexpr explicit bf16(float value) noexcept : bits_(round_to_bits(value)) {}

  /// Exact.
  constexpr explicit operator float() const noexcept {
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits_) << 16);
  }

  [[nodiscard]] static constexpr bf16 from_bits(std::uint16_t bits) noexcept {
    bf16 b;
    b.bits_ = bits;
    return b;
  }
  [[nodiscard]] constexpr std::uint16_t bits() const noexcept { return bits_; }

  /// Bitwise equality (so +0 != -0 and a NaN equals itself); numeric comparison goes through float.
  friend constexpr bool same_bits(bf16 a, bf16 b) noexcept { return a.bits_ == b.bits_; }

  /// The rounding itself, shared by the scalar constructor and the scalar tails of the bulk conversions.
  [[nodiscard]] static constexpr std::uint16_t round_to_bits(float value) noexcept {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      // NaN: keep sign and the top payload bits, force the quiet bit so a signalling NaN cannot become Inf.
      return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
    }
    // Adding 0x7fff plus the lowest kept bit rounds to nearest with ties to even; a carry out of the mantissa
    // correctly bumps the exponent, and past the largest finite value it lands exactly on Inf.
    const std::uint32_t rounding_bias = 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>((u + rounding_bias) >> 16);
  }

 private:
  std::uint16_t bits_ = 0;
};

[[nodiscard]] constexpr bool isnan(bf16 x) noexcept { return (x.bits() & 0x7fffu) > 0x7f80u; }
[[nodiscard]] constexpr bool isinf(bf16 x) noexcept { return (x.bits() & 0x7fffu) == 0x7f80u; }
[[nodiscard]] constexpr bool isfinite(bf16 x) noexcept { return (x.bits() & 0x7f80u) != 0x7f80u; }
[[nodiscard]] constexpr bool signbit(bf16 x) noexcept { return (x.bits() & 0x8000u) != 0; }

static_assert(sizeof(bf16) == sizeof(std::uint16_t) && alignof(bf16) == alignof(std::uint16_t));
static_assert(std::is_standard_layout_v<bf16> && std::is_trivially_copyable_v<bf16>);
static_assert(sizeof(bf16) == sizeof(Eigen::bfloat16) && alignof(bf16) == alignof(Eigen::bfloat16));

}  // namespace cputrain

template <>
class std::numeric_limits<cputrain::bf16> {
  using bf16 = cputrain::bf16;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr std::float_denorm_style has_denorm = std::denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr bool is_iec559 = false;  // not an IEEE 754 interchange format
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 8;          // 7 stored mantissa bits + the implicit one
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -125;  // same exponent range as float
  static constexpr int min_exponent10 = -37;
  static constexpr int max_exponent = 128;
  static constexpr int max_exponent10 = 38;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static constexpr bf16 min() noexcept { return bf16::from_bits(0x0080); }          // 2^-126
  static constexpr bf16 lowest() noexcept { return bf16::from_bits(0xff7f); }
  static constexpr bf16 max() noexcept { return bf16::from_bits(0x7f7f); }          // (2 - 2^-7) * 2^127
  static constexpr bf16 epsilon() noexcept { return bf16::from_bits(0x3c00); }      // 2^-7
  static constexpr bf16 round_error() noexcept { return bf16::from_bits(0x3f00); }  // 0.5
  static constexpr bf16 infinity() noexcept { return bf16::from_bits(0x7f80); }
  static constexpr bf16 quiet_NaN() noexcept { return bf16::from_bits(0x7fc0); }
  static constexpr bf16 signaling_NaN() noexcept { return bf16::from_bits(0x7fa0); }
  static constexpr bf16 denorm_min() noexcept { return bf16::from_bits(0x0001); }   // 2^-133
};

namespace Eigen {

/// Lets Eigen::Map / Matrix use bf16 as a storage scalar. Costs are those of a load and a conversion; bf16 has
/// no arithmetic, so expressions that would do math on it fail to compile — cast to float first.
template <>
struct NumTraits<cputrain::bf16> : GenericNumTraits<cputrain::bf16> {
  using Real = cputrain::bf16;
  using NonInteger = cputrain::bf16;
  using Nested = cputrain::bf16;
  using Literal = cputrain::bf16;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 0,
    ReadCost = 1,
    AddCost = 3,
    MulCost = 3
  };
  static constexpr int digits10() { return std::numeric_limits<cputrain::bf16>::digits10; }
  static constexpr int max_digits10() { return std::numeric_limits<cputrain::bf16>::max_digits10; }
  static constexpr cputrain::bf16 epsilon() { return std::numeric_limits<cputrain::bf16>::epsilon(); }
  static constexpr cputrain::bf16 dummy_precision() { return cputrain::bf16::from_bits(0x3c00); }
  static constexpr cputrain::bf16 highest() { return std::numeric_limits<cputrain::bf16>::max(); }
  static constexpr cputrain::bf16 lowest() { return std::numeric_limits<cputrain::bf16>::lowest(); }
  static constexpr cputrain::bf16 infinity() { return std::numeric_limits<cputrain::bf16>::infinity(); }
  static constexpr cputrain::bf16 quiet_NaN() { return std::numeric_limits<cputrain::bf16>::quiet_NaN(); }
};

}  // namespace Eigen
