// Tests for include/cputrain/core/bf16_convert.hpp. Built once with the project's -march=native and once per
// instruction set (CPUTRAIN_TEST_ISA, see tests/core/CMakeLists.txt), so each SIMD path is checked bit for bit
// against the scalar definition, bf16::round_to_bits.
#include <catch2/catch.hpp>

#include "cputrain/core/bf16_convert.hpp"
#include "support/sanitizers.hpp"

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#if __has_include(<sys/mman.h>) && __has_include(<unistd.h>)
#include <sys/mman.h>
#include <unistd.h>

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace bf16_convert_test {
#define CPUTRAIN_TEST_HAVE_MMAN 1
#endif

namespace {

using cputrain::bf16;
namespace detail = cputrain::detail;

float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }
std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }

std::string hex(std::uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

/// Index of the first element whose bits differ, or n.
std::size_t first_difference(const bf16* a, const bf16* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (a[i].bits() != b[i].bits()) return i;
  return n;
}
std::size_t first_difference(const float* a, const float* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (bits_of(a[i]) != bits_of(b[i])) return i;
  return n;
}

using to_bf16_fn = std::function<void(const float*, bf16*, std::size_t)>;
using to_float_fn = std::function<void(const bf16*, float*, std::size_t)>;

struct named_to_bf16 {
  std::string_view name;
  to_bf16_fn fn;
};
struct named_to_float {
  std::string_view name;
  to_float_fn fn;
};

/// The public functions and every kernel this build's instruction set compiles (a newer ISA's build also
/// checks the older kernels directly).
std::vector<named_to_bf16> to_bf16_paths() {
  std::vector<named_to_bf16> v{
      {"public", [](const float* s, bf16* d, std::size_t n) { cputrain::to_bf16({s, n}, {d, n}); }},
      {"scalar", detail::to_bf16_scalar}};
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX2)
  v.push_back({"avx2", detail::to_bf16_avx2});
#endif
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512)
  v.push_back({"avx512", detail::to_bf16_avx512});
#endif
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512BF16)
  v.push_back({"avx512bf16", detail::to_bf16_avx512bf16});
#endif
  return v;
}

std::vector<named_to_float> to_float_paths() {
  std::vector<named_to_float> v{
      {"public", [](const bf16* s, float* d, std::size_t n) { cputrain::to_float({s, n}, {d, n}); }},
      {"scalar", detail::to_float_scalar}};
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX2)
  v.push_back({"avx2", detail::to_float_avx2});
#endif
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512)
  v.push_back({"avx512", detail::to_float_avx512});
#endif
  return v;
}

