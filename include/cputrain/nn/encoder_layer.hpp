// cputrain::nn::encoder_layer — one BERT transformer layer (BertLayer), forward and backward:
//   a   = self_attention(x)                              (query/key/value, softmax, dropout, context)
//   h1  = LayerNorm(dropout(attention.output.dense(a)) + x)
//   f   = gelu(intermediate.dense(h1))
//   out = LayerNorm(dropout(output.dense(f)) + h1)
// The hidden state between layers stays float (the residual stream, as under PyTorch autocast); what backward
// needs is kept in the activation type A (float, or bf16 under bf16 mixed precision), whose copies also serve
// as the GEMM operands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/gelu.hpp"
#include "cputrain/kernels/layer_norm.hpp"
#include "cputrain/nn/attention.hpp"
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
};

/// Float scratch shared by all layers, reused: T x H four times, T x I once.
struct layer_scratch {
  float* h_a = nullptr;  // [T, H]
  float* h_b = nullptr;  // [T, H]
  float* h_c = nullptr;  // [T, H]
  float* h_d = nullptr;  // [T, H]
  float* ff = nullptr;   // [T, I]
};

/// Where this step's dropout draws come from; every dropout site of every layer has its own stream.
struct layer_dropout {
  float hidden_p = 0.0f;
  float attention_p = 0.0f;
  std::uint64_t seed = 0;
  std::uint64_t attention_stream = 0, attention_output_stream = 0, output_stream = 0;
};

/// Stores a float tensor as the activation type: a no-op when A is float and the tensor was computed in place.
template <class A>
void keep(const float* computed, A* kept, std::size_t n) {
  if constexpr (std::is_same_v<A, float>) {
    if (computed != kept) std::copy(computed, computed + n, kept);
  } else {
    cputrain::to_bf16(std::span<const float>(computed, n), std::span<A>(kept, n));
  }
}

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

struct encoder_layer {
  linear query, key, value, attention_output, intermediate, output;
  std::size_t ln1_weight = 0, ln1_bias = 0, ln2_weight = 0, ln2_bias = 0;
  std::size_t hidden = 0, inter = 0, heads = 0;
  float eps = 1e-12f;

  static encoder_layer create(parameter_table& table, std::size_t index, std::size_t hidden, std::size_t heads,
                              std::size_t intermediate_size, float eps) {
    const std::string p = "bert.encoder.layer." + std::to_string(index) + ".";
    encoder_layer l;
    l.hidden = hidden;
    l.inter = intermediate_size;
    l.heads = heads;
    l.eps = eps;
    l.query = linear::create(table, p + "attention.self.query", hidden, hidden);
    l.key = linear::create(table, p + "attention.self.key", hidden, hidden);
    l.value = linear::create(table, p + "attention.self.value", hidden, hidden);
    l.attention_output = linear::create(table, p + "attention.output.dense", hidden, hidden);
    l.ln1_weight = table.add(p + "attention.output.LayerNorm.weight", {static_cast<std::int64_t>(hidden)});
    l.ln1_bias = table.add(p + "attention.output.LayerNorm.bias", {static_cast<std::int64_t>(hidden)});
    l.intermediate = linear::create(table, p + "intermediate.dense", hidden, intermediate_size);
    l.output = linear::create(table, p + "output.dense", intermediate_size, hidden);
    l.ln2_weight = table.add(p + "output.LayerNorm.weight", {static_cast<std::int64_t>(hidden)});
    l.ln2_bias = table.add(p + "output.LayerNorm.bias", {static_cast<std::int64_t>(hidden)});
    return l;
  }

