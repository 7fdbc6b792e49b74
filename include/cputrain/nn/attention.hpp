// cputrain::nn::self_attention — Hugging Face BERT's multi-head self-attention (BertSelfAttention), forward and
// backward: softmax(Q K^T / sqrt(head_dim) + mask), dropout, times V, one task per (sequence, head), heads read
// in place from the projections. Under bf16 mixed precision every product's operands are bf16, as under autocast.
#pragma once

#include "cputrain/kernels/gemm.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>

#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/softmax.hpp"
#include "cputrain/nn/linear.hpp"
#include "cputrain/policy/alloc/standard.hpp"

namespace cputrain::nn {

/// Shapes of one attention call.
struct attention_shape {
  std::size_t batch = 0, seq = 0, heads = 0, head_dim = 0;
  [[nodiscard]] std::size_t hidden() const { return heads * head_dim; }
  [[nodiscard]] std::size_t tokens() const { return batch * seq; }
  [[nodiscard]] std::size_t groups() const { return batch * heads; }
  [[nodiscard]] std::size_t probs_size() const { return groups() * seq * seq; }
};


namespace detail {
using aligned_floats = std::vector<float, alloc::allocator<float, alloc::standard>>;

/// A [seq, seq] float scratch per thread, kept between calls. 64-byte aligned on every thread: Eigen's
/// vectorised softmax treats the elements before the first aligned one with scalar code, so a buffer at another
/// offset would give other bits, and results would depend on which thread ran a head.
inline aligned_floats& attention_scratch(int which, std::size_t size) {
  thread_local aligned_floats buffers[2];
  auto& b = buffers[which];
  if (b.size() < size) b.resize(size);
  return b;
}

/// A [seq, seq] float result as a product operand of type T: itself when T is float, else rounded into a
/// per-thread bf16 scratch.
template <class T>
const T* as_operand(const float* values, std::size_t size) {
  if constexpr (std::is_same_v<T, float>) {
    (void)size;
    return values;
  } else {
    thread_local std::vector<T, alloc::allocator<T, alloc::standard>> rounded;
    if (rounded.size() < size) rounded.resize(size);
    cputrain::detail::to_bf16_kernel(values, rounded.data(), size);
    return rounded.data();
  }
}

/// dcontext [tokens, hidden] as the operand type T: itself when T is float, else rounded once (in parallel) into
/// a buffer of the calling thread.
template <class T>
const T* context_gradient_operand(const float* dcontext, std::size_t size) {
  if constexpr (std::is_same_v<T, float>) {
    (void)size;
    return dcontext;
  } else {
    thread_local std::vector<T, alloc::allocator<T, alloc::standard>> rounded;
    if (rounded.size() < size) rounded.resize(size);
    cputrain::to_bf16(std::span<const float>(dcontext, size), std::span<T>(rounded.data(), size));
    return rounded.data();
  }
}
}  // namespace detail

/// q, k, v: [tokens, hidden] (the projections, as kept); key_mask: [batch, seq] additive; probs: [groups, seq,
/// seq] written (as kept for backward); context: [tokens, hidden] written.
template <class TA, class TP>
void attention_forward(const attention_shape& s, const TA* q, const TA* k, const TA* v, const float* key_mask,
                       const kernels::dropout_draw& dropout, TP* probs, float* context) {
  using kernels::gemm;
  using kernels::gemm_threads;
  using kernels::transpose;
  const std::size_t H = s.hidden(), S = s.seq, D = s.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const kernels::dropout_stream mask(dropout.seed, dropout.stream);
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, s.groups(), 1),
      [&](const tbb::blocked_range<std::size_t>& range) {
        for (std::size_t g = range.begin(); g != range.end(); ++g) {
          const std::size_t b = g / s.heads, h = g % s.heads;
          const std::size_t head = b * S * H + h * D;  // first element of this head in a [tokens, hidden] tensor
          auto& scores = detail::attention_scratch(0, S * S);
          // scores[S, S] = Q_bh [S, D] * K_bh^T
          gemm(transpose::no, transpose::yes, S, S, D, 1.0f, q + head, H, k + head, H, 0.0f, scores.data(), S,
               gemm_threads::calling_thread);
          for (std::size_t i = 0; i < S; ++i) {
            kernels::attention_softmax_row_forward(scores.data() + i * S, key_mask + b * S, scale, S);
          }
          TP* kept = probs + g * S * S;
          if constexpr (std::is_same_v<TP, float>) {
            std::copy(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(S * S), kept);
          } else {
            cputrain::detail::to_bf16_kernel(scores.data(), kept, S * S);
          }
          if (dropout.active()) {
            float* sc = scores.data();
            kernels::for_dropout_mask(mask, g * S * S, S * S, dropout.p,
                                      [&](std::size_t i, float factor) { sc[i] *= factor; });
          }
          // context_bh [S, D] = dropout(P) [S, S] * V_bh [S, D]
          // Without dropout the kept probabilities are already the bf16 operand.
          const TA* dropped = std::is_same_v<TA, TP> && !std::is_same_v<TA, float> && !dropout.active()
                                  ? reinterpret_cast<const TA*>(kept)
                                  : detail::as_operand<TA>(scores.data(), S * S);
          gemm(transpose::no, transpose::no, S, D, S, 1.0f, dropped, S, v + head, H, 0.0f, context + head, H,
               gemm_threads::calling_thread);
        }
      },
      tbb::simple_partitioner());
}

