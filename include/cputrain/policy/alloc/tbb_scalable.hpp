// cputrain::alloc::tbb_scalable — oneTBB's scalable allocator (tbbmalloc), 64-byte aligned. Per-thread pools make
// the many small allocations of worker threads cheap and free of contention.
#pragma once

#include <cstddef>
#include <new>
#include <string_view>

#include <oneapi/tbb/scalable_allocator.h>

#include "cputrain/policy/alloc/allocator_policy.hpp"

namespace cputrain::alloc {

struct tbb_scalable {
  static constexpr std::string_view name = "tbb_scalable";
  static constexpr std::size_t alignment = 64;

  static void* allocate_bytes(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    void* p = scalable_aligned_malloc(bytes, alignment);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  static void deallocate_bytes(void* p, std::size_t /*bytes*/) noexcept {
    if (p != nullptr) scalable_aligned_free(p);
  }
};
static_assert(allocator_policy<tbb_scalable>);

}  // namespace cputrain::alloc