  /// h: [T, H] float, the layer's input on entry and its output on return. `act.x` must already hold h as kept.
  template <class A, class TW>
  void forward(const TW* gemm_weights, const float* params, const attention_shape& shape, const float* key_mask,
               const layer_dropout& drop, layer_activations<A>& act, const layer_scratch& scratch, float* h) const {
    const std::size_t T = shape.tokens(), H = hidden, I = inter;
    // Q, K, V projections, kept (they are the attention products' operands).
    float* q = compute_into(act.q, scratch.h_a);
    query.forward(gemm_weights, params, act.x, T, q);
    keep(q, act.q, T * H);
    float* k = compute_into(act.k, scratch.h_a);
    key.forward(gemm_weights, params, act.x, T, k);
    keep(k, act.k, T * H);
    float* v = compute_into(act.v, scratch.h_a);
    value.forward(gemm_weights, params, act.x, T, v);
    keep(v, act.v, T * H);

    float* context = compute_into(act.context, scratch.h_a);
    attention_forward(shape, act.q, act.k, act.v, key_mask, dropout_site{drop.attention_p, drop.seed, drop.attention_stream},
                      act.probs, context);
    keep(context, act.context, T * H);

    // h1 = LayerNorm(dropout(dense(context)) + x)
    float* ln1_in = compute_into(act.ln1_in, scratch.h_b);
    attention_output.forward(gemm_weights, params, act.context, T, ln1_in);
    kernels::dropout_forward(ln1_in, T * H, drop.hidden_p, drop.seed, drop.attention_output_stream, ln1_in);
    for (std::size_t i = 0; i < T * H; ++i) ln1_in[i] += h[i];
    keep(ln1_in, act.ln1_in, T * H);
    kernels::layer_norm_forward(ln1_in, params + ln1_weight, params + ln1_bias, eps, T, H, h, act.ln1_mean,
                                act.ln1_rstd);
    keep(h, act.h1, T * H);

    // f = gelu(intermediate(h1))
    float* ff_in = compute_into(act.ff_in, scratch.ff);
    intermediate.forward(gemm_weights, params, act.h1, T, ff_in);
    keep(ff_in, act.ff_in, T * I);
    float* ff_out = compute_into(act.ff_out, scratch.ff);
    kernels::gelu_forward(ff_in, T * I, ff_out);
    keep(ff_out, act.ff_out, T * I);

    // out = LayerNorm(dropout(output(f)) + h1)
    float* ln2_in = compute_into(act.ln2_in, scratch.h_b);
    output.forward(gemm_weights, params, act.ff_out, T, ln2_in);
    kernels::dropout_forward(ln2_in, T * H, drop.hidden_p, drop.seed, drop.output_stream, ln2_in);
    for (std::size_t i = 0; i < T * H; ++i) ln2_in[i] += h[i];
    keep(ln2_in, act.ln2_in, T * H);
    kernels::layer_norm_forward(ln2_in, params + ln2_weight, params + ln2_bias, eps, T, H, h, act.ln2_mean,
                                act.ln2_rstd);
  }

  /// dh: [T, H], the gradient of the layer's output on entry and of its input on return. Parameter gradients
  /// accumulate into `grads`.
  template <class A, class TW>
  void backward(const TW* gemm_weights, const float* params, float* grads, const attention_shape& shape,
                const layer_dropout& drop, const layer_activations<A>& act, const layer_scratch& scratch,
                float* dh) const {
    const std::size_t T = shape.tokens(), H = hidden, I = inter;
    // LayerNorm 2: dh -> d ln2_in (in place); that is also the gradient reaching h1 through the residual.
    kernels::layer_norm_backward(dh, act.ln2_in, act.ln2_mean, act.ln2_rstd, params + ln2_weight, T, H, dh,
                                 grads + ln2_weight, grads + ln2_bias);
    float* d_out = scratch.h_a;
    kernels::dropout_backward(dh, T * H, drop.hidden_p, drop.seed, drop.output_stream, d_out);
    float* d_ff = scratch.ff;
    output.backward(gemm_weights, grads, act.ff_out, d_out, T, d_ff);
    kernels::gelu_backward(d_ff, act.ff_in, T * I, d_ff);
    // d h1 = residual (dh) + intermediate's input gradient
    intermediate.backward(gemm_weights, grads, act.h1, d_ff, T, dh, /*accumulate_dx=*/true);

    // LayerNorm 1: dh -> d ln1_in (in place), also the gradient reaching x through the residual.
    kernels::layer_norm_backward(dh, act.ln1_in, act.ln1_mean, act.ln1_rstd, params + ln1_weight, T, H, dh,
                                 grads + ln1_weight, grads + ln1_bias);
    float* d_attn = scratch.h_a;
    kernels::dropout_backward(dh, T * H, drop.hidden_p, drop.seed, drop.attention_output_stream, d_attn);
    float* d_context = scratch.h_b;
    attention_output.backward(gemm_weights, grads, act.context, d_attn, T, d_context);

    float* dq = scratch.h_a;
    float* dk = scratch.h_c;
    float* dv = scratch.h_d;
    attention_backward(shape, act.q, act.k, act.v, act.probs,
                       dropout_site{drop.attention_p, drop.seed, drop.attention_stream}, d_context, dq, dk, dv);
    // d x = residual (dh) + the three projections' input gradients
    query.backward(gemm_weights, grads, act.x, dq, T, dh, true);
    key.backward(gemm_weights, grads, act.x, dk, T, dh, true);
    value.backward(gemm_weights, grads, act.x, dv, T, dh, true);
  }
};

}  // namespace cputrain::nn
