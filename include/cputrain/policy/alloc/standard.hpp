// cputrain::alloc::standard — the C++ runtime's aligned operator new, 64-byte aligned. The default policy: no
// dependency, no placement, works everywhere.
#pragma once

#include "cputrain/policy/alloc/allocator_policy.hpp"

#include <cstddef>
#include <new>
#include <string_view>

namespace cputrain::alloc {

struct standard {
  static constexpr std::string_view name = "standard";
  static constexpr std::size_t alignment = 64;

  static void* allocate_bytes(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    return ::operator new(bytes, std::align_val_t{alignment});
  }
  static void deallocate_bytes(void* p, std::size_t /*bytes*/) noexcept {
    // The unsized form: Clang enables sized deallocation only with -fsized-deallocation.
    if (p != nullptr) ::operator delete(p, std::align_val_t{alignment});
  }
};
static_assert(allocator_policy<standard>);

}  // namespace cputrain::alloc
