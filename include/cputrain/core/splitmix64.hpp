// cputrain::splitmix64_finalizer, SplitMix64's output function (a bijection of 64-bit values with full avalanche), and
// cputrain::splitmix64, one draw of the generator at a counter (the golden-ratio increment, then the finaliser). The
// library's counter-based random numbers (dropout's keys, the sampler's permutations, MLM masking) are built from
// them, so none keeps state and a resumed run draws the same values.
#pragma once

#include <cstdint>

namespace cputrain {

/// SplitMix64's increment: 2^64 divided by the golden ratio, odd, so that counter * gamma visits every value.
inline constexpr std::uint64_t splitmix64_gamma = 0x9e3779b97f4a7c15ull;

/// SplitMix64's output function: consecutive inputs give independent-looking 64-bit values.
[[nodiscard]] constexpr std::uint64_t splitmix64_finalizer(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The generator's draw at counter x: splitmix64_finalizer(x + splitmix64_gamma).
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  return splitmix64_finalizer(x + splitmix64_gamma);
}

}  // namespace cputrain
