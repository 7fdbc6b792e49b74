// Tests for include/cputrain/core/bf16.hpp: the scalar conversions over every input, the limits, the layout
// promises and the Eigen integration.
#include <catch2/catch.hpp>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "cputrain/core/bf16.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace bf16_test {

using cputrain::bf16;

namespace {

// The reference rounding, written from the definition rather than the bias trick the library uses: look at the
// 16 bits that are dropped and decide up or down by comparing them with the halfway point.
std::uint16_t reference_round(std::uint32_t u) {
  const std::uint32_t kept = u >> 16;
  const std::uint32_t dropped = u & 0xffffu;
  const bool is_nan = (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0;
  if (is_nan) return static_cast<std::uint16_t>(kept | 0x0040u);
  const bool round_up = dropped > 0x8000u || (dropped == 0x8000u && (kept & 1u) != 0);
  return static_cast<std::uint16_t>(kept + (round_up ? 1u : 0u));
}

}  // namespace

TEST_CASE("float to bf16 rounds every one of the 2^32 float bit patterns as the reference does") {
  // Two independent oracles: the definition above and Eigen's own bfloat16 (which agrees except that it makes
  // every NaN canonical, where we keep sign and payload).
  std::atomic<std::uint64_t> mismatches_reference{0}, mismatches_eigen{0}, nan_mistakes{0};
  std::atomic<std::uint64_t> first_bad{0xffffffffffffffffull};
  constexpr std::uint64_t chunk = 1u << 20;
  tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, (1ull << 32) / chunk), [&](const auto& r) {
    std::uint64_t bad_ref = 0, bad_eigen = 0, bad_nan = 0;
    for (std::uint64_t c = r.begin(); c != r.end(); ++c) {
      for (std::uint64_t i = c * chunk; i < (c + 1) * chunk; ++i) {
        const auto u = static_cast<std::uint32_t>(i);
        const float f = std::bit_cast<float>(u);
        const std::uint16_t got = bf16(f).bits();
        if (got != reference_round(u)) {
          ++bad_ref;
          std::uint64_t expected = first_bad.load();
          while (i < expected && !first_bad.compare_exchange_weak(expected, i)) {
          }
        }
        if (std::isnan(f)) {
          // quiet, sign kept
          if ((got & 0x7fc0u) != 0x7fc0u || (got >> 15) != (u >> 31)) ++bad_nan;
        } else if (got != std::bit_cast<std::uint16_t>(Eigen::bfloat16(f))) {
          ++bad_eigen;
        }
      }
    }
    mismatches_reference += bad_ref;
    mismatches_eigen += bad_eigen;
    nan_mistakes += bad_nan;
  });
  INFO("first mismatching float bits: " << first_bad.load());
  CHECK(mismatches_reference.load() == 0);
  CHECK(mismatches_eigen.load() == 0);
  CHECK(nan_mistakes.load() == 0);
}

TEST_CASE("every one of the 65,536 bf16 values converts to float exactly and back unchanged") {
  int changed = 0;
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const bf16 x = bf16::from_bits(static_cast<std::uint16_t>(b));
    const float f = static_cast<float>(x);
    // exact: the float's bits are the bf16 bits followed by 16 zero bits
    REQUIRE(std::bit_cast<std::uint32_t>(f) == b << 16);
    const std::uint16_t back = bf16(f).bits();
    const bool signalling_nan = (b & 0x7f80u) == 0x7f80u && (b & 0x007fu) != 0 && (b & 0x0040u) == 0;
    if (signalling_nan) {
      // the only change allowed: a signalling NaN comes back quiet, with sign and payload kept
      REQUIRE(back == (b | 0x0040u));
    } else if (back != b) {
      ++changed;
    }
  }
  CHECK(changed == 0);
}