/// Float inputs that exercise every branch of the rounding, each with the bf16 bits the contract requires.
/// Written out by hand so the reference rounding itself is checked, not only compared against.
struct edge_case {
  std::uint32_t in;
  std::uint16_t out;
};
constexpr std::array<edge_case, 38> float_edges{{
    {0x00000000, 0x0000},  // +0
    {0x80000000, 0x8000},  // -0
    {0x7f800000, 0x7f80},  // +Inf
    {0xff800000, 0xff80},  // -Inf
    {0x7fc00000, 0x7fc0},  // the default quiet NaN
    {0xffc00000, 0xffc0},  // negative quiet NaN
    {0x7fc12345, 0x7fc1},  // quiet NaN, payload in both halves: low half dropped, never rounded
    {0xffe5ffff, 0xffe5},  // negative quiet NaN whose low half would round up
    {0x7f800001, 0x7fc0},  // signalling NaN, payload only in the low half: must not become Inf
    {0xff800001, 0xffc0},  // same, negative
    {0x7fa00000, 0x7fe0},  // signalling NaN: quiet bit forced, payload kept
    {0x7fbfffff, 0x7fff},  // largest signalling NaN: would round into the exponent if treated as a number
    {0xffffffff, 0xffff},  // all ones
    {0x00000001, 0x0000},  // smallest subnormal: rounds to +0
    {0x80000001, 0x8000},  // ... and to -0
    {0x00008000, 0x0000},  // subnormal exactly halfway, even low bit: stays
    {0x00018000, 0x0002},  // subnormal exactly halfway, odd low bit: rounds up to even
    {0x00008001, 0x0001},  // subnormal just above halfway
    {0x00010000, 0x0001},  // smallest bf16 subnormal, exact
    {0x00400000, 0x0040},  // subnormal, exact: must not be flushed
    {0x807f0000, 0x807f},  // negative subnormal, exact
    {0x007fffff, 0x0080},  // largest subnormal: rounds up to the smallest normal
    {0x007f7fff, 0x007f},  // largest subnormal that rounds down
    {0x00800000, 0x0080},  // smallest normal
    {0x3f800000, 0x3f80},  // 1
    {0x3f800001, 0x3f80},  // 1 + 2^-23: rounds down
    {0x3f808000, 0x3f80},  // halfway between 1 and its successor, even low bit: stays
    {0x3f818000, 0x3f82},  // halfway, odd low bit: up to even
    {0x3f808001, 0x3f81},  // just above halfway
    {0x3f807fff, 0x3f80},  // just below halfway
    {0xbf818000, 0xbf82},  // negative halfway, odd low bit: magnitude up
    {0x3fff8000, 0x4000},  // carry out of the mantissa bumps the exponent
    {0x7f7f0000, 0x7f7f},  // largest finite bf16
    {0x7f7f7fff, 0x7f7f},  // just below the halfway point to Inf
    {0x7f7f8000, 0x7f80},  // halfway to Inf, odd low bit: Inf
    {0x7f7fffff, 0x7f80},  // FLT_MAX: Inf
    {0xff7fffff, 0xff80},  // -FLT_MAX: -Inf
    {0x4049fdb0, 0x404a},  // pi-ish, a plain value
}};

constexpr std::array<std::uint16_t, 22> bf16_edges{
    0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7fa0, 0xff81, 0x7f81, 0x7fff, 0xffff,
    0x0001, 0x8001, 0x007f, 0x807f, 0x0080, 0x7f7f, 0xff7f, 0x3f80, 0xbf80, 0x3c00, 0x4049};

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (std::size_t i = 0; i < n; ++i) {
    // Half arbitrary bit patterns (every class: NaNs, subnormals, Inf), half ordinary numbers.
    v[i] = (i % 2 == 0) ? from_bits(static_cast<std::uint32_t>(rng())) : normal(rng);
  }
  return v;
}

std::vector<bf16> random_bf16s(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<bf16> v(n);
  for (auto& b : v) b = bf16::from_bits(static_cast<std::uint16_t>(rng()));
  return v;
}

/// Source pools the length/offset sweep cuts windows out of.
std::vector<std::pair<std::string_view, std::vector<float>>> float_pools(std::size_t n) {
  std::vector<float> edges(n);
  // A stride coprime to the table size puts each edge value in every lane position somewhere in the pool.
  for (std::size_t i = 0; i < n; ++i) edges[i] = from_bits(float_edges[(i * 7) % float_edges.size()].in);
  std::vector<float> subnormal_mix(n);
  for (std::size_t i = 0; i < n; ++i)
    subnormal_mix[i] = (i % 5 == 3) ? from_bits(0x00018000u + static_cast<std::uint32_t>(i)) : float(i) * 0.37f;
  return {{"edge values", std::move(edges)}, {"random", random_floats(n, 1234)}, {"one subnormal in five",
                                                                                  std::move(subnormal_mix)}};
}

std::vector<std::pair<std::string_view, std::vector<bf16>>> bf16_pools(std::size_t n) {
  std::vector<bf16> edges(n);
  for (std::size_t i = 0; i < n; ++i) edges[i] = bf16::from_bits(bf16_edges[(i * 5) % bf16_edges.size()]);
  return {{"edge values", std::move(edges)}, {"random", random_bf16s(n, 4321)}};
}

constexpr std::uint16_t bf16_guard = 0xa5a5;
constexpr std::uint32_t float_guard = 0xdeadbeef;

