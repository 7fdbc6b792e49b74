// Tests for include/cputrain/nn/encoder_layer.hpp: one whole BERT layer, forward against a double reference written
// here (BertLayer: self-attention with a padded key mask, output dense + dropout + residual + LayerNorm, GELU
// feed-forward, dropout + residual + LayerNorm) and backward — the input gradient and every parameter gradient —
// against central differences of that reference, with fp32 and with bf16 activations, dropout off and on; and the
// layer's fused passes against the unfused composition of the public kernels, bit for bit.
#include <catch2/catch.hpp>

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cputrain/core/bf16.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/gelu.hpp"
#include "cputrain/kernels/layer_norm.hpp"
#include "cputrain/kernels/softmax.hpp"
#include "cputrain/nn/encoder_layer.hpp"
#include "cputrain/nn/parameters.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace encoder_layer_test {

using cputrain::bf16;
using cputrain::nn::attention_shape;
using cputrain::nn::encoder_layer;
using cputrain::nn::layer_activations;
using cputrain::nn::layer_dropout;
using cputrain::nn::layer_scratch;
using cputrain::nn::linear;
using cputrain::nn::parameter_table;

namespace {

using vec = std::vector<double>;

struct fixture {
  attention_shape shape{2, 4, 2, 4};  // batch, seq, heads, head_dim: hidden 8, 8 tokens
  std::size_t inter = 16;
  float eps = 1e-12f;
  parameter_table table;
  encoder_layer layer;
  std::vector<float> params, input, w, mask;  // w: weights of the objective L = sum(w * output)
  layer_dropout drop;

  explicit fixture(layer_dropout d, unsigned seed) : drop(d) {
    table.add("before.weight", {3}, cputrain::nn::parameter_role::weight);
    layer = encoder_layer::create(table, cputrain::nn::layer_names::bert("bert", 0), shape.hidden(), shape.heads, inter, eps);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    params.assign(table.total_size(), 0.0f);
    for (const auto& p : table.entries()) {
      const bool ln_weight = p.name.find("LayerNorm.weight") != std::string::npos;
      const bool bias = p.name.ends_with(".bias");
      for (std::size_t i = 0; i < p.size; ++i) {
        params[p.offset + i] = ln_weight ? 1.0f + 0.2f * u(rng) : bias ? 0.1f * u(rng) : 0.5f * u(rng);
      }
    }
    const std::size_t n = shape.tokens() * shape.hidden();
    input.resize(n);
    w.resize(n);
    for (auto& x : input) x = u(rng);
    for (auto& x : w) x = u(rng);
    mask.assign(shape.tokens(), 0.0f);
    mask[shape.seq * 2 - 1] = cputrain::kernels::attention_mask_min;  // sequence 1: last key padded
  }