TEST_CASE("conversion edge cases give the exact bits the contract promises") {
  CHECK(bf16(0.0f).bits() == 0x0000);
  CHECK(bf16(-0.0f).bits() == 0x8000);
  CHECK(bf16(std::numeric_limits<float>::infinity()).bits() == 0x7f80);
  CHECK(bf16(-std::numeric_limits<float>::infinity()).bits() == 0xff80);
  CHECK(bf16(1.0f).bits() == 0x3f80);
  // halfway cases: ties go to the even neighbour
  CHECK(bf16(std::bit_cast<float>(0x3f808000u)).bits() == 0x3f80);  // 1 + 2^-8, halfway, 0x3f80 is even
  CHECK(bf16(std::bit_cast<float>(0x3f818000u)).bits() == 0x3f82);  // halfway above odd 0x3f81 -> up to even
  CHECK(bf16(std::bit_cast<float>(0x3f808001u)).bits() == 0x3f81);  // just past halfway -> up
  CHECK(bf16(std::bit_cast<float>(0x3f807fffu)).bits() == 0x3f80);  // just below halfway -> down
  // the largest float rounds past the largest finite bf16 (0x7f7f) to infinity; the largest bf16 is exact
  CHECK(bf16(std::numeric_limits<float>::max()).bits() == 0x7f80);
  CHECK(bf16(-std::numeric_limits<float>::max()).bits() == 0xff80);
  CHECK(bf16(std::bit_cast<float>(0x7f7f7fffu)).bits() == 0x7f7f);
  CHECK(bf16(std::bit_cast<float>(0x7f7f8000u)).bits() == 0x7f80);  // halfway above odd max -> Inf
  // subnormals are kept, not flushed, and round like everything else
  CHECK(bf16(std::numeric_limits<float>::denorm_min()).bits() == 0x0000);  // far below bf16's smallest
  CHECK(bf16(std::bit_cast<float>(0x00010000u)).bits() == 0x0001);         // bf16 denorm_min exactly
  CHECK(bf16(std::bit_cast<float>(0x00018000u)).bits() == 0x0002);         // halfway above odd -> even
  CHECK(bf16(std::bit_cast<float>(0x807f8000u)).bits() == 0x8080);         // largest subnormal rounds to -min
  // NaNs: quiet, sign and top payload kept
  CHECK(bf16(std::bit_cast<float>(0x7fc00000u)).bits() == 0x7fc0);
  CHECK(bf16(std::bit_cast<float>(0xffc00000u)).bits() == 0xffc0);
  CHECK(bf16(std::bit_cast<float>(0x7f800001u)).bits() == 0x7fc0);  // signalling, payload only in low bits
  CHECK(bf16(std::bit_cast<float>(0xff8a0000u)).bits() == 0xffca);  // signalling with payload
  CHECK(cputrain::isnan(bf16(std::bit_cast<float>(0x7f800001u))));
}

TEST_CASE("the classification helpers agree with float's") {
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const bf16 x = bf16::from_bits(static_cast<std::uint16_t>(b));
    const float f = static_cast<float>(x);
    REQUIRE(cputrain::isnan(x) == std::isnan(f));
    REQUIRE(cputrain::isinf(x) == std::isinf(f));
    REQUIRE(cputrain::isfinite(x) == std::isfinite(f));
    REQUIRE(cputrain::signbit(x) == std::signbit(f));
  }
}

TEST_CASE("numeric_limits<bf16> describes the format") {
  using L = std::numeric_limits<bf16>;
  STATIC_REQUIRE(L::is_specialized);
  CHECK(static_cast<float>(L::max()) == 0x1.fep127f);
  CHECK(static_cast<float>(L::lowest()) == -0x1.fep127f);
  CHECK(static_cast<float>(L::min()) == std::numeric_limits<float>::min());
  CHECK(static_cast<float>(L::epsilon()) == 0x1p-7f);
  CHECK(static_cast<float>(L::denorm_min()) == 0x1p-133f);
  CHECK(static_cast<float>(L::round_error()) == 0.5f);
  CHECK(std::isinf(static_cast<float>(L::infinity())));
  CHECK(std::isnan(static_cast<float>(L::quiet_NaN())));
  CHECK(std::isnan(static_cast<float>(L::signaling_NaN())));
  CHECK((L::quiet_NaN().bits() & 0x0040) != 0);
  CHECK((L::signaling_NaN().bits() & 0x0040) == 0);
  // epsilon is the gap above 1: the next bf16 after 1
  CHECK(static_cast<float>(bf16::from_bits(0x3f81)) - 1.0f == static_cast<float>(L::epsilon()));
  CHECK(L::digits == 8);
  CHECK(L::max_exponent == std::numeric_limits<float>::max_exponent);
  CHECK(L::min_exponent == std::numeric_limits<float>::min_exponent);
  CHECK(Eigen::NumTraits<bf16>::highest().bits() == L::max().bits());
  CHECK(Eigen::NumTraits<bf16>::lowest().bits() == L::lowest().bits());
  CHECK(Eigen::NumTraits<bf16>::epsilon().bits() == L::epsilon().bits());
}

