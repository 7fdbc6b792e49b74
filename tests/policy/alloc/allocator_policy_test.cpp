#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "cputrain/policy/alloc/standard.hpp"
#include "cputrain/policy/alloc/tbb_scalable.hpp"

TEST_CASE("placeholder") { CHECK(true); }
