// Measured floating-point peak of this machine, for "% of peak" figures: a timed loop of independent vector
// FMAs (enough chains to cover the FMA latency on two pipes), per thread and for N threads at once. A measured
// peak includes the boost clock that a nominal figure (cores x GHz x FLOP/cycle) leaves out.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <immintrin.h>

namespace cputrain::bench {

/// FLOP/s of one thread running independent FMAs for about `seconds`.
inline double fma_loop_flops(double seconds = 0.2) {
#if defined(__AVX512F__)
  using vec = __m512;
  constexpr int lanes = 16;
  auto fma = [](vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); };
  auto set = [](float x) { return _mm512_set1_ps(x); };
  auto sum = [](vec v) {  // not _mm512_reduce_add_ps: GCC 12 warns inside its expansion
    alignas(64) float f[16];
    _mm512_store_ps(f, v);
    float s = 0;
    for (float x : f) s += x;
    return s;
  };
#elif defined(__AVX2__) && defined(__FMA__)
  using vec = __m256;
  constexpr int lanes = 8;
  auto fma = [](vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); };
  auto set = [](float x) { return _mm256_set1_ps(x); };
  auto sum = [](vec v) {
    alignas(32) float f[8];
    _mm256_store_ps(f, v);
    return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
  };
#else
#error "fma_peak.hpp needs AVX2+FMA or AVX-512"
#endif
  constexpr int chains = 12;  // > latency (4) x pipes (2): the loop is throughput-bound
  vec acc[chains];
  for (int i = 0; i < chains; ++i) acc[i] = set(static_cast<float>(i) * 1e-3f);
  const vec mul = set(0.999999f), add = set(1e-7f);
  std::size_t iterations = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    for (int rep = 0; rep < 1000; ++rep) {
      for (int i = 0; i < chains; ++i) acc[i] = fma(acc[i], mul, add);
    }
    iterations += 1000;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < seconds);
  float total = 0;
  for (int i = 0; i < chains; ++i) total += sum(acc[i]);
  static std::atomic<float> sink;  // keep the loop observable
  sink = total;
  return static_cast<double>(iterations) * chains * lanes * 2.0 / elapsed;
}

/// FLOP/s of `threads` threads each running the FMA loop at the same time.
inline double fma_peak_flops(int threads, double seconds = 0.2) {
  std::vector<double> per_thread(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] { per_thread[static_cast<std::size_t>(t)] = fma_loop_flops(seconds); });
  }
  for (auto& th : pool) th.join();
  double total = 0;
  for (double f : per_thread) total += f;
  return total;
}

}  // namespace cputrain::bench
