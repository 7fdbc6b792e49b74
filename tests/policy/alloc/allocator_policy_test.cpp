// Tests for include/cputrain/policy/alloc/allocator_policy.hpp and the two placement-free policies,
// alloc::standard and alloc::tbb_scalable (numa_local has its own test file).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <list>
#include <new>
#include <string_view>
#include <vector>

#include "cputrain/policy/alloc/standard.hpp"
#include "cputrain/policy/alloc/tbb_scalable.hpp"
#include "support/sanitizers.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace allocator_policy_test {

namespace alloc = cputrain::alloc;

namespace {
struct under_aligned {  // 16-byte alignment is not enough for our SIMD kernels' aligned loads
  static constexpr std::string_view name = "under_aligned";
  static constexpr std::size_t alignment = 16;
  static void* allocate_bytes(std::size_t) { return nullptr; }
  static void deallocate_bytes(void*, std::size_t) noexcept {}
};
struct throwing_free {  // deallocate may run in destructors: it must be noexcept
  static constexpr std::string_view name = "throwing_free";
  static constexpr std::size_t alignment = 64;
  static void* allocate_bytes(std::size_t) { return nullptr; }
  static void deallocate_bytes(void*, std::size_t) {}
};
bool aligned64(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }
}  // namespace

TEST_CASE("the allocator concept demands 64-byte alignment and a noexcept deallocate") {
  STATIC_REQUIRE(alloc::allocator_policy<alloc::standard>);
  STATIC_REQUIRE(alloc::allocator_policy<alloc::tbb_scalable>);
  STATIC_REQUIRE_FALSE(alloc::allocator_policy<under_aligned>);
  STATIC_REQUIRE_FALSE(alloc::allocator_policy<throwing_free>);
  STATIC_REQUIRE_FALSE(alloc::allocator_policy<int>);
}

TEMPLATE_TEST_CASE("allocator policies give aligned, writable, independent blocks", "", alloc::standard,
                   alloc::tbb_scalable) {
  CHECK(TestType::allocate_bytes(0) == nullptr);
  TestType::deallocate_bytes(nullptr, 0);

  std::vector<std::pair<void*, std::size_t>> blocks;
  for (std::size_t bytes : {1u, 3u, 63u, 64u, 65u, 4096u, 100000u, 8u << 20}) {
    void* p = TestType::allocate_bytes(bytes);
    REQUIRE(p != nullptr);
    CHECK(aligned64(p));
    std::memset(p, static_cast<int>(bytes & 0xff), bytes);
    blocks.emplace_back(p, bytes);
  }
  // every block still holds its own fill: none overlaps another
  for (auto [p, bytes] : blocks) {
    const auto* b = static_cast<const unsigned char*>(p);
    CHECK(b[0] == (bytes & 0xff));
    CHECK(b[bytes - 1] == (bytes & 0xff));
  }
  for (auto [p, bytes] : blocks) TestType::deallocate_bytes(p, bytes);
}

TEMPLATE_TEST_CASE("the std adapter works in containers and refuses impossible sizes", "", alloc::standard,
                   alloc::tbb_scalable) {
  std::vector<float, alloc::allocator<float, TestType>> v;
  for (int i = 0; i < 100000; ++i) v.push_back(static_cast<float>(i));
  CHECK(aligned64(v.data()));
  CHECK(v[99999] == 99999.0f);

  // node-based containers rebind the allocator to their node type
  std::list<int, alloc::allocator<int, TestType>> l{1, 2, 3};
  CHECK(l.back() == 3);

  alloc::allocator<double, TestType> a;
  CHECK(a == alloc::allocator<double, TestType>{});
  CHECK(a.allocate(0) == nullptr);
  CHECK_THROWS_AS(a.allocate(std::numeric_limits<std::size_t>::max() / 4), std::bad_array_new_length);
}

TEST_CASE("an allocation larger than memory is std::bad_alloc, not a crash") {
  // 2^60 bytes: no machine has it, and the sizes are not so large that they overflow.
#if !CPUTRAIN_TEST_ASAN  // ASan's operator new reports and aborts instead of throwing
  CHECK_THROWS_AS(alloc::standard::allocate_bytes(std::size_t{1} << 60), std::bad_alloc);
#endif
  CHECK_THROWS_AS(alloc::tbb_scalable::allocate_bytes(std::size_t{1} << 60), std::bad_alloc);
}

}  // namespace allocator_policy_test