/// Converts every [offset, offset + length) window, with the destination also at every offset, and reports the
/// first window whose result or surrounding guard elements are wrong.
template <class Src, class Dst, class Path, class Reference, class DstBits>
void sweep_windows(const Path& path, std::string_view pool_name, const std::vector<Src>& pool, Dst guard,
                   Reference reference, DstBits dst_bits) {
  constexpr std::size_t max_length = 130;
  constexpr std::size_t max_offset = 15;
  constexpr std::size_t slack = 16;  // guard elements on each side of the largest window
  std::vector<Dst> want(max_length);
  std::vector<Dst> buffer(slack + max_offset + max_length + slack);
  std::size_t failures = 0;
  std::string first_failure;
  for (std::size_t length = 0; length <= max_length; ++length) {
    for (std::size_t src_offset = 0; src_offset <= max_offset; ++src_offset) {
      const Src* src = pool.data() + src_offset;
      reference(src, want.data(), length);
      for (std::size_t dst_offset = 0; dst_offset <= max_offset; ++dst_offset) {
        std::fill(buffer.begin(), buffer.end(), guard);
        Dst* dst = buffer.data() + slack + dst_offset;
        path.fn(src, dst, length);
        std::string problem;
        if (const std::size_t i = first_difference(dst, want.data(), length); i != length) {
          problem = "element " + std::to_string(i) + " is " + hex(dst_bits(dst[i]), 8) + ", want " +
                    hex(dst_bits(want[i]), 8);
        } else {
          for (std::size_t j = 0; j < buffer.size(); ++j) {
            const bool inside = j >= slack + dst_offset && j < slack + dst_offset + length;
            if (!inside && dst_bits(buffer[j]) != dst_bits(guard)) {
              problem = "guard element " + std::to_string(j) + " of the buffer was overwritten";
              break;
            }
          }
        }
        if (!problem.empty() && failures++ == 0) {
          first_failure = std::string(path.name) + " on " + std::string(pool_name) + ", length " +
                          std::to_string(length) + ", source offset " + std::to_string(src_offset) +
                          ", destination offset " + std::to_string(dst_offset) + ": " + problem;
        }
      }
    }
  }
  INFO(first_failure);
  CHECK(failures == 0);
}

std::uint64_t bf16_bits_of(bf16 b) { return b.bits(); }
std::uint64_t float_bits_of(float f) { return bits_of(f); }

/// Runs f, which must throw usage_error, and returns its message.
template <class F>
std::string usage_error_message(F f) {
  try {
    f();
  } catch (const cputrain::usage_error& e) {
    return e.what();
  }
  FAIL("no cputrain::usage_error was thrown");
  return {};
}

}  // namespace

TEST_CASE("bf16_conversion_isa names the path this translation unit compiled") {
  const std::string_view isa = cputrain::bf16_conversion_isa();
#if defined(CPUTRAIN_TEST_ISA)
  // A build for one instruction set must dispatch to that set's kernel, not silently to another one.
  REQUIRE(isa == std::string_view(CPUTRAIN_TEST_ISA));
#else
  INFO("compiled path: " << isa);
  REQUIRE((isa == "avx512bf16" || isa == "avx512" || isa == "avx2" || isa == "scalar"));
#endif
#if defined(__AVX512BF16__) && defined(__AVX512VL__) && defined(__AVX512BW__)
  CHECK(isa == "avx512bf16");
#elif defined(__AVX512F__) && defined(__AVX512BW__)
  CHECK(isa == "avx512");
#elif defined(__AVX2__)
  CHECK(isa == "avx2");
#else
  CHECK(isa == "scalar");
#endif
}

TEST_CASE("to_bf16 rounds the hand-checked edge values as the contract says, on every path") {
  std::vector<float> src;
  for (const auto& e : float_edges) src.push_back(from_bits(e.in));
  for (const auto& path : to_bf16_paths()) {
    std::vector<bf16> dst(src.size());
    path.fn(src.data(), dst.data(), src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
      INFO(path.name << ": input " << hex(float_edges[i].in, 8));
      CHECK(hex(dst[i].bits(), 4) == hex(float_edges[i].out, 4));
    }
  }
}

