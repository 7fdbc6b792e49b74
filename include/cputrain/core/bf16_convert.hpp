// Bulk fp32 <-> bf16 conversion of spans: to_bf16(src, dst) (bit for bit the scalar bf16(float)), to_float(src,
// dst) (exact), bf16_conversion_isa() (the SIMD path compiled in: avx512bf16, avx512, avx2 or scalar). Sizes must
// match and ranges not overlap (usage_error); large spans run in the current oneTBB arena, thread-count-independent.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>

#include "cputrain/core/bf16.hpp"
#include "cputrain/core/error.hpp"

// The feature macros say which detail:: kernels exist in this translation unit (a build for a newer
// instruction set also has the older kernels, so its tests can check them too).
#if defined(__AVX2__)
#define CPUTRAIN_BF16_CONVERT_HAVE_AVX2 1
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__)
#define CPUTRAIN_BF16_CONVERT_HAVE_AVX512 1
#endif
#if defined(__AVX512BF16__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define CPUTRAIN_BF16_CONVERT_HAVE_AVX512BF16 1
#endif

#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX2) || defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512)
#include <immintrin.h>
#endif

// Everything whose code depends on the instruction set lives in an inline namespace named after it. Without
// that, two translation units built with different -m flags would define the same inline functions
// differently, and the linker could keep the AVX-512 copy for a program that also runs on AVX2-only machines.
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512BF16)
#define CPUTRAIN_BF16_CONVERT_NS convert_avx512bf16
#elif defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512)
#define CPUTRAIN_BF16_CONVERT_NS convert_avx512
#elif defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX2)
#define CPUTRAIN_BF16_CONVERT_NS convert_avx2
#else
#define CPUTRAIN_BF16_CONVERT_NS convert_scalar
#endif

namespace cputrain {

namespace detail {
inline namespace CPUTRAIN_BF16_CONVERT_NS {

/// Reference loops: the definition the SIMD kernels are tested against, and the tails of the AVX2 kernels.
inline void to_bf16_scalar(const float* src, bf16* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = bf16::from_bits(bf16::round_to_bits(src[i]));
}

inline void to_float_scalar(const bf16* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX2)

/// bf16::round_to_bits on 8 lanes; the results sit in the low 16 bits of each 32-bit lane.
inline __m256i round_to_bits_avx2(__m256i u) noexcept {
  const __m256i high = _mm256_srli_epi32(u, 16);
  const __m256i lowest_kept = _mm256_and_si256(high, _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lowest_kept), 16);
  // Signed compare is fine: with the sign bit cleared both sides are non-negative.
  const __m256i is_nan =
      _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
  const __m256i quiet_nan = _mm256_or_si256(high, _mm256_set1_epi32(0x0040));
  return _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
}

inline void to_bf16_avx2(const float* src, bf16* dst, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = round_to_bits_avx2(_mm256_castps_si256(_mm256_loadu_ps(src + i)));
    const __m256i b = round_to_bits_avx2(_mm256_castps_si256(_mm256_loadu_ps(src + i + 8)));
    // packus interleaves the two 128-bit halves (a0-3 b0-3 a4-7 b4-7); the permute restores element order.
    // Unsigned saturation never triggers: every lane already fits in 16 bits.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), packed);
  }
  if (i + 8 <= n) {
    const __m256i a = round_to_bits_avx2(_mm256_castps_si256(_mm256_loadu_ps(src + i)));
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), packed);
    i += 8;
  }
  to_bf16_scalar(src + i, dst + i, n - i);
}

inline void to_float_avx2(const bf16* src, float* dst, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), w);
  }
  to_float_scalar(src + i, dst + i, n - i);
}

#endif  // CPUTRAIN_BF16_CONVERT_HAVE_AVX2

#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512)

// GCC 12's own AVX-512 intrinsics start from a self-initialised "undefined" vector, which -W(maybe-)uninitialized
// reports once they are inlined here with optimisation on (GCC bug 105593, fixed in GCC 12.3). The warning is
// about the compiler's header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/// bf16::round_to_bits on 16 lanes; the results sit in the low 16 bits of each 32-bit lane.
inline __m512i round_to_bits_avx512(__m512i u) noexcept {
  const __m512i high = _mm512_srli_epi32(u, 16);
  const __m512i lowest_kept = _mm512_and_si512(high, _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lowest_kept), 16);
  const __mmask16 is_nan =
      _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_or_epi32(rounded, is_nan, high, _mm512_set1_epi32(0x0040));
}

/// Lanes [0, n) set, for the masked remainder (n < 16).
inline __mmask16 first_lanes_avx512(std::size_t n) noexcept {
  return static_cast<__mmask16>((1u << n) - 1u);
}