  // ---- the double reference ----
  vec dense(const vec& p, const linear& l, const vec& x) const {
    const std::size_t T = shape.tokens();
    vec y(T * l.out);
    for (std::size_t t = 0; t < T; ++t) {
      for (std::size_t o = 0; o < l.out; ++o) {
        double s = p[l.bias + o];
        for (std::size_t i = 0; i < l.in; ++i) s += x[t * l.in + i] * p[l.weight + o * l.in + i];
        y[t * l.out + o] = s;
      }
    }
    return y;
  }
  vec layer_norm(const vec& p, std::size_t weight, std::size_t bias, const vec& x) const {
    const std::size_t T = shape.tokens(), H = shape.hidden();
    vec y(x.size());
    for (std::size_t t = 0; t < T; ++t) {
      double mean = 0, var = 0;
      for (std::size_t j = 0; j < H; ++j) mean += x[t * H + j];
      mean /= static_cast<double>(H);
      for (std::size_t j = 0; j < H; ++j) var += (x[t * H + j] - mean) * (x[t * H + j] - mean);
      const double rstd = 1 / std::sqrt(var / static_cast<double>(H) + eps);
      for (std::size_t j = 0; j < H; ++j) y[t * H + j] = (x[t * H + j] - mean) * rstd * p[weight + j] + p[bias + j];
    }
    return y;
  }
  void hidden_dropout(vec& x, std::uint64_t stream, float p) const {
    if (p == 0.0f) return;
    const double scale = cputrain::kernels::dropout_scale(p);
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = cputrain::kernels::dropout_keeps(drop.seed, stream, i, p) ? x[i] * scale : 0.0;
    }
  }
  vec attention(const vec& q, const vec& k, const vec& v) const {
    const std::size_t S = shape.seq, D = shape.head_dim, H = shape.hidden();
    const double scale = 1 / std::sqrt(static_cast<double>(D));
    const double keep_scale = drop.attention_p > 0 ? cputrain::kernels::dropout_scale(drop.attention_p) : 1.0;
    vec context(q.size(), 0.0);
    for (std::size_t g = 0; g < shape.groups(); ++g) {
      const std::size_t b = g / shape.heads, h = g % shape.heads;
      for (std::size_t i = 0; i < S; ++i) {
        vec z(S);
        double max = -INFINITY, sum = 0;
        for (std::size_t j = 0; j < S; ++j) {
          double dot = 0;
          for (std::size_t d = 0; d < D; ++d) dot += q[(b * S + i) * H + h * D + d] * k[(b * S + j) * H + h * D + d];
          z[j] = dot * scale + mask[b * S + j];
          max = std::max(max, z[j]);
        }
        for (std::size_t j = 0; j < S; ++j) sum += (z[j] = std::exp(z[j] - max));
        for (std::size_t j = 0; j < S; ++j) {
          double p = z[j] / sum;
          if (drop.attention_p > 0) {
            p = cputrain::kernels::dropout_keeps(drop.seed, drop.attention_stream, g * S * S + i * S + j,
                                                 drop.attention_p)
                    ? p * keep_scale
                    : 0.0;
          }
          for (std::size_t d = 0; d < D; ++d) context[(b * S + i) * H + h * D + d] += p * v[(b * S + j) * H + h * D + d];
        }
      }
    }
    return context;
  }
  vec reference(const vec& p, const vec& x) const {
    const auto context = attention(dense(p, layer.query, x), dense(p, layer.key, x), dense(p, layer.value, x));
    auto a = dense(p, layer.attention_output, context);
    hidden_dropout(a, drop.attention_output_stream, drop.attention_output_p);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += x[i];
    const auto h1 = layer_norm(p, layer.ln1_weight, layer.ln1_bias, a);
    auto f = dense(p, layer.intermediate, h1);
    for (auto& e : f) e = 0.5 * e * (1 + std::erf(e / std::sqrt(2.0)));
    auto o = dense(p, layer.output, f);
    hidden_dropout(o, drop.output_stream, drop.hidden_p);
    for (std::size_t i = 0; i < o.size(); ++i) o[i] += h1[i];
    return layer_norm(p, layer.ln2_weight, layer.ln2_bias, o);
  }
  double objective(const vec& p, const vec& x) const {
    const auto y = reference(p, x);
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i) l += w[i] * y[i];
    return l;
  }

  // ---- the layer under test ----
  struct result {
    std::vector<float> output, dinput, grads;
  };
  template <class A>
  result run(const std::vector<float>& initial_grads) const {
    const std::size_t T = shape.tokens(), H = shape.hidden(), I = inter, P = shape.probs_size();
    std::vector<A> x(T * H), q(T * H), k(T * H), v(T * H), probs(P), context(T * H), ln1_in(T * H), h1(T * H),
        ff_in(T * I), ff_out(T * I), ln2_in(T * H);
    std::vector<float> stats(4 * T), ha(T * H), hb(T * H), hc(T * H), hd(T * H), ff(T * I);
    layer_activations<A> act{x.data(),      q.data(),      k.data(),        v.data(),         probs.data(),
                             context.data(), ln1_in.data(), h1.data(),       ff_in.data(),     ff_out.data(),
                             ln2_in.data(),  stats.data(),  stats.data() + T, stats.data() + 2 * T,
                             stats.data() + 3 * T};
    const layer_scratch scratch{ha.data(), hb.data(), hc.data(), hd.data(), ff.data()};
    std::vector<A> gemm_weights(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) gemm_weights[i] = A(params[i]);

    result r{input, w, initial_grads};
    cputrain::kernels::keep(r.output.data(), act.x, T * H);
    layer.forward(gemm_weights.data(), params.data(), shape, mask.data(), drop, act, scratch, r.output.data());
    layer.backward(gemm_weights.data(), params.data(), r.grads.data(), shape, drop, act, scratch, r.dinput.data());
    return r;
  }
};