TEST_CASE("to_bf16 equals the scalar rounding on every one of the 2^32 float bit patterns") {
  constexpr std::size_t chunk = std::size_t{1} << 20;  // above the threading threshold
  constexpr std::uint64_t chunks = (std::uint64_t{1} << 32) / chunk;
#if CPUTRAIN_TEST_ASAN
  // Under ASan+UBSan the exhaustive sweep took 30-50 s per build (5 builds); every 7th chunk (~5 s) still
  // covers every sign and exponent with many mantissas, and the release build stays exhaustive.
  constexpr std::uint64_t chunk_step = 7;
#else
  constexpr std::uint64_t chunk_step = 1;
#endif
  static_assert(chunk > detail::bf16_convert_parallel_threshold);
  std::vector<float> src(chunk);
  std::vector<bf16> got(chunk);
  std::vector<bf16> want(chunk);
  std::uint64_t bad_chunks = 0;
  std::string first_failure;
  for (std::uint64_t c = 0; c < chunks; c += chunk_step) {
    for (std::size_t i = 0; i < chunk; ++i) src[i] = from_bits(static_cast<std::uint32_t>(c * chunk + i));
    if (c % 2 == 0) {
      cputrain::to_bf16(src, got);
    } else {
      // Two calls split at a point that moves with c and is mostly not a multiple of any vector width, so the
      // remainders and the heads of the second call land on every lane; both halves are often below the
      // threading threshold, so the single-threaded path gets exhaustive coverage too.
      const std::size_t split = static_cast<std::size_t>((c * 2654435761u) % chunk);
      const std::span<const float> s(src);
      const std::span<bf16> d(got);
      cputrain::to_bf16(s.first(split), d.first(split));
      cputrain::to_bf16(s.subspan(split), d.subspan(split));
    }
    detail::to_bf16_scalar(src.data(), want.data(), chunk);
    if (std::memcmp(got.data(), want.data(), chunk * sizeof(bf16)) != 0 && bad_chunks++ == 0) {
      const std::size_t i = first_difference(got.data(), want.data(), chunk);
      first_failure = "input " + hex(bits_of(src[i]), 8) + " gave " + hex(got[i].bits(), 4) + ", scalar gives " +
                      hex(want[i].bits(), 4);
    }
  }
  INFO(first_failure);
  CHECK(bad_chunks == 0);
}

TEST_CASE("every one of the 65,536 bf16 values converts to float exactly and back as the contract says") {
  constexpr std::size_t n = 65536;
  std::vector<bf16> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = bf16::from_bits(static_cast<std::uint16_t>(i));

  for (const auto& path : to_float_paths()) {
    INFO("to_float path: " << path.name);
    std::vector<float> f(n);
    path.fn(all.data(), f.data(), n);
    std::size_t bad = 0;
    std::string first;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t want = static_cast<std::uint32_t>(i) << 16;
      if (bits_of(f[i]) != want || bits_of(static_cast<float>(all[i])) != want) {
        if (bad++ == 0) first = hex(i, 4) + " gave " + hex(bits_of(f[i]), 8);
      }
    }
    INFO(first);
    CHECK(bad == 0);

    for (const auto& back_path : to_bf16_paths()) {
      INFO("to_bf16 path: " << back_path.name);
      std::vector<bf16> back(n);
      back_path.fn(f.data(), back.data(), n);
      std::size_t bad_back = 0;
      std::size_t changed = 0;
      std::string first_back;
      for (std::size_t i = 0; i < n; ++i) {
        // Numbers, infinities and quiet NaNs come back unchanged; a signalling NaN comes back quieted, with its
        // sign and payload.
        const bool is_nan = (i & 0x7fffu) > 0x7f80u;
        const std::uint16_t want = static_cast<std::uint16_t>(is_nan ? (i | 0x0040u) : i);
        if (back[i].bits() != want && bad_back++ == 0) first_back = hex(i, 4) + " came back as " + hex(back[i].bits(), 4);
        if (back[i].bits() != i) ++changed;
      }
      INFO(first_back);
      CHECK(bad_back == 0);
      // Exactly the signalling NaNs change: 2 signs x (2^6 - 1) payloads.
      CHECK(changed == 2 * 63);
    }
  }
}

