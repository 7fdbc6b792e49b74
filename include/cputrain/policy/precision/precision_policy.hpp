// What a precision policy is: as types, where each kind of tensor lives (master_type, gradient_type,
// gemm_input_type, activation_type, compute_type), plus `name` and `mixed`. Layers and kernels are written once
// over these aliases.
#pragma once

#include "cputrain/core/bf16.hpp"

#include <concepts>
#include <string_view>
#include <type_traits>

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