/// Largest |got - want| over a tensor, relative to its largest |want|, but never to less than `floor` (a tensor whose
/// exact gradient is zero — the key bias: softmax ignores a shift of all of a row's scores — holds rounding noise).
double relative_error(const float* got, const vec& want, double floor) {
  double worst = 0, scale = floor;
  for (std::size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return worst / scale;
}

struct numeric_gradients {
  vec dinput, dparams;
  double scale = 0;  // largest |gradient| of any parameter
};

numeric_gradients finite_differences(const fixture& f) {
  vec p(f.params.begin(), f.params.end()), x(f.input.begin(), f.input.end());
  auto derivative = [&](double& e) {
    const double saved = e, h = 1e-5;
    e = saved + h;
    const double up = f.objective(p, x);
    e = saved - h;
    const double down = f.objective(p, x);
    e = saved;
    return (up - down) / (2 * h);
  };
  numeric_gradients g;
  for (auto& e : x) g.dinput.push_back(derivative(e));
  g.dparams.assign(p.size(), 0.0);
  for (const auto& info : f.table.entries()) {
    for (std::size_t i = info.offset; i < info.offset + info.size; ++i) {
      g.dparams[i] = derivative(p[i]);
      g.scale = std::max(g.scale, std::abs(g.dparams[i]));
    }
  }
  return g;
}

/// Runs the layer with activations A and checks output, input gradient and every parameter gradient.
template <class A>
void check_layer(const fixture& f, double forward_tolerance, double gradient_tolerance) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> initial(f.params.size());
  for (auto& e : initial) e = u(rng);
  const auto r = f.template run<A>(initial);
  const vec p(f.params.begin(), f.params.end()), x(f.input.begin(), f.input.end());
  CHECK(relative_error(r.output.data(), f.reference(p, x), 0) < forward_tolerance);

  const auto g = finite_differences(f);
  REQUIRE(g.scale > 1e-2);
  CHECK(relative_error(r.dinput.data(), g.dinput, 0) < gradient_tolerance);
  for (const auto& info : f.table.entries()) {
    std::vector<float> added(info.size);
    for (std::size_t i = 0; i < info.size; ++i) added[i] = r.grads[info.offset + i] - initial[info.offset + i];
    const vec want(g.dparams.begin() + static_cast<std::ptrdiff_t>(info.offset),
                   g.dparams.begin() + static_cast<std::ptrdiff_t>(info.offset + info.size));
    INFO(info.name);
    if (info.name == "before.weight") {
      for (std::size_t i = 0; i < info.size; ++i) CHECK(added[i] == 0.0f);  // not the layer's
      continue;
    }
    CHECK(relative_error(added.data(), want, 1e-2 * g.scale) < gradient_tolerance);
  }
}

}  // namespace

