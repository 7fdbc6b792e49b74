// GEMM throughput on the shapes a BERT training step runs, as GFLOP/s and % of this machine's measured FMA peak
// for the thread count used, with float and bf16 operands, on each backend kernels::gemm can use (eigen, onednn),
// and — for reference — oneDNN's own whole-matrix matmul threaded by its OpenMP runtime (`standalone`), which is
// what PyTorch's autocast calls.
//   cputrain-bench-gemm [--benchmark_filter=...] [--threads=N]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "cputrain/kernels/gemm.hpp"
#include "cputrain/kernels/gemm_backend.hpp"
#include "cputrain/kernels/detail/onednn_primitives.hpp"  // oneDNN's own API, for the standalone product
#include "support/fma_peak.hpp"

namespace {

int g_threads = 1;
double g_peak = 0;  // FLOP/s for g_threads threads

using cputrain::kernels::transpose;

template <class T>
std::vector<T> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<T> v(n);
  for (auto& x : v) x = T(dist(rng));
  return v;
}

// The three products of a Linear layer (Y = X W^T; dX = dY W; dW = dY^T X) at tokens x in -> out.
using cputrain::kernels::gemm_backend_choice;

template <class T>
void linear_products(benchmark::State& state, int which, gemm_backend_choice backend) {
  cputrain::kernels::set_gemm_backend(backend);
  const auto tokens = static_cast<std::size_t>(state.range(0));
  const auto in = static_cast<std::size_t>(state.range(1));
  const auto out = static_cast<std::size_t>(state.range(2));
  const auto x = random_vector<T>(tokens * in, 1);
  const auto w = random_vector<T>(out * in, 2);
  const auto dy = random_vector<T>(tokens * out, 3);
  std::vector<float> y(tokens * out), dx(tokens * in), dw(out * in);
  tbb::task_arena arena(g_threads);
  for (auto _ : state) {
    arena.execute([&] {
      if (which == 0) {  // y[tokens, out] = x[tokens, in] * w[out, in]^T
        cputrain::kernels::gemm(transpose::no, transpose::yes, tokens, out, in, 1.0f, x.data(), in, w.data(), in,
                                0.0f, y.data(), out);
      } else if (which == 1) {  // dx[tokens, in] = dy[tokens, out] * w[out, in]
        cputrain::kernels::gemm(transpose::no, transpose::no, tokens, in, out, 1.0f, dy.data(), out, w.data(), in,
                                0.0f, dx.data(), in);
      } else {  // dw[out, in] += dy[tokens, out]^T * x[tokens, in]
        cputrain::kernels::gemm(transpose::yes, transpose::no, out, in, tokens, 1.0f, dy.data(), out, x.data(), in,
                                1.0f, dw.data(), in);
      }
    });
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * static_cast<double>(tokens) * static_cast<double>(in) * static_cast<double>(out);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_%"] = benchmark::Counter(flops * 100.0 / g_peak, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = g_threads;
  cputrain::kernels::set_gemm_backend(gemm_backend_choice::automatic);
}

#if defined(CPUTRAIN_HAVE_ONEDNN)
extern "C" void omp_set_num_threads(int) __attribute__((weak));

/// oneDNN's matmul on the whole product, threaded by oneDNN itself (g_threads OpenMP threads), with the
/// default scratchpad: the throughput a program calling oneDNN directly gets.
template <class T>
void standalone_products(benchmark::State& state, int which) {
  using dt = dnnl::memory::data_type;
  const auto tokens = state.range(0), in = state.range(1), out = state.range(2);
  const dt type = std::is_same_v<T, float> ? dt::f32 : dt::bf16;
  const auto x = random_vector<T>(static_cast<std::size_t>(tokens * in), 1);
  const auto w = random_vector<T>(static_cast<std::size_t>(out * in), 2);
  const auto dy = random_vector<T>(static_cast<std::size_t>(tokens * out), 3);
  std::vector<float> result(static_cast<std::size_t>(std::max({tokens * out, tokens * in, out * in})));
  using dims = dnnl::memory::dims;
  dnnl::memory::dim m = 0, n = 0, k = 0;
  dims a_strides, b_strides;
  const void* a = nullptr;
  const void* b = nullptr;
  if (which == 0) {  // x[tokens, in] * w^T
    m = tokens, n = out, k = in, a_strides = {in, 1}, b_strides = {1, in}, a = x.data(), b = w.data();
  } else if (which == 1) {  // dy[tokens, out] * w[out, in]
    m = tokens, n = in, k = out, a_strides = {out, 1}, b_strides = {in, 1}, a = dy.data(), b = w.data();
  } else {  // dy^T * x
    m = out, n = in, k = tokens, a_strides = {1, out}, b_strides = {in, 1}, a = dy.data(), b = x.data();
  }
  if (omp_set_num_threads != nullptr) omp_set_num_threads(g_threads);
  const auto& engine = cputrain::kernels::onednn::cpu_engine();
  const dnnl::memory::desc ad({m, k}, type, a_strides), bd({k, n}, type, b_strides), cd({m, n}, dt::f32, dims{n, 1});
  dnnl::primitive_attr attr;
  if (which == 2) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, bd, cd), attr, engine);
  const dnnl::matmul product(pd);
  dnnl::stream stream(engine);
  dnnl::memory am(ad, engine, const_cast<void*>(a)), bm(bd, engine, const_cast<void*>(b)),
      cm(cd, engine, result.data());
  for (auto _ : state) {
    product.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream.wait();
    benchmark::ClobberMemory();
  }
  if (omp_set_num_threads != nullptr) omp_set_num_threads(1);
  const double flops = 2.0 * static_cast<double>(tokens) * static_cast<double>(in) * static_cast<double>(out);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_%"] = benchmark::Counter(flops * 100.0 / g_peak, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = g_threads;
  state.SetLabel(pd.impl_info_str());
}
#endif

