// cputrain::nn::encoder_layer — one BERT transformer layer (BertLayer), forward and backward: self-attention,
// then LayerNorm(dropout(dense) + residual), GELU feed-forward, LayerNorm again. The residual stream stays float;
// what backward needs is kept in the activation type, and the work after each product is fused per row.
#pragma once

#include "cputrain/nn/attention.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/fused.hpp"
#include "cputrain/kernels/gelu.hpp"
#include "cputrain/kernels/gemm.hpp"
#include "cputrain/kernels/layer_norm.hpp"
#include "cputrain/nn/linear.hpp"

namespace cputrain::nn {

/// What one layer keeps from forward for backward, in the activation type A. Sizes: T = tokens, H = hidden,
/// I = intermediate, P = batch * heads * seq * seq.
template <class A>
struct layer_activations {
  A* x = nullptr;         // [T, H] the layer's input (GEMM operand of query/key/value)
  A* q = nullptr;         // [T, H]
  A* k = nullptr;         // [T, H]
  A* v = nullptr;         // [T, H]
  A* probs = nullptr;     // [P] attention probabilities before dropout
  A* context = nullptr;   // [T, H] (GEMM operand of attention.output.dense)
  A* ln1_in = nullptr;    // [T, H] dropout(attention output) + x
  A* h1 = nullptr;        // [T, H] (GEMM operand of intermediate.dense)
  A* ff_in = nullptr;     // [T, I] intermediate.dense output, GELU's input
  A* ff_out = nullptr;    // [T, I] GELU's output (GEMM operand of output.dense)
  A* ln2_in = nullptr;    // [T, H] dropout(output.dense) + h1
  float* ln1_mean = nullptr;  // [T]
  float* ln1_rstd = nullptr;
  float* ln2_mean = nullptr;
  float* ln2_rstd = nullptr;

  /// Takes one layer's pieces from a workspace description (workspace_layout.hpp): the memory bill counts what
  /// this asks for, the model carves its buffers with it.
  template <class Carver>
  static layer_activations lay_out(Carver& c, std::uint64_t batch, std::uint64_t seq, std::uint64_t hidden,
                                   std::uint64_t inter, std::uint64_t heads) {
    const std::uint64_t T = batch * seq;  // the caller's tally has checked batch x seq
    layer_activations a;
    for (A** p : {&a.x, &a.q, &a.k, &a.v}) *p = c.kept({T, hidden});
    a.probs = c.kept({batch, heads, seq, seq});
    for (A** p : {&a.context, &a.ln1_in, &a.h1}) *p = c.kept({T, hidden});
    a.ff_in = c.kept({T, inter});
    a.ff_out = c.kept({T, inter});
    a.ln2_in = c.kept({T, hidden});
    for (float** p : {&a.ln1_mean, &a.ln1_rstd, &a.ln2_mean, &a.ln2_rstd}) *p = c.kept_float({T});
    return a;
  }
};

/// Float scratch shared by all layers, reused: T x H four times, T x I once.
struct layer_scratch {
  float* h_a = nullptr;  // [T, H]
  float* h_b = nullptr;  // [T, H]
  float* h_c = nullptr;  // [T, H]
  float* h_d = nullptr;  // [T, H]
  float* ff = nullptr;   // [T, I]

  /// Takes the pieces from a workspace description (workspace_layout.hpp).
  template <class Carver>
  static layer_scratch lay_out(Carver& c, std::uint64_t tokens, std::uint64_t hidden, std::uint64_t inter) {
    layer_scratch s;
    for (float** p : {&s.h_a, &s.h_b, &s.h_c, &s.h_d}) *p = c.scratch({tokens, hidden});
    s.ff = c.scratch({tokens, inter});
    return s;
  }
};

/// Where this step's dropout draws come from; every dropout site of every layer has its own stream.
struct layer_dropout {
  float hidden_p = 0.0f;            // after the feed-forward output
  float attention_output_p = 0.0f;  // after the attention's output projection (BERT's hidden_p; DistilBERT: none)
  float attention_p = 0.0f;
  std::uint64_t seed = 0;
  std::uint64_t attention_stream = 0, attention_output_stream = 0, output_stream = 0;
};

/// Where a float result should be computed: straight into the kept tensor when A is float, else into scratch.
template <class A>
float* compute_into(A* kept, float* scratch) {
  if constexpr (std::is_same_v<A, float>) {
    (void)scratch;
    return kept;
  } else {
    (void)kept;
    return scratch;
  }
}

/// Hugging Face's names of one layer's tensors (without ".weight" / ".bias"), per family.
struct layer_names {
  std::string query, key, value, attention_output, norm1, intermediate, output, norm2;