// Arithmetic on bf16 must not compile; conversions must be explicit.
template <class T>
concept has_arithmetic = requires(T a, T b) { a + b; } || requires(T a, T b) { a * b; } ||
                         requires(T a, T b) { a < b; } || requires(T a) { -a; } || requires(T a, T b) { a += b; };

TEST_CASE("bf16 is a storage type: no arithmetic, explicit conversions, uint16_t layout") {
  STATIC_REQUIRE_FALSE(has_arithmetic<bf16>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<float, bf16>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<bf16, float>);
  STATIC_REQUIRE(std::is_constructible_v<bf16, float>);
  STATIC_REQUIRE(std::is_trivially_copyable_v<bf16>);
  STATIC_REQUIRE(sizeof(bf16) == 2);
  // bit-compatible with Eigen::bfloat16 for values that both represent the same way
  for (float f : {0.0f, -1.5f, 3.140625f, 65280.0f, 1e-40f}) {
    const bf16 ours(f);
    const Eigen::bfloat16 theirs(f);
    CHECK(std::bit_cast<std::uint16_t>(theirs) == ours.bits());
    CHECK(static_cast<float>(std::bit_cast<Eigen::bfloat16>(ours)) == static_cast<float>(ours));
  }
  CHECK(bf16().bits() == 0);
  constexpr bf16 c(2.0f);  // usable at compile time
  STATIC_REQUIRE(c.bits() == 0x4000);
}

TEST_CASE("Eigen::Map over a bf16 buffer copies, slices, transposes and casts") {
  // x: [2, 3] row-major, as activations are stored
  const float values[6] = {1.0f, -2.0f, 3.5f, 0.15625f, 1e30f, -0.0f};
  bf16 storage[6];
  for (int i = 0; i < 6; ++i) storage[i] = bf16(values[i]);
  Eigen::Map<const Eigen::Matrix<bf16, 2, 3, Eigen::RowMajor>> x(storage);

  const Eigen::Matrix<float, 2, 3, Eigen::RowMajor> xf = x.cast<float>();
  for (int i = 0; i < 6; ++i) CHECK(xf.data()[i] == static_cast<float>(bf16(values[i])));
  CHECK(xf(1, 1) != 1e30f);  // 1e30 is not a bf16: the map really holds rounded values

  const Eigen::Matrix<bf16, 3, 2> t = x.transpose();
  CHECK(static_cast<float>(t(2, 0)) == 3.5f);
  CHECK(static_cast<float>(t(0, 1)) == 0.15625f);

  Eigen::Matrix<bf16, Eigen::Dynamic, Eigen::Dynamic> back = xf.cast<bf16>();
  CHECK(back.rows() == 2);
  CHECK(same_bits(back(1, 2), bf16(-0.0f)));
  CHECK(static_cast<float>(back.block(0, 1, 2, 2)(1, 0)) == static_cast<float>(bf16(1e30f)));

  // a strided column view over the same buffer
  Eigen::Map<const Eigen::Matrix<bf16, 2, 1>, 0, Eigen::InnerStride<3>> column(storage + 2);
  CHECK(static_cast<float>(column(1)) == static_cast<float>(bf16(-0.0f)));
  CHECK(static_cast<float>(column(0)) == 3.5f);
}

}  // namespace bf16_test