TEST_CASE("encoder_layer::create registers BertLayer's sixteen tensors with Hugging Face names") {
  parameter_table t;
  const auto l = encoder_layer::create(t, cputrain::nn::layer_names::bert("bert", 3), 8, 2, 32, 1e-12f);
  const std::string p = "bert.encoder.layer.3.";
  CHECK(t.entries().size() == 16);
  CHECK(t.at(p + "attention.self.query.weight").shape == std::vector<std::int64_t>{8, 8});
  CHECK(t.at(p + "attention.self.key.bias").shape == std::vector<std::int64_t>{8});
  CHECK(t.at(p + "attention.self.value.weight").offset == l.value.weight);
  CHECK(t.at(p + "attention.output.dense.weight").offset == l.attention_output.weight);
  CHECK(t.at(p + "attention.output.LayerNorm.weight").offset == l.ln1_weight);
  CHECK(t.at(p + "attention.output.LayerNorm.bias").offset == l.ln1_bias);
  CHECK(t.at(p + "intermediate.dense.weight").shape == std::vector<std::int64_t>{32, 8});
  CHECK(t.at(p + "output.dense.weight").shape == std::vector<std::int64_t>{8, 32});
  CHECK(t.at(p + "output.LayerNorm.weight").offset == l.ln2_weight);
  CHECK(t.at(p + "output.LayerNorm.bias").offset == l.ln2_bias);
  using cputrain::nn::parameter_role;
  for (const char* ln : {"attention.output.LayerNorm.", "output.LayerNorm."}) {
    CHECK(t.at(p + ln + "weight").role == parameter_role::norm_weight);
    CHECK(t.at(p + ln + "bias").role == parameter_role::norm_bias);
  }
  CHECK(t.at(p + "intermediate.dense.weight").role == parameter_role::weight);
  CHECK(t.at(p + "intermediate.dense.bias").role == parameter_role::bias);
  CHECK(l.hidden == 8);
  CHECK(l.inter == 32);
  CHECK(l.heads == 2);
}

TEST_CASE("encoder_layer fp32: forward and every gradient match the double reference, dropout off") {
  const fixture f({}, 1);
  check_layer<float>(f, 1e-6, 1e-5);
}

TEST_CASE("encoder_layer fp32: forward and every gradient match the double reference, dropout on") {
  layer_dropout d;
  d.hidden_p = d.attention_output_p = 0.2f;
  d.attention_p = 0.2f;
  d.seed = 42;
  d.attention_stream = 1;
  d.attention_output_stream = 2;
  d.output_stream = 3;
  const fixture f(d, 2);
  check_layer<float>(f, 1e-6, 1e-5);
  // The same step twice gives the same bits; another seed another result.
  const std::vector<float> zero(f.params.size(), 0.0f);
  const auto a = f.run<float>(zero), b = f.run<float>(zero);
  CHECK(a.output == b.output);
  CHECK(a.dinput == b.dinput);
  CHECK(a.grads == b.grads);
  auto other_drop = d;
  other_drop.seed = 43;
  fixture g(other_drop, 2);
  CHECK(g.run<float>(zero).output != a.output);
}

TEST_CASE("encoder_layer bf16 activations: forward and every gradient close to the double reference") {
  const fixture off({}, 3);
  check_layer<bf16>(off, 1e-2, 2e-2);
  layer_dropout d;
  d.hidden_p = d.attention_output_p = 0.1f;
  d.attention_p = 0.1f;
  d.seed = 7;
  d.attention_stream = 10;
  d.attention_output_stream = 11;
  d.output_stream = 12;
  const fixture on(d, 4);
  check_layer<bf16>(on, 1e-2, 2e-2);
}

namespace {

/// Every buffer one layer's forward and backward need, for activations A.
template <class A>
struct layer_buffers {
  std::vector<A> x, q, k, v, probs, context, ln1_in, h1, ff_in, ff_out, ln2_in;
  std::vector<float> stats, ha, hb, hc, hd, ff;
  layer_activations<A> act;
  layer_scratch scratch;