  /// BertLayer (also RoBERTa's, ELECTRA's): `<prefix>.encoder.layer.<i>.attention.self.query`, ...
  static layer_names bert(const std::string& prefix, std::size_t index) {
    const std::string p = prefix + ".encoder.layer." + std::to_string(index) + ".";
    return {p + "attention.self.query", p + "attention.self.key",   p + "attention.self.value",
            p + "attention.output.dense", p + "attention.output.LayerNorm", p + "intermediate.dense",
            p + "output.dense",         p + "output.LayerNorm"};
  }
  /// DistilBERT's TransformerBlock: `distilbert.transformer.layer.<i>.attention.q_lin`, `sa_layer_norm`, ...
  static layer_names distilbert(std::size_t index) {
    const std::string p = "distilbert.transformer.layer." + std::to_string(index) + ".";
    return {p + "attention.q_lin", p + "attention.k_lin",   p + "attention.v_lin", p + "attention.out_lin",
            p + "sa_layer_norm",   p + "ffn.lin1",          p + "ffn.lin2",        p + "output_layer_norm"};
  }
};

struct encoder_layer {
  linear query, key, value, attention_output, intermediate, output;
  std::size_t ln1_weight = 0, ln1_bias = 0, ln2_weight = 0, ln2_bias = 0;
  std::size_t hidden = 0, inter = 0, heads = 0;
  float eps = 1e-12f;

  template <parameter_registry R>
  static encoder_layer create(R& table, const layer_names& names, std::size_t hidden, std::size_t heads,
                              std::size_t intermediate_size, float eps) {
    encoder_layer l;
    l.hidden = hidden;
    l.inter = intermediate_size;
    l.heads = heads;
    l.eps = eps;
    const auto h = static_cast<std::int64_t>(hidden);
    l.query = linear::create(table, names.query, hidden, hidden);
    l.key = linear::create(table, names.key, hidden, hidden);
    l.value = linear::create(table, names.value, hidden, hidden);
    l.attention_output = linear::create(table, names.attention_output, hidden, hidden);
    l.ln1_weight = table.add(names.norm1 + ".weight", {h}, parameter_role::norm_weight);
    l.ln1_bias = table.add(names.norm1 + ".bias", {h}, parameter_role::norm_bias);
    l.intermediate = linear::create(table, names.intermediate, hidden, intermediate_size);
    l.output = linear::create(table, names.output, intermediate_size, hidden);
    l.ln2_weight = table.add(names.norm2 + ".weight", {h}, parameter_role::norm_weight);
    l.ln2_bias = table.add(names.norm2 + ".bias", {h}, parameter_role::norm_bias);
    return l;
  }

  /// h: [T, H] float, the layer's input on entry and its output on return. `act.x` must already hold h as kept.
  template <class A, class TW>
  void forward(const TW* gemm_weights, const float* params, const attention_shape& shape, const float* key_mask,
               const layer_dropout& drop, layer_activations<A>& act, const layer_scratch& scratch, float* h) const {
    const std::size_t T = shape.tokens(), H = hidden;
    // Q, K, V projections, kept (they are the attention products' operands); the bias is added as rows are kept.
    for (auto [projection, kept] : {std::pair{&query, act.q}, std::pair{&key, act.k}, std::pair{&value, act.v}}) {
      float* y = compute_into(kept, scratch.h_a);
      product(gemm_weights, *projection, act.x, T, y);
      kernels::bias_keep(params + projection->bias, T, H, y, kept);
    }

    float* context = compute_into(act.context, scratch.h_a);
    attention_forward(shape, act.q, act.k, act.v, key_mask, kernels::dropout_draw{drop.attention_p, drop.seed, drop.attention_stream},
                      act.probs, context);
    kernels::keep(context, act.context, T * H);

    // h1 = LayerNorm(dropout(dense(context)) + x)
    float* ln1_in = compute_into(act.ln1_in, scratch.h_b);
    product(gemm_weights, attention_output, act.context, T, ln1_in);
    kernels::bias_dropout_residual_layer_norm(params + attention_output.bias,
                                              {drop.attention_output_p, drop.seed, drop.attention_output_stream},
                                              params + ln1_weight, params + ln1_bias, eps, T, H, ln1_in, act.ln1_in, h,
                                              act.ln1_mean, act.ln1_rstd, act.h1);

    // f = gelu(intermediate(h1))
    float* ff_in = compute_into(act.ff_in, scratch.ff);
    product(gemm_weights, intermediate, act.h1, T, ff_in);
    kernels::bias_gelu_keep(params + intermediate.bias, T, inter, ff_in, act.ff_in, act.ff_out);

    // out = LayerNorm(dropout(output(f)) + h1)
    float* ln2_in = compute_into(act.ln2_in, scratch.h_b);
    product(gemm_weights, output, act.ff_out, T, ln2_in);
    kernels::bias_dropout_residual_layer_norm(params + output.bias, {drop.hidden_p, drop.seed, drop.output_stream},
                                              params + ln2_weight, params + ln2_bias, eps, T, H, ln2_in, act.ln2_in, h,
                                              act.ln2_mean, act.ln2_rstd, static_cast<A*>(nullptr));
  }

