// The element-wise and row-wise kernels of a training step on base-2 shapes (tokens = 4 x 384, hidden 768,
// intermediate 3072, 12 heads): elements/s and bytes/s, for --threads=N threads. These are memory-bound; the
// matrix products are in cputrain-bench-gemm.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "cputrain/kernels/bias.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/gelu.hpp"
#include "cputrain/kernels/layer_norm.hpp"
#include "cputrain/kernels/softmax.hpp"

namespace {

int g_threads = 1;
constexpr std::size_t tokens = 4 * 384, hidden = 768, inter = 3072, heads = 12, seq = 384;

std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

template <class F>
void run(benchmark::State& state, std::size_t elements, double bytes_per_element, F&& f) {
  tbb::task_arena arena(g_threads);
  for (auto _ : state) {
    arena.execute(f);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * elements));
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations() * elements) * bytes_per_element));
}

void layer_norm_forward(benchmark::State& state) {
  const auto x = random_vector(tokens * hidden, 1), gamma = random_vector(hidden, 2), beta = random_vector(hidden, 3);
  std::vector<float> y(x.size()), mean(tokens), rstd(tokens);
  run(state, x.size(), 8, [&] {
    cputrain::kernels::layer_norm_forward(x.data(), gamma.data(), beta.data(), 1e-12f, tokens, hidden, y.data(),
                                          mean.data(), rstd.data());
  });
}

void layer_norm_backward(benchmark::State& state) {
  const auto x = random_vector(tokens * hidden, 1), gamma = random_vector(hidden, 2), dy = random_vector(x.size(), 3);
  std::vector<float> y(x.size()), mean(tokens), rstd(tokens), dx(x.size()), dg(hidden), db(hidden);
  cputrain::kernels::layer_norm_forward(x.data(), gamma.data(), gamma.data(), 1e-12f, tokens, hidden, y.data(),
                                        mean.data(), rstd.data());
  run(state, x.size(), 12, [&] {
    cputrain::kernels::layer_norm_backward(dy.data(), x.data(), mean.data(), rstd.data(), gamma.data(), tokens, hidden,
                                           dx.data(), dg.data(), db.data());
  });
}

void gelu_forward(benchmark::State& state) {
  const auto x = random_vector(tokens * inter, 1);
  std::vector<float> y(x.size());
  run(state, x.size(), 8, [&] { cputrain::kernels::gelu_forward(x.data(), x.size(), y.data()); });
}

void gelu_backward(benchmark::State& state) {
  const auto x = random_vector(tokens * inter, 1), dy = random_vector(x.size(), 2);
  std::vector<float> dx(x.size());
  run(state, x.size(), 12, [&] { cputrain::kernels::gelu_backward(dy.data(), x.data(), x.size(), dx.data()); });
}

void attention_softmax_forward(benchmark::State& state) {
  const std::size_t groups = 4 * heads, n = groups * seq * seq;
  const auto scores0 = random_vector(n, 1);
  std::vector<float> scores(n), mask(4 * seq, 0.0f);
  run(state, n, 8, [&] {
    std::memcpy(scores.data(), scores0.data(), n * sizeof(float));
    cputrain::kernels::attention_softmax_forward(scores.data(), mask.data(), 0.125f, groups, heads, seq, seq);
  });
}

void dropout_forward(benchmark::State& state) {
  const auto x = random_vector(tokens * hidden, 1);
  std::vector<float> y(x.size());
  run(state, x.size(), 8, [&] { cputrain::kernels::dropout_forward(x.data(), x.size(), 0.1f, 1, 2, y.data()); });
}

void bias_backward(benchmark::State& state) {
  const auto dy = random_vector(tokens * inter, 1);
  std::vector<float> db(inter);
  run(state, dy.size(), 4, [&] { cputrain::kernels::bias_backward(dy.data(), tokens, inter, db.data()); });
}

}  // namespace

BENCHMARK(layer_norm_forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(layer_norm_backward)->Unit(benchmark::kMicrosecond);
BENCHMARK(gelu_forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(gelu_backward)->Unit(benchmark::kMicrosecond);
BENCHMARK(attention_softmax_forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(dropout_forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(bias_backward)->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      g_threads = std::atoi(argv[i] + 10);
    } else {
      args.push_back(argv[i]);
    }
  }
  if (g_threads < 1) return 2;
  tbb::global_control control(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(g_threads));
  benchmark::AddCustomContext("threads", std::to_string(g_threads));
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