TEST_CASE("every length 0..130 at every source and destination offset matches the scalar path, guards intact") {
  constexpr std::size_t pool_size = 15 + 130;
  for (const auto& [pool_name, pool] : float_pools(pool_size)) {
    for (const auto& path : to_bf16_paths()) {
      sweep_windows(path, pool_name, pool, bf16::from_bits(bf16_guard), detail::to_bf16_scalar, bf16_bits_of);
    }
  }
  for (const auto& [pool_name, pool] : bf16_pools(pool_size)) {
    for (const auto& path : to_float_paths()) {
      sweep_windows(path, pool_name, pool, from_bits(float_guard), detail::to_float_scalar, float_bits_of);
    }
  }
}

#if defined(CPUTRAIN_TEST_HAVE_MMAN)
namespace {
/// One readable and writable page between two inaccessible ones: an access just past either end faults, so a
/// kernel reading or writing beyond its span (an unmasked tail) crashes instead of passing by luck.
class fenced_page {
 public:
  fenced_page() : size_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))) {
    void* p = mmap(nullptr, 3 * size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base_ = static_cast<std::byte*>(p);
    REQUIRE(mprotect(base_ + size_, size_, PROT_READ | PROT_WRITE) == 0);
  }
  ~fenced_page() { munmap(base_, 3 * size_); }
  fenced_page(const fenced_page&) = delete;
  fenced_page& operator=(const fenced_page&) = delete;

  /// n objects of T ending exactly at the end of the page (or, if at_start, starting exactly at its start).
  template <class T>
  T* place(std::size_t n, bool at_start) {
    std::byte* where = at_start ? base_ + size_ : base_ + 2 * size_ - n * sizeof(T);
    return reinterpret_cast<T*>(where);
  }

 private:
  std::size_t size_;
  std::byte* base_ = nullptr;
};
}  // namespace

TEST_CASE("conversions touch no memory outside their spans, even one element past the end") {
  const std::vector<float> floats = random_floats(130, 99);
  const std::vector<bf16> halves = random_bf16s(130, 98);
  for (const bool at_start : {false, true}) {
    for (std::size_t n = 0; n <= 130; ++n) {
      for (const auto& path : to_bf16_paths()) {
        fenced_page src_page;
        fenced_page dst_page;
        float* src = src_page.place<float>(n, at_start);
        bf16* dst = dst_page.place<bf16>(n, at_start);
        std::copy_n(floats.begin(), n, src);
        path.fn(src, dst, n);
        std::vector<bf16> want(n);
        detail::to_bf16_scalar(src, want.data(), n);
        INFO(path.name << ", length " << n);
        CHECK(first_difference(dst, want.data(), n) == n);
      }
      for (const auto& path : to_float_paths()) {
        fenced_page src_page;
        fenced_page dst_page;
        bf16* src = src_page.place<bf16>(n, at_start);
        float* dst = dst_page.place<float>(n, at_start);
        std::copy_n(halves.begin(), n, src);
        path.fn(src, dst, n);
        std::vector<float> want(n);
        detail::to_float_scalar(src, want.data(), n);
        INFO(path.name << ", length " << n);
        CHECK(first_difference(dst, want.data(), n) == n);
      }
    }
  }
}
#endif

TEST_CASE("large spans take the threaded path and give the scalar bits whatever the thread count") {
  constexpr std::size_t n = 5'000'003;  // odd, so the last chunk has a remainder
  static_assert(n > 4 * detail::bf16_convert_parallel_threshold);
  const std::vector<float> floats = random_floats(n, 7);
  std::vector<bf16> want_bf16(n);
  detail::to_bf16_scalar(floats.data(), want_bf16.data(), n);
  const std::vector<bf16> halves = random_bf16s(n, 8);
  std::vector<float> want_float(n);
  detail::to_float_scalar(halves.data(), want_float.data(), n);

  for (const int threads : {1, 2}) {
    INFO("task_arena of " << threads << " thread(s)");
    tbb::task_arena arena(threads);
    std::vector<bf16> got_bf16(n, bf16::from_bits(bf16_guard));
    std::vector<float> got_float(n, from_bits(float_guard));
    arena.execute([&] {
      cputrain::to_bf16(floats, got_bf16);
      cputrain::to_float(halves, got_float);
    });
    CHECK(first_difference(got_bf16.data(), want_bf16.data(), n) == n);
    CHECK(first_difference(got_float.data(), want_float.data(), n) == n);
  }
}

