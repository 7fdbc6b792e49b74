// json_nesting_limit: the depth at which a parse stops, for both nlohmann JSON types.
#include "cputrain/core/json_nesting.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace json_nesting_test {

namespace {
std::string nested(int levels) {
  const auto n = static_cast<std::size_t>(levels);
  return std::string(n, '[') + std::string(n, ']');
}
struct too_deep : std::runtime_error {
  too_deep() : std::runtime_error("too deep") {}
};
}  // namespace

TEST_CASE("json_nesting_limit accepts json_max_nesting levels and stops at the next, for json and ordered_json") {
  using cputrain::json_max_nesting;
  const auto limit = cputrain::json_nesting_limit<nlohmann::json>([] { throw too_deep(); });
  CHECK_NOTHROW(nlohmann::json::parse(nested(json_max_nesting), limit));
  CHECK_THROWS_AS(nlohmann::json::parse(nested(json_max_nesting + 1), limit), too_deep);
  const auto ordered = cputrain::json_nesting_limit<nlohmann::ordered_json>([] { throw too_deep(); });
  CHECK_THROWS_AS(nlohmann::ordered_json::parse("{\"a\": " + nested(json_max_nesting) + "}", ordered), too_deep);
  // The values themselves are kept whole: the callback filters nothing.
  const auto j = nlohmann::ordered_json::parse(R"({"a": [1, {"b": null}], "c": "d"})", ordered);
  CHECK(j.dump() == R"({"a":[1,{"b":null}],"c":"d"})");
  // A million levels: stopped at once, without recursing (a stack overflow would end the test process).
  CHECK_THROWS_AS(nlohmann::json::parse(nested(1000000), limit), too_deep);
}

}  // namespace json_nesting_test
