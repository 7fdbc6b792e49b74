// What an allocator policy is — a stateless struct with name, alignment (at least 64), allocate_bytes and
// deallocate_bytes — and alloc::allocator<T, Policy>, the std::allocator adapter that lets containers use one:
//   std::vector<float, alloc::allocator<float, alloc::numa_local>> places a flat buffer by that policy.
#pragma once

#include <concepts>
#include <cstddef>
#include <limits>
#include <new>
#include <string_view>

namespace cputrain::alloc {

template <class A>
concept allocator_policy = requires(std::size_t bytes, void* p) {
  { A::name } -> std::convertible_to<std::string_view>;
  { A::alignment } -> std::convertible_to<std::size_t>;
  { A::allocate_bytes(bytes) } -> std::same_as<void*>;
  { A::deallocate_bytes(p, bytes) } noexcept;
} && (A::alignment >= 64) && ((A::alignment & (A::alignment - 1)) == 0);

/// std::allocator-compatible adapter over an allocator policy. Stateless: all instances compare equal.
template <class T, allocator_policy Policy>
class allocator {
 public:
  using value_type = T;
  using policy_type = Policy;
  using is_always_equal = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;

  static_assert(alignof(T) <= Policy::alignment, "cputrain::alloc::allocator: the element type needs more "
                                                 "alignment than this allocator policy gives");

  constexpr allocator() noexcept = default;
  template <class U>
  constexpr allocator(const allocator<U, Policy>&) noexcept {}  // NOLINT: rebinding is implicit by design

  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    if (n == 0) return nullptr;
    return static_cast<T*>(Policy::allocate_bytes(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { Policy::deallocate_bytes(p, n * sizeof(T)); }

  template <class U>
  struct rebind {
    using other = allocator<U, Policy>;
  };

  friend constexpr bool operator==(const allocator&, const allocator&) noexcept { return true; }
};

}  // namespace cputrain::alloc
