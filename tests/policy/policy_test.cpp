// Tests for include/cputrain/policy/policy.hpp: valid combinations and what they provide. The combinations
// that must not compile are in tests/policy/compile_fail/ (each checked for its message by CTest).
#include <catch2/catch.hpp>

#include <cstdint>
#include <type_traits>

#include "cputrain/policy/policy.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace policy_test {

namespace ct = cputrain;

TEMPLATE_TEST_CASE("every combination of the shipped policies is valid and allocates aligned buffers", "",
                   (ct::policy<ct::precision::fp32, ct::parallel::single, ct::alloc::standard>),
                   (ct::policy<ct::precision::bf16_mixed, ct::parallel::single, ct::alloc::standard>),
                   (ct::policy<ct::precision::fp32, ct::parallel::single, ct::alloc::tbb_scalable>),
                   (ct::policy<ct::precision::bf16_mixed, ct::parallel::single, ct::alloc::tbb_scalable>),
                   (ct::policy<ct::precision::fp32, ct::parallel::single, ct::alloc::numa_local>),
                   (ct::policy<ct::precision::bf16_mixed, ct::parallel::single, ct::alloc::numa_local>)) {
  using P = TestType;
  typename P::template buffer<typename P::precision_policy::activation_type> activations(100003);
  typename P::template buffer<float> params(1 << 20, 0.5f);
  CHECK(reinterpret_cast<std::uintptr_t>(activations.data()) % 64 == 0);
  CHECK(reinterpret_cast<std::uintptr_t>(params.data()) % 64 == 0);
  CHECK(params[(1 << 20) - 1] == 0.5f);
  STATIC_REQUIRE(std::is_same_v<typename P::template allocator<float>::policy_type, typename P::allocator_policy>);
}

TEST_CASE("the defaults are fp32, one process, standard allocation") {
  using P = ct::policy<>;
  STATIC_REQUIRE(std::is_same_v<P::precision_policy, ct::precision::fp32>);
  STATIC_REQUIRE(std::is_same_v<P::parallel_policy, ct::parallel::single>);
  STATIC_REQUIRE(std::is_same_v<P::allocator_policy, ct::alloc::standard>);
}

}  // namespace policy_test