TEST_CASE("mismatched sizes throw usage_error naming the function and both sizes") {
  std::vector<float> f(10);
  std::vector<bf16> b(9);
  const std::string m1 = usage_error_message([&] { cputrain::to_bf16(f, b); });
  CHECK(m1 == "cputrain::to_bf16: source has 10 elements but destination has 9");
  const std::string m2 = usage_error_message([&] { cputrain::to_float(b, f); });
  CHECK(m2 == "cputrain::to_float: source has 9 elements but destination has 10");
  // One side empty is a mismatch, not a no-op.
  const std::string m3 = usage_error_message([&] { cputrain::to_bf16({}, b); });
  CHECK(m3 == "cputrain::to_bf16: source has 0 elements but destination has 9");
  CHECK(b[0].bits() == 0);  // nothing written
}

TEST_CASE("overlapping source and destination throw usage_error, adjacent ones do not") {
  // Raw storage the float and bf16 views share, as a caller converting in place would have.
  alignas(16) std::array<std::byte, 64> storage{};
  auto floats_at = [&](std::size_t byte_offset, std::size_t n) {
    return std::span<float>(std::launder(reinterpret_cast<float*>(storage.data() + byte_offset)), n);
  };
  auto halves_at = [&](std::size_t byte_offset, std::size_t n) {
    return std::span<bf16>(std::launder(reinterpret_cast<bf16*>(storage.data() + byte_offset)), n);
  };

  SECTION("same start (in-place conversion)") {
    CHECK(usage_error_message([&] { cputrain::to_bf16(floats_at(0, 8), halves_at(0, 8)); }) ==
          "cputrain::to_bf16: source and destination overlap");
    CHECK(usage_error_message([&] { cputrain::to_float(halves_at(0, 8), floats_at(0, 8)); }) ==
          "cputrain::to_float: source and destination overlap");
  }
  SECTION("destination starts inside the source") {
    CHECK_THROWS_AS(cputrain::to_bf16(floats_at(0, 8), halves_at(30, 8)), cputrain::usage_error);
    CHECK_THROWS_AS(cputrain::to_float(halves_at(14, 8), floats_at(0, 4)), cputrain::usage_error);
  }
  SECTION("source starts inside the destination") {
    CHECK_THROWS_AS(cputrain::to_bf16(floats_at(12, 8), halves_at(0, 8)), cputrain::usage_error);
    CHECK_THROWS_AS(cputrain::to_float(halves_at(30, 8), floats_at(0, 8)), cputrain::usage_error);
  }
  SECTION("adjacent ranges are fine") {
    const std::span<float> f = floats_at(0, 4);  // bytes [0, 16)
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = 1.5f + static_cast<float>(i);
    const std::span<bf16> b = halves_at(16, 4);  // bytes [16, 24)
    CHECK_NOTHROW(cputrain::to_bf16(f, b));
    CHECK(b[3].bits() == 0x4090);  // 4.5
    const std::span<float> g = floats_at(24, 4);  // bytes [24, 40)
    CHECK_NOTHROW(cputrain::to_float(b, g));
    CHECK(g[0] == 1.5f);
    CHECK(g[3] == 4.5f);
  }
}

TEST_CASE("empty spans are a no-op, wherever they point") {
  CHECK_NOTHROW(cputrain::to_bf16({}, {}));
  CHECK_NOTHROW(cputrain::to_float({}, {}));
  // Two empty views of the same storage do not overlap: there are no bytes to share.
  std::vector<float> f(4, 2.0f);
  std::vector<bf16> b(4, bf16::from_bits(bf16_guard));
  CHECK_NOTHROW(cputrain::to_bf16(std::span<const float>(f.data(), 0),
                                  std::span<bf16>(reinterpret_cast<bf16*>(f.data()), 0)));
  CHECK_NOTHROW(cputrain::to_float(std::span<const bf16>(b.data(), 0), std::span<float>(f.data(), 0)));
  CHECK(f[0] == 2.0f);
  CHECK(b[0].bits() == bf16_guard);
}

}  // namespace bf16_convert_test
