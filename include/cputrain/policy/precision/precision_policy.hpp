// What a precision policy is. A precision policy says, as types, where each kind of tensor lives:
//   master_type      parameters as the optimizer updates them, and the optimizer state
//   gradient_type    parameter gradients (and what the all-reduce sums)
//   gemm_input_type  what a matrix product's operands are rounded to before the product (accumulation is float)
//   activation_type  activations kept for the backward pass
//   compute_type     everything else: LayerNorm, softmax, loss, reductions
// plus `name` (as a user would write it on the command line) and `mixed` (whether anything is stored narrower
// than it is computed). Layers and kernels are written once over these aliases.
#pragma once

#include <concepts>
#include <string_view>
#include <type_traits>

#include "cputrain/core/bf16.hpp"

namespace cputrain::precision {

/// A scalar a tensor may be stored as.
template <class T>
concept storage_scalar = std::same_as<T, float> || std::same_as<T, bf16>;

template <class P>
concept precision_policy = requires {
  { P::name } -> std::convertible_to<std::string_view>;
  { P::mixed } -> std::convertible_to<bool>;
  typename P::master_type;
  typename P::gradient_type;
  typename P::gemm_input_type;
  typename P::activation_type;
  typename P::compute_type;
} && storage_scalar<typename P::gemm_input_type> && storage_scalar<typename P::activation_type> &&
  // what the optimizer and the reductions see stays float: bf16 master weights lose small updates
  std::same_as<typename P::master_type, float> && std::same_as<typename P::gradient_type, float> &&
  std::same_as<typename P::compute_type, float>;

/// Bytes per element of an activation kept for backward: what the workspace is sized by.
template <precision_policy P>
inline constexpr std::size_t activation_bytes = sizeof(typename P::activation_type);

}  // namespace cputrain::precision
