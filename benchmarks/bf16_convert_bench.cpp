// fp32 <-> bf16 bulk conversion (core/bf16_convert.hpp): the path this build compiles, every other kernel the
// build's instruction set allows, the plain loop (as the compiler vectorises it, and with vectorisation off),
// and Eigen's .cast<>(), each single-threaded, at an in-cache and an in-memory size; the public functions
// (threaded above the threshold); and the sweep behind the threading threshold. Results are in
// docs/benchmarks.md, with the command that produced them.
#include <cstddef>
#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>

#include "cputrain/core/bf16_convert.hpp"

namespace {

using cputrain::bf16;

constexpr std::int64_t in_cache = std::int64_t{1} << 14;   // 64 KiB of floats + 32 KiB of bf16: L1/L2
constexpr std::int64_t in_memory = std::int64_t{1} << 26;  // 256 MiB + 128 MiB: far past the L3

/// Activations-like data (no subnormals, no NaNs), so the avx512bf16 kernel takes its common branch.
std::vector<float> random_floats(std::size_t n) {
  std::vector<float> v(n);
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<bf16> random_bf16s(std::size_t n) {
  const std::vector<float> f = random_floats(n);
  std::vector<bf16> v(n);
  cputrain::detail::to_bf16_scalar(f.data(), v.data(), n);
  return v;
}

/// Like random_floats, but one value in 32 is a subnormal, so every block of the avx512bf16 kernel takes its
/// fix-up branch: the worst case of that kernel.
std::vector<float> floats_with_subnormals(std::size_t n) {
  std::vector<float> v = random_floats(n);
  for (std::size_t i = 5; i < n; i += 32) v[i] = std::bit_cast<float>(static_cast<std::uint32_t>(0x00012345u + i));
  return v;
}

void set_counters(benchmark::State& state, std::size_t n) {
  const auto items = static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n);
  state.SetItemsProcessed(items);
  state.SetBytesProcessed(items * static_cast<std::int64_t>(sizeof(float) + sizeof(bf16)));  // read + written
}

template <void (*Kernel)(const float*, bf16*, std::size_t)>
void to_bf16_kernel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<float> src = random_floats(n);
  std::vector<bf16> dst(n);
  for (auto _ : state) {
    Kernel(src.data(), dst.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

template <void (*Kernel)(const bf16*, float*, std::size_t)>
void to_float_kernel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<bf16> src = random_bf16s(n);
  std::vector<float> dst(n);
  for (auto _ : state) {
    Kernel(src.data(), dst.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

void to_bf16_compiled_subnormals(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<float> src = floats_with_subnormals(n);
  std::vector<bf16> dst(n);
  for (auto _ : state) {
    cputrain::detail::to_bf16_kernel(src.data(), dst.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

// The plain loop one element at a time: GCC and Clang vectorise detail::to_bf16_scalar at -O3, so this is the
// baseline a compiler that did not would give.
#if defined(__clang__)
#define CPUTRAIN_BENCH_NO_VECTORIZE
#define CPUTRAIN_BENCH_NO_VECTORIZE_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define CPUTRAIN_BENCH_NO_VECTORIZE __attribute__((optimize("no-tree-vectorize")))
#define CPUTRAIN_BENCH_NO_VECTORIZE_LOOP
#endif

CPUTRAIN_BENCH_NO_VECTORIZE __attribute__((noinline)) void to_bf16_unvectorized(const float* src, bf16* dst,
                                                                               std::size_t n) {
  CPUTRAIN_BENCH_NO_VECTORIZE_LOOP
  for (std::size_t i = 0; i < n; ++i) dst[i] = bf16::from_bits(bf16::round_to_bits(src[i]));
}

CPUTRAIN_BENCH_NO_VECTORIZE __attribute__((noinline)) void to_float_unvectorized(const bf16* src, float* dst,
                                                                                std::size_t n) {
  CPUTRAIN_BENCH_NO_VECTORIZE_LOOP
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

/// What the public function does above its threshold, at any size: the sweep that places the threshold.
void to_bf16_forced_parallel(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<float> src = random_floats(n);
  std::vector<bf16> dst(n);
  constexpr std::size_t chunk = cputrain::detail::bf16_convert_chunk;
  const std::size_t chunks = (n + chunk - 1) / chunk;
  for (auto _ : state) {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, chunks, 1),
        [&](const tbb::blocked_range<std::size_t>& r) {
          for (std::size_t c = r.begin(); c != r.end(); ++c) {
            const std::size_t begin = c * chunk;
            cputrain::detail::to_bf16_kernel(src.data() + begin, dst.data() + begin,
                                             std::min(n, begin + chunk) - begin);
          }
        },
        tbb::simple_partitioner());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

void to_bf16_eigen(benchmark::State& state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  const std::vector<float> src = random_floats(static_cast<std::size_t>(n));
  std::vector<Eigen::bfloat16> dst(static_cast<std::size_t>(n));
  const Eigen::Map<const Eigen::ArrayXf> in(src.data(), n);
  Eigen::Map<Eigen::Array<Eigen::bfloat16, Eigen::Dynamic, 1>> out(dst.data(), n);
  for (auto _ : state) {
    out = in.cast<Eigen::bfloat16>();
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, static_cast<std::size_t>(n));
}

void to_float_eigen(benchmark::State& state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  std::vector<Eigen::bfloat16> src(static_cast<std::size_t>(n));
  {
    const std::vector<float> f = random_floats(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < f.size(); ++i) src[i] = Eigen::bfloat16(f[i]);
  }
  std::vector<float> dst(static_cast<std::size_t>(n));
  const Eigen::Map<const Eigen::Array<Eigen::bfloat16, Eigen::Dynamic, 1>> in(src.data(), n);
  Eigen::Map<Eigen::ArrayXf> out(dst.data(), n);
  for (auto _ : state) {
    out = in.cast<float>();
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, static_cast<std::size_t>(n));
}

void to_bf16_public(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<float> src = random_floats(n);
  std::vector<bf16> dst(n);
  for (auto _ : state) {
    cputrain::to_bf16(src, dst);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

void to_float_public(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<bf16> src = random_bf16s(n);
  std::vector<float> dst(n);
  for (auto _ : state) {
    cputrain::to_float(src, dst);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, n);
}

void sizes(benchmark::internal::Benchmark* b) { b->Arg(in_cache)->Arg(in_memory); }

namespace d = cputrain::detail;

// The names say the kernel; "compiled" is the one bf16_conversion_isa() reports, i.e. what the public
// functions run on each chunk.
BENCHMARK(to_bf16_kernel<d::to_bf16_kernel>)->Name("to_bf16/compiled")->Apply(sizes);
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512BF16)
BENCHMARK(to_bf16_kernel<d::to_bf16_avx512bf16>)->Name("to_bf16/avx512bf16")->Apply(sizes);
#endif
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512)
BENCHMARK(to_bf16_kernel<d::to_bf16_avx512>)->Name("to_bf16/avx512")->Apply(sizes);
#endif
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX2)
BENCHMARK(to_bf16_kernel<d::to_bf16_avx2>)->Name("to_bf16/avx2")->Apply(sizes);
#endif
BENCHMARK(to_bf16_kernel<d::to_bf16_scalar>)->Name("to_bf16/scalar")->Apply(sizes);
BENCHMARK(to_bf16_kernel<to_bf16_unvectorized>)->Name("to_bf16/scalar_unvectorized")->Apply(sizes);
BENCHMARK(to_bf16_compiled_subnormals)->Name("to_bf16/compiled_1_in_32_subnormal")->Arg(in_cache);
BENCHMARK(to_bf16_eigen)->Name("to_bf16/eigen_cast")->Apply(sizes);
BENCHMARK(to_bf16_public)->Name("to_bf16/public_threaded")->Arg(in_memory)->UseRealTime();

BENCHMARK(to_float_kernel<d::to_float_kernel>)->Name("to_float/compiled")->Apply(sizes);
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX512)
BENCHMARK(to_float_kernel<d::to_float_avx512>)->Name("to_float/avx512")->Apply(sizes);
#endif
#if defined(CPUTRAIN_BF16_CONVERT_HAVE_AVX2)
BENCHMARK(to_float_kernel<d::to_float_avx2>)->Name("to_float/avx2")->Apply(sizes);
#endif
BENCHMARK(to_float_kernel<d::to_float_scalar>)->Name("to_float/scalar")->Apply(sizes);
BENCHMARK(to_float_kernel<to_float_unvectorized>)->Name("to_float/scalar_unvectorized")->Apply(sizes);
BENCHMARK(to_float_eigen)->Name("to_float/eigen_cast")->Apply(sizes);
BENCHMARK(to_float_public)->Name("to_float/public_threaded")->Arg(in_memory)->UseRealTime();

// Threading threshold: one thread vs the chunked parallel_for, on data that stays in cache between iterations
// (as a freshly written activation would be).
void threshold_sizes(benchmark::internal::Benchmark* b) {
  for (int log2 = 15; log2 <= 19; ++log2) b->Arg(std::int64_t{1} << log2);
}
BENCHMARK(to_bf16_kernel<d::to_bf16_kernel>)->Name("threshold/one_thread")->Apply(threshold_sizes)->UseRealTime();
BENCHMARK(to_bf16_forced_parallel)->Name("threshold/parallel_for")->Apply(threshold_sizes)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
