// The element-wise and row-wise kernels of a training step on base-2 shapes (tokens = 4 x 384, hidden 768,
// intermediate 3072, 12 heads): elements/s and bytes/s, for --threads=N threads. These are memory-bound; the
// matrix products are in cputrain-bench-gemm. The encoder layer's fused passes (kernels/fused.hpp) are timed
// beside the unfused sequence of whole-tensor kernels they replace, as bf16 mixed precision runs them; both count
// the same bytes (what the fused pass must read and write), so their bytes/s compare directly.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "cputrain/core/bf16.hpp"
#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/kernels/bias.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/fused.hpp"
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

std::vector<cputrain::bf16> as_bf16(const std::vector<float>& v) {
  std::vector<cputrain::bf16> out(v.size());
  cputrain::to_bf16(std::span<const float>(v), std::span<cputrain::bf16>(out));
  return out;
}

void keep_bf16(const std::vector<float>& v, std::vector<cputrain::bf16>& kept) {
  cputrain::to_bf16(std::span<const float>(v), std::span<cputrain::bf16>(kept));
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

void layer_norm_backward_bf16(benchmark::State& state) {
  const auto x = random_vector(tokens * hidden, 1), gamma = random_vector(hidden, 2), dy = random_vector(x.size(), 3);
  std::vector<float> y(x.size()), mean(tokens), rstd(tokens), dx(x.size()), dg(hidden), db(hidden);
  cputrain::kernels::layer_norm_forward(x.data(), gamma.data(), gamma.data(), 1e-12f, tokens, hidden, y.data(),
                                        mean.data(), rstd.data());
  const auto kept = as_bf16(x);
  run(state, x.size(), 10, [&] {
    cputrain::kernels::layer_norm_backward(dy.data(), kept.data(), mean.data(), rstd.data(), gamma.data(), tokens,
                                           hidden, dx.data(), dg.data(), db.data());
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

// Query/key/value: bias, then the bf16 copy. Bytes: read y, write y, write bf16 = 10 per element.
void bias_keep_unfused(benchmark::State& state) {
  auto y = random_vector(tokens * hidden, 1);
  const auto bias = random_vector(hidden, 2);
  std::vector<cputrain::bf16> kept(y.size());
  run(state, y.size(), 10, [&] {
    cputrain::kernels::add_bias(y.data(), bias.data(), tokens, hidden);
    keep_bf16(y, kept);
  });
}

void bias_keep_fused(benchmark::State& state) {
  auto y = random_vector(tokens * hidden, 1);
  const auto bias = random_vector(hidden, 2);
  std::vector<cputrain::bf16> kept(y.size());
  run(state, y.size(), 10, [&] { cputrain::kernels::bias_keep(bias.data(), tokens, hidden, y.data(), kept.data()); });
}

// Intermediate: bias, bf16 copy of GELU's input, GELU, bf16 copy of its output. Bytes: read y, write y, write two
// bf16 copies = 12 per element.
void bias_gelu_unfused(benchmark::State& state) {
  auto y = random_vector(tokens * inter, 1);
  const auto bias = random_vector(inter, 2);
  std::vector<cputrain::bf16> in(y.size()), out(y.size());
  run(state, y.size(), 12, [&] {
    cputrain::kernels::add_bias(y.data(), bias.data(), tokens, inter);
    keep_bf16(y, in);
    cputrain::kernels::gelu_forward(y.data(), y.size(), y.data());
    keep_bf16(y, out);
  });
}

void bias_gelu_fused(benchmark::State& state) {
  auto y = random_vector(tokens * inter, 1);
  const auto bias = random_vector(inter, 2);
  std::vector<cputrain::bf16> in(y.size()), out(y.size());
  run(state, y.size(), 12,
      [&] { cputrain::kernels::bias_gelu_keep(bias.data(), tokens, inter, y.data(), in.data(), out.data()); });
}

// Attention output: bias, dropout (p = 0.1), residual, bf16 copy, LayerNorm, bf16 copy of its output. Bytes: read z
// and h, write z, its bf16 copy, h and its bf16 copy = 20 per element.
struct residual_layer_norm_data {
  std::vector<float> z = random_vector(tokens * hidden, 1), h = random_vector(tokens * hidden, 2);
  std::vector<float> bias = random_vector(hidden, 3), gamma = random_vector(hidden, 4), beta = random_vector(hidden, 5);
  std::vector<float> mean = std::vector<float>(tokens), rstd = std::vector<float>(tokens);
  std::vector<cputrain::bf16> z_kept = std::vector<cputrain::bf16>(tokens * hidden), h_kept = z_kept;
};

void residual_layer_norm_unfused(benchmark::State& state) {
  residual_layer_norm_data d;
  run(state, d.z.size(), 20, [&] {
    namespace kn = cputrain::kernels;
    kn::add_bias(d.z.data(), d.bias.data(), tokens, hidden);
    kn::dropout_forward(d.z.data(), d.z.size(), 0.1f, 1, 2, d.z.data());
    for (std::size_t i = 0; i < d.z.size(); ++i) d.z[i] += d.h[i];
    keep_bf16(d.z, d.z_kept);
    kn::layer_norm_forward(d.z.data(), d.gamma.data(), d.beta.data(), 1e-12f, tokens, hidden, d.h.data(),
                           d.mean.data(), d.rstd.data());
    keep_bf16(d.h, d.h_kept);
  });
}

void residual_layer_norm_fused(benchmark::State& state) {
  residual_layer_norm_data d;
  run(state, d.z.size(), 20, [&] {
    cputrain::kernels::bias_dropout_residual_layer_norm(d.bias.data(), {0.1f, 1, 2}, d.gamma.data(), d.beta.data(),
                                                        1e-12f, tokens, hidden, d.z.data(), d.z_kept.data(),
                                                        d.h.data(), d.mean.data(), d.rstd.data(), d.h_kept.data());
  });
}

// LayerNorm backward (input kept as bf16) and dropout's backward of its result. Bytes: read dy and x (bf16), write
// dx and the dropped gradient = 14 per element.
struct layer_norm_dropout_data {
  std::vector<float> x = random_vector(tokens * hidden, 1), gamma = random_vector(hidden, 2);
  std::vector<float> dy = random_vector(tokens * hidden, 3), dx = dy, dropped = dy, dg = gamma, db = gamma;
  std::vector<float> mean = std::vector<float>(tokens), rstd = std::vector<float>(tokens);
  std::vector<cputrain::bf16> kept = as_bf16(x);
  layer_norm_dropout_data() {
    std::vector<float> y(x.size());
    cputrain::kernels::layer_norm_forward(x.data(), gamma.data(), gamma.data(), 1e-12f, tokens, hidden, y.data(),
                                          mean.data(), rstd.data());
  }
};

void layer_norm_dropout_backward_unfused(benchmark::State& state) {
  layer_norm_dropout_data d;
  run(state, d.x.size(), 14, [&] {
    cputrain::kernels::layer_norm_backward(d.dy.data(), d.kept.data(), d.mean.data(), d.rstd.data(), d.gamma.data(),
                                           tokens, hidden, d.dx.data(), d.dg.data(), d.db.data());
    cputrain::kernels::dropout_backward(d.dx.data(), d.dx.size(), 0.1f, 1, 2, d.dropped.data());
  });
}

void layer_norm_dropout_backward_fused(benchmark::State& state) {
  layer_norm_dropout_data d;
  run(state, d.x.size(), 14, [&] {
    cputrain::kernels::layer_norm_backward(d.dy.data(), d.kept.data(), d.mean.data(), d.rstd.data(), d.gamma.data(),
                                           tokens, hidden, d.dx.data(), d.dg.data(), d.db.data(),
                                           cputrain::kernels::dropout_rows({0.1f, 1, 2}, hidden, d.dropped.data()));
  });
}

}  // namespace

BENCHMARK(layer_norm_forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(layer_norm_backward)->Unit(benchmark::kMicrosecond);
BENCHMARK(gelu_forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(gelu_backward)->Unit(benchmark::kMicrosecond);
BENCHMARK(attention_softmax_forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(dropout_forward)->Unit(benchmark::kMicrosecond);
BENCHMARK(bias_backward)->Unit(benchmark::kMicrosecond);
BENCHMARK(layer_norm_backward_bf16)->Unit(benchmark::kMicrosecond);
BENCHMARK(bias_keep_unfused)->Unit(benchmark::kMicrosecond);
BENCHMARK(bias_keep_fused)->Unit(benchmark::kMicrosecond);
BENCHMARK(bias_gelu_unfused)->Unit(benchmark::kMicrosecond);
BENCHMARK(bias_gelu_fused)->Unit(benchmark::kMicrosecond);
BENCHMARK(residual_layer_norm_unfused)->Unit(benchmark::kMicrosecond);
BENCHMARK(residual_layer_norm_fused)->Unit(benchmark::kMicrosecond);
BENCHMARK(layer_norm_dropout_backward_unfused)->Unit(benchmark::kMicrosecond);
BENCHMARK(layer_norm_dropout_backward_fused)->Unit(benchmark::kMicrosecond);

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