/// dcontext: [tokens, hidden]; dq, dk, dv: [tokens, hidden] written.
template <class TA, class TP>
void attention_backward(const attention_shape& s, const TA* q, const TA* k, const TA* v, const TP* probs,
                        const kernels::dropout_draw& dropout, const float* dcontext, float* dq, float* dk, float* dv) {
  using kernels::gemm;
  using kernels::gemm_threads;
  using kernels::transpose;
  const std::size_t H = s.hidden(), S = s.seq, D = s.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const kernels::dropout_stream mask(dropout.seed, dropout.stream);
  const TA* dctx = detail::context_gradient_operand<TA>(dcontext, s.tokens() * H);
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, s.groups(), 1),
      [&](const tbb::blocked_range<std::size_t>& range) {
        for (std::size_t g = range.begin(); g != range.end(); ++g) {
          const std::size_t b = g / s.heads, h = g % s.heads;
          const std::size_t head = b * S * H + h * D;
          const TP* p = probs + g * S * S;
          auto& dropped = detail::attention_scratch(0, S * S);
          auto& dprobs = detail::attention_scratch(1, S * S);
          float* dr = dropped.data();
          float* dp = dprobs.data();
          if (dropout.active()) {
            kernels::for_dropout_mask(mask, g * S * S, S * S, dropout.p, [&](std::size_t i, float factor) {
              dr[i] = static_cast<float>(p[i]) * factor;
            });
          } else {
            for (std::size_t i = 0; i < S * S; ++i) dr[i] = static_cast<float>(p[i]);
          }
          // dV_bh [S, D] = dropout(P)^T [S, S] * dcontext_bh [S, D]
          gemm(transpose::yes, transpose::no, S, D, S, 1.0f, detail::as_operand<TA>(dr, S * S), S, dctx + head, H,
               0.0f, dv + head, H, gemm_threads::calling_thread);
          // d dropout(P) [S, S] = dcontext_bh [S, D] * V_bh^T
          gemm(transpose::no, transpose::yes, S, S, D, 1.0f, dctx + head, H, v + head, H, 0.0f, dprobs.data(), S,
               gemm_threads::calling_thread);
          if (dropout.active()) {
            kernels::for_dropout_mask(mask, g * S * S, S * S, dropout.p,
                                      [&](std::size_t i, float factor) { dp[i] *= factor; });
          }
          for (std::size_t i = 0; i < S; ++i) {  // d probs -> d scores
            kernels::attention_softmax_row_backward(dprobs.data() + i * S, p + i * S, scale, S);
          }
          // dQ_bh = dscores [S, S] * K_bh [S, D];  dK_bh = dscores^T * Q_bh
          const TA* dscores = detail::as_operand<TA>(dp, S * S);
          gemm(transpose::no, transpose::no, S, D, S, 1.0f, dscores, S, k + head, H, 0.0f, dq + head, H,
               gemm_threads::calling_thread);
          gemm(transpose::yes, transpose::no, S, D, S, 1.0f, dscores, S, q + head, H, 0.0f, dk + head, H,
               gemm_threads::calling_thread);
        }
      },
      tbb::simple_partitioner());
}

}  // namespace cputrain::nn
