// cputrain::cpu_features — what the processor running us can do, and what this program was compiled to use.
//
// Kernels pick their instruction set at compile time (-march), so a binary built for AVX-512 dies of SIGILL on
// an AVX2-only machine — a classic surprise on a mixed fleet. check_cpu_supports_build() turns that into a
// clear message at start-up, naming what is missing and how to rebuild. The feature bits also tell a user why
// bf16 runs at the speed it does (native AVX512-BF16 dot products, or widening to float on AVX2).
#pragma once

#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "cputrain/core/error.hpp"

namespace cputrain {

struct cpu_features {
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512bf16 = false;
  bool amx_bf16 = false;

  /// The running processor's features.
  [[nodiscard]] static cpu_features detect() noexcept {
    cpu_features f;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512vl = __builtin_cpu_supports("avx512vl");
    f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
    // AMX-BF16 is CPUID leaf 7, EDX bit 22; __builtin_cpu_supports knows no name for it in GCC 12 or Clang 14.
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) f.amx_bf16 = ((d >> 22) & 1u) != 0;
#endif
    return f;
  }

  /// The features this translation unit was compiled to use (from the compiler's predefined macros).
  [[nodiscard]] static constexpr cpu_features compiled() noexcept {
    cpu_features f;
#ifdef __AVX2__
    f.avx2 = true;
#endif
#ifdef __FMA__
    f.fma = true;
#endif
#ifdef __AVX512F__
    f.avx512f = true;
#endif
#ifdef __AVX512BW__
    f.avx512bw = true;
#endif
#ifdef __AVX512VL__
    f.avx512vl = true;
#endif
#ifdef __AVX512BF16__
    f.avx512bf16 = true;
#endif
#ifdef __AMX_BF16__
    f.amx_bf16 = true;
#endif
    return f;
  }

  /// Names of the features set in `this`, e.g. {"avx2", "fma"}.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    const std::pair<bool, const char*> all[] = {{avx2, "avx2"},         {fma, "fma"},
                                                {avx512f, "avx512f"},   {avx512bw, "avx512bw"},
                                                {avx512vl, "avx512vl"}, {avx512bf16, "avx512bf16"},
                                                {amx_bf16, "amx-bf16"}};
    for (const auto& [set, name] : all) {
      if (set) out.emplace_back(name);
    }
    return out;
  }

  /// Features set in `this` and not in `available`.
  [[nodiscard]] std::vector<std::string> missing_from(const cpu_features& available) const {
    cpu_features lacking;
    lacking.avx2 = avx2 && !available.avx2;
    lacking.fma = fma && !available.fma;
    lacking.avx512f = avx512f && !available.avx512f;
    lacking.avx512bw = avx512bw && !available.avx512bw;
    lacking.avx512vl = avx512vl && !available.avx512vl;
    lacking.avx512bf16 = avx512bf16 && !available.avx512bf16;
    lacking.amx_bf16 = amx_bf16 && !available.amx_bf16;
    return lacking.names();
  }
};

/// Throws cputrain::error naming the missing instructions when the processor cannot run what this translation
/// unit was compiled for. Call it first thing in main(), before any kernel runs. (The check itself is compiled
/// in the caller's translation unit, with the caller's flags, so it sees exactly the caller's build.)
inline void check_cpu_supports_build(const cpu_features& running = cpu_features::detect()) {
  const auto missing = cpu_features::compiled().missing_from(running);
  if (missing.empty()) return;
  std::string list;
  for (const auto& name : missing) list += (list.empty() ? "" : ", ") + name;
  throw error("this program was compiled for instructions this CPU lacks (" + list +
              "); rebuild it on this machine (the default -march=native does that) or with "
              "-DCPUTRAIN_ARCH_FLAGS=\"-mavx2 -mfma\" for every x86-64 CPU of the last decade");
}

}  // namespace cputrain
