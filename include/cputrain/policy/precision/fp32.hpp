// cputrain::precision::fp32 — everything in float. The reference every other precision is measured against.
#pragma once

#include "cputrain/policy/precision/precision_policy.hpp"

#include <string_view>

namespace cputrain::precision {

struct fp32 {
  static constexpr std::string_view name = "fp32";
  static constexpr bool mixed = false;
  using master_type = float;
  using gradient_type = float;
  using gemm_input_type = float;
  using activation_type = float;
  using compute_type = float;
};
static_assert(precision_policy<fp32>);

}  // namespace cputrain::precision
