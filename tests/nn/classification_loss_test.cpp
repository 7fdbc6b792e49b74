// Tests for include/cputrain/nn/classification_loss.hpp: cross-entropy, BCE with logits and MSE against values
// worked out by hand and against central differences, -100 ignored, NaN when nothing counts, no overflow for
// large logits, and Hugging Face's problem_type inference.
#include "cputrain/nn/classification_loss.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace classification_loss_test {

namespace nn = cputrain::nn;

/// Central differences of f at x, element by element.
std::vector<double> numeric_gradient(std::vector<float> x, const std::function<double(const std::vector<float>&)>& f) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float saved = x[i], h = 1e-2f;
    x[i] = saved + h;
    const double up = f(x);
    x[i] = saved - h;
    const double down = f(x);
    x[i] = saved;
    g[i] = (up - down) / (2.0 * h);
  }
  return g;
}

TEST_CASE("cross_entropy: log-sum-exp minus the label's logit, averaged over the rows that count") {
  const std::vector<float> logits{1, 2, 3, 0, 0, 0, 5, -5, 0};
  const std::vector<std::int64_t> labels{2, nn::ignored_label, 0};
  std::vector<float> d(9);
  const float loss = nn::cross_entropy(logits.data(), labels.data(), 3, 3, 1.0f, d.data());
  const double row0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
  const double row2 = std::log(std::exp(5.0) + std::exp(-5.0) + 1.0) - 5.0;
  CHECK(loss == Approx((row0 + row2) / 2).epsilon(1e-6));
  for (std::size_t c = 3; c < 6; ++c) CHECK(d[c] == 0.0f);  // the ignored row
  auto f = [&](const std::vector<float>& x) {
    std::vector<float> scratch(9);
    return static_cast<double>(nn::cross_entropy(x.data(), labels.data(), 3, 3, 1.0f, scratch.data()));
  };
  const auto want = numeric_gradient(logits, f);
  for (std::size_t i = 0; i < 9; ++i) CHECK(d[i] == Approx(want[i]).margin(2e-4));
  // grad_scale scales the gradient, not the loss
  std::vector<float> d2(9);
  CHECK(nn::cross_entropy(logits.data(), labels.data(), 3, 3, 0.5f, d2.data()) == loss);
  for (std::size_t i = 0; i < 9; ++i) CHECK(d2[i] == Approx(0.5 * d[i]));
}

TEST_CASE("cross_entropy: NaN when every label is ignored (0/0, as PyTorch), and large logits stay finite") {
  const std::vector<float> logits{1000, -1000, 0, 0};
  std::vector<float> d(4, 7.0f);
  const std::vector<std::int64_t> none{nn::ignored_label, nn::ignored_label};
  CHECK(std::isnan(nn::cross_entropy(logits.data(), none.data(), 2, 2, 1.0f, d.data())));
  for (const float g : d) CHECK(g == 0.0f);
  const std::vector<std::int64_t> labels{1, 0};
  const float loss = nn::cross_entropy(logits.data(), labels.data(), 2, 2, 1.0f, d.data());
  CHECK(loss == Approx((2000.0 + std::log(2.0)) / 2));
  CHECK_THROWS_WITH(nn::cross_entropy(logits.data(), std::vector<std::int64_t>{2, 0}.data(), 2, 2, 1.0f, d.data()),
                    Catch::Contains("labels[0] = 2"));
  CHECK_THROWS_AS(nn::cross_entropy(logits.data(), std::vector<std::int64_t>{-1, 0}.data(), 2, 2, 1.0f, d.data()),
                  cputrain::usage_error);
}

TEST_CASE("bce_with_logits: PyTorch's stable form, its gradient sigmoid(x) - t over n, finite for large logits") {
  const std::vector<float> x{0.5f, -2.0f, 80.0f, -80.0f};
  const std::vector<float> t{1.0f, 0.0f, 0.0f, 0.25f};
  std::vector<float> d(4);
  const float loss = nn::bce_with_logits(x.data(), t.data(), 4, 1.0f, d.data());
  double want = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    const double s = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
    want -= t[i] * std::log(s) + (1 - t[i]) * std::log(1 - s);
  }
  // max(x, 0) - x t + log1p(exp(-|x|)), where the naive form's log(sigmoid) would overflow:
  want += 80.0;  // x = 80, t = 0
  want += 20.0;  // x = -80, t = 0.25
  CHECK(loss == Approx(want / 4).epsilon(1e-5));
  auto f = [&](const std::vector<float>& v) {
    std::vector<float> scratch(4);
    return static_cast<double>(nn::bce_with_logits(v.data(), t.data(), 4, 1.0f, scratch.data()));
  };
  const auto g = numeric_gradient(x, f);
  for (std::size_t i = 0; i < 4; ++i) CHECK(d[i] == Approx(g[i]).margin(1e-3));
}

TEST_CASE("mean_squared_error: the mean of (x - t)^2 and its gradient 2 (x - t) / n") {
  const std::vector<float> x{1.0f, 3.0f, -2.0f};
  const std::vector<float> t{0.0f, 3.5f, 1.0f};
  std::vector<float> d(3);
  CHECK(nn::mean_squared_error(x.data(), t.data(), 3, 1.0f, d.data()) == Approx((1.0 + 0.25 + 9.0) / 3));
  CHECK(d[0] == Approx(2.0 / 3));
  CHECK(d[1] == Approx(-1.0 / 3));
  CHECK(d[2] == Approx(-2.0));
}

TEST_CASE("problem_type_of: the config's word, else one label regression, class ids single-, floats multi-label") {
  using nn::problem_type;
  CHECK(nn::problem_type_of("", 1, false) == problem_type::regression);
  CHECK(nn::problem_type_of("", 1, true) == problem_type::regression);
  CHECK(nn::problem_type_of("", 3, true) == problem_type::single_label_classification);
  CHECK(nn::problem_type_of("", 3, false) == problem_type::multi_label_classification);
  CHECK(nn::problem_type_of("regression", 3, true) == problem_type::regression);
  CHECK(nn::problem_type_of("multi_label_classification", 3, true) == problem_type::multi_label_classification);
  CHECK(nn::problem_type_of("single_label_classification", 1, false) == problem_type::single_label_classification);
}

}  // namespace classification_loss_test
