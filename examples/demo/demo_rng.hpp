// The demo's random draws: std::mt19937_64 with our own bounded draws, so the same seed gives the same dataset
// with any standard library (std::uniform_int_distribution and friends are not specified exactly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <utility>
#include <vector>

namespace cputrain::demo::detail {

/// Bounded draws on top of mt19937_64, whose output sequence the standard fixes.
class demo_rng {
 public:
  explicit demo_rng(std::uint64_t seed) : engine_(seed) {}

  /// Uniform in [0, n), n > 0: rejecting the top partial block keeps it unbiased.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    for (;;) {
      const std::uint64_t x = engine_();
      if (x < limit) return x % n;
    }
  }
  /// Uniform in [lo, hi].
  int between(int lo, int hi) { return lo + static_cast<int>(below(static_cast<std::uint64_t>(hi - lo) + 1)); }
  /// True with probability p (53 random bits against p).
  bool chance(double p) { return static_cast<double>(engine_() >> 11) * 0x1.0p-53 < p; }

  template <class T>
  const T& pick(std::span<const T> items) {
    return items[below(items.size())];
  }
  template <class T>
  void shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[below(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace cputrain::demo::detail