void shapes(benchmark::internal::Benchmark* b) {
  b->Args({4096, 768, 2304})       // GLUE's shape, tokens = 32 x 128: the fused query/key/value projection
      ->Args({4096, 768, 768})     // attention output
      ->Args({4096, 768, 3072})    // feed-forward up
      ->Args({4096, 3072, 768})    // feed-forward down
      ->Args({1536, 768, 768})     // base: attention projections, tokens = 4 x 384
      ->Args({1536, 768, 3072})  // base: feed-forward up
      ->Args({1536, 3072, 768})  // base: feed-forward down
      ->Args({3072, 256, 1024})  // mini: 8 x 384 tokens
      ->Args({2048, 128, 512})   // tiny: 16 x 128 tokens
      ->Unit(benchmark::kMillisecond);
}

void fp32_eigen(benchmark::State& state, int which) { linear_products<float>(state, which, gemm_backend_choice::eigen); }
void bf16_eigen(benchmark::State& state, int which) {
  linear_products<cputrain::bf16>(state, which, gemm_backend_choice::eigen);
}

}  // namespace

BENCHMARK_CAPTURE(fp32_eigen, forward, 0)->Apply(shapes);
BENCHMARK_CAPTURE(fp32_eigen, backward_input, 1)->Apply(shapes);
BENCHMARK_CAPTURE(fp32_eigen, backward_weight, 2)->Apply(shapes);
BENCHMARK_CAPTURE(bf16_eigen, forward, 0)->Apply(shapes);
BENCHMARK_CAPTURE(bf16_eigen, backward_input, 1)->Apply(shapes);
BENCHMARK_CAPTURE(bf16_eigen, backward_weight, 2)->Apply(shapes);

#if defined(CPUTRAIN_HAVE_ONEDNN)
namespace {
void fp32_onednn(benchmark::State& state, int which) {
  linear_products<float>(state, which, gemm_backend_choice::onednn);
}
void bf16_onednn(benchmark::State& state, int which) {
  linear_products<cputrain::bf16>(state, which, gemm_backend_choice::onednn);
}
void fp32_standalone(benchmark::State& state, int which) { standalone_products<float>(state, which); }
void bf16_standalone(benchmark::State& state, int which) { standalone_products<cputrain::bf16>(state, which); }
}  // namespace
BENCHMARK_CAPTURE(fp32_onednn, forward, 0)->Apply(shapes);
BENCHMARK_CAPTURE(fp32_onednn, backward_input, 1)->Apply(shapes);
BENCHMARK_CAPTURE(fp32_onednn, backward_weight, 2)->Apply(shapes);
BENCHMARK_CAPTURE(bf16_onednn, forward, 0)->Apply(shapes);
BENCHMARK_CAPTURE(bf16_onednn, backward_input, 1)->Apply(shapes);
BENCHMARK_CAPTURE(bf16_onednn, backward_weight, 2)->Apply(shapes);
BENCHMARK_CAPTURE(fp32_standalone, forward, 0)->Apply(shapes);
BENCHMARK_CAPTURE(fp32_standalone, backward_input, 1)->Apply(shapes);
BENCHMARK_CAPTURE(fp32_standalone, backward_weight, 2)->Apply(shapes);
BENCHMARK_CAPTURE(bf16_standalone, forward, 0)->Apply(shapes);
BENCHMARK_CAPTURE(bf16_standalone, backward_input, 1)->Apply(shapes);
BENCHMARK_CAPTURE(bf16_standalone, backward_weight, 2)->Apply(shapes);
#endif

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      g_threads = std::atoi(argv[i] + 10);
    } else {
      args.push_back(argv[i]);
    }
  }
  if (g_threads < 1) {
    std::fprintf(stderr, "cputrain-bench-gemm: --threads must be a positive integer\n");
    return 2;
  }
  tbb::global_control control(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(g_threads));
  g_peak = cputrain::bench::fma_peak_flops(g_threads, 0.3);
  benchmark::AddCustomContext("threads", std::to_string(g_threads));
  benchmark::AddCustomContext("measured_fma_peak_gflops", std::to_string(g_peak * 1e-9));
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