  layer_buffers(const attention_shape& shape, std::size_t I) {
    const std::size_t T = shape.tokens(), H = shape.hidden();
    for (auto* b : {&x, &q, &k, &v, &context, &ln1_in, &h1, &ln2_in}) b->resize(T * H);
    for (auto* b : {&ff_in, &ff_out}) b->resize(T * I);
    probs.resize(shape.probs_size());
    stats.resize(4 * T);
    for (auto* b : {&ha, &hb, &hc, &hd}) b->resize(T * H);
    ff.resize(T * I);
    act = {x.data(),      q.data(),      k.data(),     v.data(),      probs.data(),     context.data(),
           ln1_in.data(), h1.data(),     ff_in.data(), ff_out.data(), ln2_in.data(),    stats.data(),
           stats.data() + T, stats.data() + 2 * T, stats.data() + 3 * T};
    scratch = {ha.data(), hb.data(), hc.data(), hd.data(), ff.data()};
  }
};

/// The layer as it was before its passes were fused: every kernel over the whole tensor, one after another.
template <class A, class TW>
void unfused_forward(const encoder_layer& l, const TW* gw, const float* params, const attention_shape& shape,
                     const float* key_mask, const layer_dropout& drop, layer_activations<A>& act,
                     const layer_scratch& scratch, float* h) {
  using cputrain::nn::compute_into;
  using cputrain::kernels::keep;
  namespace kn = cputrain::kernels;
  const std::size_t T = shape.tokens(), H = l.hidden, I = l.inter;
  for (auto [lin, kept] : {std::pair{&l.query, act.q}, std::pair{&l.key, act.k}, std::pair{&l.value, act.v}}) {
    float* out = compute_into(kept, scratch.h_a);
    lin->forward(gw, params, act.x, T, out);
    keep(out, kept, T * H);
  }
  float* context = compute_into(act.context, scratch.h_a);
  cputrain::nn::attention_forward(shape, act.q, act.k, act.v, key_mask,
                                  cputrain::kernels::dropout_draw{drop.attention_p, drop.seed, drop.attention_stream},
                                  act.probs, context);
  keep(context, act.context, T * H);
  float* ln1_in = compute_into(act.ln1_in, scratch.h_b);
  l.attention_output.forward(gw, params, act.context, T, ln1_in);
  kn::dropout_forward(ln1_in, T * H, drop.attention_output_p, drop.seed, drop.attention_output_stream, ln1_in);
  for (std::size_t i = 0; i < T * H; ++i) ln1_in[i] += h[i];
  keep(ln1_in, act.ln1_in, T * H);
  kn::layer_norm_forward(ln1_in, params + l.ln1_weight, params + l.ln1_bias, l.eps, T, H, h, act.ln1_mean,
                         act.ln1_rstd);
  keep(h, act.h1, T * H);
  float* ff_in = compute_into(act.ff_in, scratch.ff);
  l.intermediate.forward(gw, params, act.h1, T, ff_in);
  keep(ff_in, act.ff_in, T * I);
  float* ff_out = compute_into(act.ff_out, scratch.ff);
  kn::gelu_forward(ff_in, T * I, ff_out);
  keep(ff_out, act.ff_out, T * I);
  float* ln2_in = compute_into(act.ln2_in, scratch.h_b);
  l.output.forward(gw, params, act.ff_out, T, ln2_in);
  kn::dropout_forward(ln2_in, T * H, drop.hidden_p, drop.seed, drop.output_stream, ln2_in);
  for (std::size_t i = 0; i < T * H; ++i) ln2_in[i] += h[i];
  keep(ln2_in, act.ln2_in, T * H);
  kn::layer_norm_forward(ln2_in, params + l.ln2_weight, params + l.ln2_bias, l.eps, T, H, h, act.ln2_mean,
                         act.ln2_rstd);
}

template <class A, class TW>
void unfused_backward(const encoder_layer& l, const TW* gw, const float* params, float* grads,
                      const attention_shape& shape, const layer_dropout& drop, const layer_activations<A>& act,
                      const layer_scratch& scratch, float* dh) {
  namespace kn = cputrain::kernels;
  const std::size_t T = shape.tokens(), H = l.hidden, I = l.inter;
  kn::layer_norm_backward(dh, act.ln2_in, act.ln2_mean, act.ln2_rstd, params + l.ln2_weight, T, H, dh,
                          grads + l.ln2_weight, grads + l.ln2_bias);
  kn::dropout_backward(dh, T * H, drop.hidden_p, drop.seed, drop.output_stream, scratch.h_a);
  l.output.backward(gw, grads, act.ff_out, scratch.h_a, T, scratch.ff);
  kn::gelu_backward(scratch.ff, act.ff_in, T * I, scratch.ff);
  l.intermediate.backward(gw, grads, act.h1, scratch.ff, T, dh, true);
  kn::layer_norm_backward(dh, act.ln1_in, act.ln1_mean, act.ln1_rstd, params + l.ln1_weight, T, H, dh,
                          grads + l.ln1_weight, grads + l.ln1_bias);
  kn::dropout_backward(dh, T * H, drop.attention_output_p, drop.seed, drop.attention_output_stream, scratch.h_a);
  l.attention_output.backward(gw, grads, act.context, scratch.h_a, T, scratch.h_b);
  cputrain::nn::attention_backward(shape, act.q, act.k, act.v, act.probs,
                                   cputrain::kernels::dropout_draw{drop.attention_p, drop.seed, drop.attention_stream},
                                   scratch.h_b, scratch.h_a, scratch.h_c, scratch.h_d);
  l.query.backward(gw, grads, act.x, scratch.h_a, T, dh, true);
  l.key.backward(gw, grads, act.x, scratch.h_c, T, dh, true);
  l.value.backward(gw, grads, act.x, scratch.h_d, T, dh, true);
}

struct layer_outputs {
  std::vector<float> output, dinput, grads;
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// One forward and backward of `layer` (fused) or of the unfused composition, in an arena of `threads`.
template <class A>
layer_outputs run_layer(bool fused, int threads, const encoder_layer& layer, const attention_shape& shape,
                        const layer_dropout& drop, const std::vector<float>& params, const std::vector<float>& input,
                        const std::vector<float>& dout, const std::vector<float>& mask) {
  layer_buffers<A> b(shape, layer.inter);
  std::vector<A> gw(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) gw[i] = A(params[i]);
  layer_outputs r{input, dout, std::vector<float>(params.size(), 0.25f)};
  tbb::task_arena(threads).execute([&] {
    cputrain::kernels::keep(r.output.data(), b.act.x, input.size());
    if (fused) {
      layer.forward(gw.data(), params.data(), shape, mask.data(), drop, b.act, b.scratch, r.output.data());
      layer.backward(gw.data(), params.data(), r.grads.data(), shape, drop, b.act, b.scratch, r.dinput.data());
    } else {
      unfused_forward(layer, gw.data(), params.data(), shape, mask.data(), drop, b.act, b.scratch, r.output.data());
      unfused_backward(layer, gw.data(), params.data(), r.grads.data(), shape, drop, b.act, b.scratch,
                       r.dinput.data());
    }
  });
  return r;
}

template <class A>
void check_fused_equals_unfused(float p) {
  // H = 96 and I = 200: several row blocks per pass, and rows that are not a whole number of vector blocks.
  const attention_shape shape{3, 70, 4, 24};
  const std::size_t T = shape.tokens(), H = shape.hidden(), I = 200;
  parameter_table table;
  const auto layer = encoder_layer::create(table, cputrain::nn::layer_names::bert("bert", 0), H, shape.heads, I, 1e-12f);
  std::mt19937 rng(123);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> params(table.total_size()), input(T * H), dout(T * H), mask(T, 0.0f);
  for (auto& e : params) e = 0.2f * u(rng);
  for (auto& e : input) e = u(rng);
  for (auto& e : dout) e = u(rng);
  mask[shape.seq - 1] = mask[2 * shape.seq - 3] = cputrain::kernels::attention_mask_min;
  layer_dropout drop;
  drop.hidden_p = drop.attention_output_p = drop.attention_p = p;
  drop.seed = 5;
  drop.attention_stream = 1;
  drop.attention_output_stream = 2;
  drop.output_stream = 3;
  const auto want = run_layer<A>(false, 2, layer, shape, drop, params, input, dout, mask);
  for (int threads : {1, 2}) {
    const auto got = run_layer<A>(true, threads, layer, shape, drop, params, input, dout, mask);
    INFO("threads=" << threads << " p=" << p);
    CHECK(same_bits(got.output, want.output));
    CHECK(same_bits(got.dinput, want.dinput));
    CHECK(same_bits(got.grads, want.grads));
  }
  CHECK(want.output != input);  // the layer did run
}

}  // namespace

TEST_CASE("encoder_layer's fused passes give the unfused composition's output and gradients bit for bit, fp32") {
  check_fused_equals_unfused<float>(0.0f);
  check_fused_equals_unfused<float>(0.1f);
}

TEST_CASE("encoder_layer's fused passes give the unfused composition's output and gradients bit for bit, bf16") {
  check_fused_equals_unfused<bf16>(0.0f);
  check_fused_equals_unfused<bf16>(0.1f);
}

}  // namespace encoder_layer_test
