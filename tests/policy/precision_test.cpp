// Tests for include/cputrain/policy/precision.hpp.
#include <catch2/catch.hpp>

#include <string_view>
#include <type_traits>

#include "cputrain/policy/precision.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace precision_test {

namespace p = cputrain::precision;

namespace {
// A policy that would keep master weights in bf16: the concept must refuse it.
struct bf16_master {
  static constexpr std::string_view name = "bf16-master";
  static constexpr bool mixed = true;
  using master_type = cputrain::bf16;
  using gradient_type = float;
  using gemm_input_type = cputrain::bf16;
  using activation_type = cputrain::bf16;
  using compute_type = float;
};
// One that stores activations as double: not a storage scalar.
struct double_activations {
  static constexpr std::string_view name = "f64-act";
  static constexpr bool mixed = false;
  using master_type = float;
  using gradient_type = float;
  using gemm_input_type = float;
  using activation_type = double;
  using compute_type = float;
};
struct missing_compute_type {
  static constexpr std::string_view name = "incomplete";
  static constexpr bool mixed = false;
  using master_type = float;
  using gradient_type = float;
  using gemm_input_type = float;
  using activation_type = float;
};
}  // namespace

TEST_CASE("fp32 keeps everything in float") {
  STATIC_REQUIRE(p::precision_policy<p::fp32>);
  STATIC_REQUIRE(std::is_same_v<p::fp32::gemm_input_type, float>);
  STATIC_REQUIRE(std::is_same_v<p::fp32::activation_type, float>);
  STATIC_REQUIRE_FALSE(p::fp32::mixed);
  CHECK(p::fp32::name == "fp32");
  CHECK(p::activation_bytes<p::fp32> == 4);
}

TEST_CASE("bf16_mixed stores GEMM inputs and saved activations in bf16 and computes the rest in float") {
  STATIC_REQUIRE(p::precision_policy<p::bf16_mixed>);
  STATIC_REQUIRE(std::is_same_v<p::bf16_mixed::master_type, float>);
  STATIC_REQUIRE(std::is_same_v<p::bf16_mixed::gradient_type, float>);
  STATIC_REQUIRE(std::is_same_v<p::bf16_mixed::compute_type, float>);
  STATIC_REQUIRE(std::is_same_v<p::bf16_mixed::gemm_input_type, cputrain::bf16>);
  STATIC_REQUIRE(std::is_same_v<p::bf16_mixed::activation_type, cputrain::bf16>);
  STATIC_REQUIRE(p::bf16_mixed::mixed);
  CHECK(p::bf16_mixed::name == "bf16");
  // the saved activations take half the memory of fp32's
  CHECK(p::activation_bytes<p::bf16_mixed> * 2 == p::activation_bytes<p::fp32>);
}

TEST_CASE("the precision concept refuses policies that break the mixed-precision rules") {
  STATIC_REQUIRE_FALSE(p::precision_policy<bf16_master>);
  STATIC_REQUIRE_FALSE(p::precision_policy<double_activations>);
  STATIC_REQUIRE_FALSE(p::precision_policy<missing_compute_type>);
  STATIC_REQUIRE_FALSE(p::precision_policy<float>);
}

}  // namespace precision_test