inline void to_bf16_avx512(const float* src, bf16* dst, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i r = round_to_bits_avx512(_mm512_castps_si512(_mm512_loadu_ps(src + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm512_cvtepi32_epi16(r));
  }
  if (i < n) {
    // Masked-off lanes are neither read nor written, so this may not touch memory past either range.
    const __mmask16 k = first_lanes_avx512(n - i);
    const __m512i r = round_to_bits_avx512(_mm512_maskz_loadu_epi32(k, src + i));
    _mm512_mask_cvtepi32_storeu_epi16(dst + i, k, r);
  }
}

inline void to_float_avx512(const bf16* src, float* dst, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    _mm512_storeu_si512(dst + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  if (i < n) {
    const __mmask16 k = first_lanes_avx512(n - i);
    // The 512-bit form of the 16-bit masked load needs only AVX512BW (the 256-bit one would also need VL).
    const __m256i h = _mm512_castsi512_si256(_mm512_maskz_loadu_epi16(static_cast<__mmask32>(k), src + i));
    _mm512_mask_storeu_epi32(dst + i, k, _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
}

#endif  // CPUTRAIN_BF16_CONVERT_HAVE_AVX512

#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512BF16)

/// Lanes holding a nonzero subnormal: exponent field 0, mantissa not 0.
inline __mmask16 subnormal_lanes_avx512(__m512 v) noexcept {
  const __m512i u = _mm512_castps_si512(v);
  return _mm512_mask_test_epi32_mask(_mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f800000)), u,
                                     _mm512_set1_epi32(0x007fffff));
}

// vcvtneps2bf16 rounds to nearest even and quiets NaNs exactly like bf16::round_to_bits, but it always treats
// subnormal inputs as zero (whatever MXCSR says; seen on Zen 5). Our contract keeps subnormals, so a block of 32
// containing one is redone with the integer rounding. Why not the integer rounding alone: in cache this kernel
// is ~1.7x faster than to_bf16_avx512 (docs/benchmarks.md); the check is two mask tests per 16 values, and even
// with a subnormal in every block this kernel stays within 10% of that one.
inline void to_bf16_avx512bf16(const float* src, bf16* dst, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = _mm512_loadu_ps(src + i);
    const __m512 b = _mm512_loadu_ps(src + i + 16);
    __m512i r = std::bit_cast<__m512i>(_mm512_cvtne2ps_pbh(b, a));  // low half from the second operand
    if ((subnormal_lanes_avx512(a) | subnormal_lanes_avx512(b)) != 0) [[unlikely]] {
      const __m256i ra = _mm512_cvtepi32_epi16(round_to_bits_avx512(_mm512_castps_si512(a)));
      const __m256i rb = _mm512_cvtepi32_epi16(round_to_bits_avx512(_mm512_castps_si512(b)));
      r = _mm512_inserti64x4(_mm512_castsi256_si512(ra), rb, 1);
    }
    _mm512_storeu_si512(dst + i, r);
  }
  for (; i < n; i += 16) {
    const __mmask16 k = first_lanes_avx512(std::min<std::size_t>(n - i, 16));
    const __m512 a = _mm512_maskz_loadu_ps(k, src + i);
    __m256i r = std::bit_cast<__m256i>(_mm512_cvtneps_pbh(a));
    if (subnormal_lanes_avx512(a) != 0) [[unlikely]] {
      r = _mm512_cvtepi32_epi16(round_to_bits_avx512(_mm512_castps_si512(a)));
    }
    _mm256_mask_storeu_epi16(dst + i, k, r);
  }
}

#endif  // CPUTRAIN_BF16_CONVERT_HAVE_AVX512BF16

#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// The kernels this translation unit's instruction set selects. to_float needs no bf16 instruction: it is a
/// zero-extension and a shift, so the avx512bf16 build uses the AVX-512 kernel.
inline void to_bf16_kernel(const float* src, bf16* dst, std::size_t n) noexcept {
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512BF16)
  to_bf16_avx512bf16(src, dst, n);
#elif defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512)
  to_bf16_avx512(src, dst, n);
#elif defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX2)
  to_bf16_avx2(src, dst, n);
#else
  to_bf16_scalar(src, dst, n);
#endif
}

inline void to_float_kernel(const bf16* src, float* dst, std::size_t n) noexcept {
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512)
  to_float_avx512(src, dst, n);
#elif defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX2)
  to_float_avx2(src, dst, n);
#else
  to_float_scalar(src, dst, n);
#endif
}

/// Below this many elements a conversion runs on the calling thread. Measured on 2 Zen 5 cores with the data in
/// cache (docs/benchmarks.md): at 2^17 elements (two chunks) splitting is 1.4-1.7x faster, at 2^18 1.9-2.3x; at
/// 2^16 there is one chunk and nothing to gain. Out of cache, memory bandwidth rather than cores sets the pace.
inline constexpr std::size_t bf16_convert_parallel_threshold = std::size_t{1} << 17;
/// Elements per task: 64 Ki floats + 64 Ki bf16s = 384 KiB, inside one core's L2; 2^14..2^17 measured alike.
inline constexpr std::size_t bf16_convert_chunk = std::size_t{1} << 16;

