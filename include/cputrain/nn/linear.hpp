// cputrain::nn::linear — a fully connected layer with Hugging Face's layout (weight [out, in], bias [out]):
// y = x * W^T + b, forward and backward over views into the flat buffers. The weight is read from a "GEMM copy"
// (its bf16 rounding under bf16 mixed precision, refreshed once per optimizer step).
#pragma once

#include "cputrain/kernels/bias.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/policy/alloc/standard.hpp"

#include "cputrain/kernels/gemm.hpp"
#include "cputrain/nn/parameters.hpp"

namespace cputrain::nn {

namespace detail {
/// dy rounded to bf16 for backward's products: one buffer per calling thread, grown on demand and kept.
inline std::span<bf16> rounded_gradient(const float* dy, std::size_t n) {
  thread_local std::vector<bf16, alloc::allocator<bf16, alloc::standard>> buffer;
  if (buffer.size() < n) buffer.resize(n);
  cputrain::to_bf16(std::span<const float>(dy, n), std::span<bf16>(buffer.data(), n));
  return {buffer.data(), n};
}
}  // namespace detail

struct linear {
  std::size_t in = 0;
  std::size_t out = 0;
  std::size_t weight = 0;  // offsets into the flat buffers
  std::size_t bias = 0;

  /// Registers `<prefix>.weight` [out, in] and `<prefix>.bias` [out].
  template <parameter_registry R>
  static linear create(R& table, const std::string& prefix, std::size_t in, std::size_t out) {
    linear l;
    l.in = in;
    l.out = out;
    l.weight = table.add(prefix + ".weight", {static_cast<std::int64_t>(out), static_cast<std::int64_t>(in)},
                         parameter_role::weight);
    l.bias = table.add(prefix + ".bias", {static_cast<std::int64_t>(out)}, parameter_role::bias);
    return l;
  }

  /// y[tokens, out] = x[tokens, in] W^T + b.  gemm_weights: the GEMM copy of the flat buffer; params: the float
  /// flat buffer (for the bias).
  template <class TW, class TX>
  void forward(const TW* gemm_weights, const float* params, const TX* x, std::size_t tokens, float* y) const {
    kernels::gemm(kernels::transpose::no, kernels::transpose::yes, tokens, out, in, 1.0f, x, in,
                  gemm_weights + weight, in, 0.0f, y, out);
    kernels::add_bias(y, params + bias, tokens, out);
  }

  /// Accumulates dW += dy^T x and db += sum_rows dy into `grads`; when dx is not null, dx = dy W, or
  /// dx += dy W when accumulate_dx (a tensor feeding several layers sums their gradients).
  /// x: the forward input as kept; dy: [tokens, out].
  /// With bf16 weights and inputs, dy enters both products rounded to bf16 (the bias gradient sums it in float).
  template <class TW, class TX>
  void backward(const TW* gemm_weights, float* grads, const TX* x, const float* dy, std::size_t tokens, float* dx,
                bool accumulate_dx = false) const {
    kernels::bias_backward(dy, tokens, out, grads + bias);
    if constexpr (std::is_same_v<TW, bf16> && std::is_same_v<TX, bf16>) {
      products_backward(gemm_weights, grads, x, detail::rounded_gradient(dy, tokens * out).data(), tokens, dx,
                        accumulate_dx);
    } else {
      products_backward(gemm_weights, grads, x, dy, tokens, dx, accumulate_dx);
    }
  }

 private:
  // dW[out, in] += dy^T [out, tokens] x [tokens, in];  dx[tokens, in] (+)= dy [tokens, out] W [out, in]
  template <class TW, class TX, class TD>
  void products_backward(const TW* gemm_weights, float* grads, const TX* x, const TD* dy, std::size_t tokens,
                         float* dx, bool accumulate_dx) const {
    kernels::gemm(kernels::transpose::yes, kernels::transpose::no, out, in, tokens, 1.0f, dy, out, x, in, 1.0f,
                  grads + weight, in);
    if (dx != nullptr) {
      kernels::gemm(kernels::transpose::no, kernels::transpose::no, tokens, in, out, 1.0f, dy, out,
                    gemm_weights + weight, in, accumulate_dx ? 1.0f : 0.0f, dx, in);
    }
  }
};

}  // namespace cputrain::nn
