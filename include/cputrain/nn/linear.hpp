// cputrain::nn::linear — a fully connected layer with Hugging Face's layout: weight [out, in], bias [out],
//   y[tokens, out] = x[tokens, in] * W^T + b
// forward and backward over views into the flat parameter and gradient buffers. The weight is read from a
// "GEMM copy" of the flat buffer: the float buffer itself under fp32, its bf16 rounding under bf16 mixed
// precision (refreshed once per optimizer step, not per product).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cputrain/kernels/bias.hpp"
#include "cputrain/kernels/gemm.hpp"
#include "cputrain/nn/parameters.hpp"

namespace cputrain::nn {

struct linear {
  std::size_t in = 0;
  std::size_t out = 0;
  std::size_t weight = 0;  // offsets into the flat buffers
  std::size_t bias = 0;

  /// Registers `<prefix>.weight` [out, in] and `<prefix>.bias` [out].
  static linear create(parameter_table& table, const std::string& prefix, std::size_t in, std::size_t out) {
    linear l;
    l.in = in;
    l.out = out;
    l.weight = table.add(prefix + ".weight", {static_cast<std::int64_t>(out), static_cast<std::int64_t>(in)});
    l.bias = table.add(prefix + ".bias", {static_cast<std::int64_t>(out)});
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
  template <class TW, class TX>
  void backward(const TW* gemm_weights, float* grads, const TX* x, const float* dy, std::size_t tokens, float* dx,
                bool accumulate_dx = false) const {
    kernels::gemm(kernels::transpose::yes, kernels::transpose::no, out, in, tokens, 1.0f, dy, out, x, in, 1.0f,
                  grads + weight, in);
    kernels::bias_backward(dy, tokens, out, grads + bias);
    if (dx != nullptr) {
      kernels::gemm(kernels::transpose::no, kernels::transpose::no, tokens, in, out, 1.0f, dy, out,
                    gemm_weights + weight, in, accumulate_dx ? 1.0f : 0.0f, dx, in);
    }
  }
};

}  // namespace cputrain::nn