/// Runs kernel(begin, end) over [0, n): inline when small, else in fixed chunks on the current task arena.
/// Fixed chunk boundaries (not the partitioner's) keep every chunk but the last a multiple of the vector width.
template <class Kernel>
void for_each_bf16_chunk(std::size_t n, const Kernel& kernel) {
  if (n < bf16_convert_parallel_threshold) {
    kernel(std::size_t{0}, n);
    return;
  }
  const std::size_t chunks = (n + bf16_convert_chunk - 1) / bf16_convert_chunk;
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, chunks, 1),
      [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t c = r.begin(); c != r.end(); ++c) {
          const std::size_t begin = c * bf16_convert_chunk;
          kernel(begin, std::min(n, begin + bf16_convert_chunk));
        }
      },
      tbb::simple_partitioner());
}

[[noreturn]] inline void throw_bf16_size_mismatch(std::string_view function, std::size_t src_size,
                                                  std::size_t dst_size) {
  throw usage_error(std::string(function) + ": source has " + std::to_string(src_size) +
                    " elements but destination has " + std::to_string(dst_size));
}

/// Size and overlap checks shared by both directions. Addresses are compared as integers because comparing
/// pointers into different arrays with < is unspecified.
inline void check_bf16_spans(std::string_view function, const void* src, std::size_t src_size,
                             std::size_t src_bytes, const void* dst, std::size_t dst_size, std::size_t dst_bytes) {
  if (src_size != dst_size) throw_bf16_size_mismatch(function, src_size, dst_size);
  if (src_size == 0) return;
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  if (s < d + dst_bytes && d < s + src_bytes) {
    throw usage_error(std::string(function) + ": source and destination overlap");
  }
}

}  // namespace CPUTRAIN_BF16_CONVERT_NS
}  // namespace detail

inline namespace CPUTRAIN_BF16_CONVERT_NS {

/// The instruction set this translation unit's conversions use: "avx512bf16", "avx512", "avx2" or "scalar".
[[nodiscard]] inline std::string_view bf16_conversion_isa() noexcept {
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512BF16)
  return "avx512bf16";
#elif defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512)
  return "avx512";
#elif defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX2)
  return "avx2";
#else
  return "scalar";
#endif
}

/// dst[i] = bf16(src[i]). Throws usage_error if the sizes differ or the ranges overlap; empty spans: no-op.
inline void to_bf16(std::span<const float> src, std::span<bf16> dst) {
  detail::check_bf16_spans("cputrain::to_bf16", src.data(), src.size(), src.size_bytes(), dst.data(), dst.size(),
                           dst.size_bytes());
  detail::for_each_bf16_chunk(src.size(), [&](std::size_t begin, std::size_t end) {
    detail::to_bf16_kernel(src.data() + begin, dst.data() + begin, end - begin);
  });
}

/// dst[i] = float(src[i]), exact. Throws usage_error if the sizes differ or the ranges overlap; empty: no-op.
inline void to_float(std::span<const bf16> src, std::span<float> dst) {
  detail::check_bf16_spans("cputrain::to_float", src.data(), src.size(), src.size_bytes(), dst.data(), dst.size(),
                           dst.size_bytes());
  detail::for_each_bf16_chunk(src.size(), [&](std::size_t begin, std::size_t end) {
    detail::to_float_kernel(src.data() + begin, dst.data() + begin, end - begin);
  });
}

/// to_bf16 on the calling thread alone, starting no TBB task: for threads outside the compute arena (the gradient
/// reducer's communication thread), whose conversions must not take cores from the backward pass running beside them.
inline void to_bf16_serial(std::span<const float> src, std::span<bf16> dst) {
  detail::check_bf16_spans("cputrain::to_bf16_serial", src.data(), src.size(), src.size_bytes(), dst.data(),
                           dst.size(), dst.size_bytes());
  detail::to_bf16_kernel(src.data(), dst.data(), src.size());
}

/// to_float on the calling thread alone (see to_bf16_serial).
inline void to_float_serial(std::span<const bf16> src, std::span<float> dst) {
  detail::check_bf16_spans("cputrain::to_float_serial", src.data(), src.size(), src.size_bytes(), dst.data(),
                           dst.size(), dst.size_bytes());
  detail::to_float_kernel(src.data(), dst.data(), src.size());
}

}  // namespace CPUTRAIN_BF16_CONVERT_NS

}  // namespace cputrain

#undef CPUTRAIN_BF16_CONVERT_NS
