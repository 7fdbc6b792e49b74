// Uniform random test inputs that stay cheap under the sanitizers. std::uniform_real_distribution<float> computes a
// long double logarithm on every draw in libstdc++ (generate_canonical), which the optimiser folds away at -O3 but not
// in the -O1 sanitizer builds: there it was a fifth of the TSan GEMM test's time. These draw from splitmix64 instead,
// outside the sanitizers' instrumentation (the loop writes only the caller's buffer, on one thread).
#pragma once

#include <cstddef>
#include <cstdint>

#include "support/sanitizers.hpp"

namespace cputrain_test {

/// out[0..n) uniform in [lo, hi), a function of seed alone.
CPUTRAIN_TEST_NOT_SANITIZED inline void fill_uniform(float* out, std::size_t n, float lo, float hi,
                                                     std::uint64_t seed) {
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float unit = static_cast<float>(z >> 40) * 0x1.0p-24f;  // 24 random bits: [0, 1)
    out[i] = lo + (hi - lo) * unit;
  }
}

}  // namespace cputrain_test
