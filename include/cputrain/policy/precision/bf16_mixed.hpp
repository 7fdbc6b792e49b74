// cputrain::precision::bf16_mixed — bf16 mixed precision as PyTorch's CPU autocast defines it: float master
// weights, gradients and optimizer state; matrix-product operands rounded to bf16 with float accumulation;
// LayerNorm, softmax, loss and reductions in float. Activations kept for backward are stored in bf16, which
// halves the workspace. On CPUs without native bf16 dot products the bf16 operands are widened while packing,
// so the product runs at float speed and the saving is in memory traffic, not arithmetic.
#pragma once

#include <string_view>

#include "cputrain/core/bf16.hpp"
#include "cputrain/policy/precision/precision_policy.hpp"

namespace cputrain::precision {

struct bf16_mixed {
  static constexpr std::string_view name = "bf16";
  static constexpr bool mixed = true;
  using master_type = float;
  using gradient_type = float;
  using gemm_input_type = bf16;
  using activation_type = bf16;
  using compute_type = float;
};
static_assert(precision_policy<bf16_mixed>);

}  // namespace cputrain::precision