  /// dh: [T, H], the gradient of the layer's output on entry and of its input on return. Parameter gradients
  /// accumulate into `grads`.
  template <class A, class TW>
  void backward(const TW* gemm_weights, const float* params, float* grads, const attention_shape& shape,
                const layer_dropout& drop, const layer_activations<A>& act, const layer_scratch& scratch,
                float* dh) const {
    const std::size_t T = shape.tokens(), H = hidden, I = inter;
    // LayerNorm 2: dh -> d ln2_in (in place; also the gradient reaching h1 through the residual), and each row
    // through dropout into d_out while it is in cache.
    float* d_out = scratch.h_a;
    kernels::layer_norm_backward(dh, act.ln2_in, act.ln2_mean, act.ln2_rstd, params + ln2_weight, T, H, dh,
                                 grads + ln2_weight, grads + ln2_bias,
                                 kernels::dropout_rows({drop.hidden_p, drop.seed, drop.output_stream}, H, d_out));
    float* d_ff = scratch.ff;
    output.backward(gemm_weights, grads, act.ff_out, d_out, T, d_ff);
    kernels::gelu_backward(d_ff, act.ff_in, T * I, d_ff);
    // d h1 = residual (dh) + intermediate's input gradient
    intermediate.backward(gemm_weights, grads, act.h1, d_ff, T, dh, /*accumulate_dx=*/true);

    // LayerNorm 1: dh -> d ln1_in (in place, also the gradient reaching x through the residual), and d_attn.
    float* d_attn = scratch.h_a;
    kernels::layer_norm_backward(dh, act.ln1_in, act.ln1_mean, act.ln1_rstd, params + ln1_weight, T, H, dh,
                                 grads + ln1_weight, grads + ln1_bias,
                                 kernels::dropout_rows(
                                     {drop.attention_output_p, drop.seed, drop.attention_output_stream}, H, d_attn));
    float* d_context = scratch.h_b;
    attention_output.backward(gemm_weights, grads, act.context, d_attn, T, d_context);

    float* dq = scratch.h_a;
    float* dk = scratch.h_c;
    float* dv = scratch.h_d;
    attention_backward(shape, act.q, act.k, act.v, act.probs,
                       kernels::dropout_draw{drop.attention_p, drop.seed, drop.attention_stream}, d_context, dq, dk, dv);
    // d x = residual (dh) + the three projections' input gradients
    query.backward(gemm_weights, grads, act.x, dq, T, dh, true);
    key.backward(gemm_weights, grads, act.x, dk, T, dh, true);
    value.backward(gemm_weights, grads, act.x, dv, T, dh, true);
  }

 private:
  /// y[T, l.out] = x W^T: linear::forward without its bias, which the fused pass that follows adds.
  template <class TW, class TX>
  static void product(const TW* gemm_weights, const linear& l, const TX* x, std::size_t T, float* y) {
    kernels::gemm(kernels::transpose::no, kernels::transpose::yes, T, l.out, l.in, 1.0f, x, l.in,
                  gemm_weights + l.weight, l.in, 0.0f, y, l.out);
  }
};

}  // namespace cputrain::nn
