// Checks shared by the test files: the error of a float result against a double reference, and a Catch2 matcher
// for the message of any cputrain exception.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/core/error.hpp"

namespace cputrain::test {

/// max |got - want| / max |want| over a tensor: the error relative to the tensor's scale, so near-zero elements
/// of a well-scaled tensor do not demand impossible precision. The reference must not be all zero.
inline double relative_error(std::span<const float> got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  REQUIRE(scale > 0);
  return worst / scale;
}

/// The same for want.size() floats starting at `got` (a tensor inside a flat buffer).
inline double relative_error(const float* got, const std::vector<double>& want) {
  return relative_error(std::span<const float>(got, want.size()), want);
}

/// Matches a cputrain exception (usage_error, text_error, ...) whose message contains `text` (Catch2 v2's Contains
/// matches strings, not exceptions):
///   CHECK_THROWS_MATCHES(f(), cputrain::usage_error, says("weight_decay"));
class says : public Catch::MatcherBase<cputrain::error> {
 public:
  explicit says(std::string text) : text_(std::move(text)) {}
  bool match(const cputrain::error& e) const override {
    return std::string_view(e.what()).find(text_) != std::string_view::npos;
  }
  std::string describe() const override { return "has a message containing \"" + text_ + "\""; }

 private:
  std::string text_;
};

}  // namespace cputrain::test
