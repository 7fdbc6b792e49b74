// Tests for include/cputrain/nn/linear.hpp: y = x W^T + b over views into the flat buffers, with dW, db and dx
// against central differences of a double reference, gradient accumulation, accumulate_dx, and bf16 operands.
#include <catch2/catch.hpp>

#include "support/checks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cputrain/core/bf16.hpp"
#include "cputrain/nn/linear.hpp"
#include "cputrain/nn/parameters.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace linear_test {

using cputrain::bf16;
using cputrain::nn::linear;
using cputrain::nn::parameter_table;

using cputrain::test::relative_error;

namespace {

std::vector<float> random_values(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

struct fixture {
  parameter_table table;
  linear layer;
  std::size_t tokens;
  std::vector<float> params, x, w;  // w: weights of the objective L = sum(w * y)

  fixture(std::size_t in, std::size_t out, std::size_t tokens_, unsigned seed) : tokens(tokens_) {
    table.add("before.weight", {3}, cputrain::nn::parameter_role::weight);  // the layer does not sit at offset 0
    layer = linear::create(table, "encoder.dense", in, out);
    std::mt19937 rng(seed);
    params = random_values(table.total_size(), rng);
    x = random_values(tokens * in, rng);
    w = random_values(tokens * out, rng);
  }

  /// y = x W^T + b in double, from the float buffers.
  std::vector<double> reference(const std::vector<double>& xd, const std::vector<double>& pd) const {
    std::vector<double> y(tokens * layer.out);
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t o = 0; o < layer.out; ++o) {
        double s = pd[layer.bias + o];
        for (std::size_t i = 0; i < layer.in; ++i) s += xd[t * layer.in + i] * pd[layer.weight + o * layer.in + i];
        y[t * layer.out + o] = s;
      }
    }
    return y;
  }
  double objective(const std::vector<double>& xd, const std::vector<double>& pd) const {
    const auto y = reference(xd, pd);
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i) l += w[i] * y[i];
    return l;
  }
};

template <class V>
double central_difference(V& values, std::size_t i, const auto& objective) {
  const double saved = values[i], h = 1e-3;
  values[i] = saved + h;
  const double up = objective();
  values[i] = saved - h;
  const double down = objective();
  values[i] = saved;
  return (up - down) / (2 * h);
}

}  // namespace

TEST_CASE("linear::create registers <prefix>.weight of shape (out, in) and <prefix>.bias of shape (out)") {
  parameter_table t;
  t.add("x", {5}, cputrain::nn::parameter_role::weight);
  const auto l = linear::create(t, "bert.encoder.layer.0.attention.self.query", 6, 4);
  CHECK(l.in == 6);
  CHECK(l.out == 4);
  const auto& w = t.at("bert.encoder.layer.0.attention.self.query.weight");
  const auto& b = t.at("bert.encoder.layer.0.attention.self.query.bias");
  CHECK(w.shape == std::vector<std::int64_t>{4, 6});
  CHECK(b.shape == std::vector<std::int64_t>{4});
  CHECK(l.weight == w.offset);
  CHECK(l.bias == b.offset);
  CHECK(w.role == cputrain::nn::parameter_role::weight);
  CHECK(b.role == cputrain::nn::parameter_role::bias);
  CHECK(w.decay());
  CHECK_FALSE(b.decay());
}

TEST_CASE("linear forward matches x W^T + b in double, across several GEMM blocks") {
  for (auto [in, out, tokens] : {std::tuple<std::size_t, std::size_t, std::size_t>{3, 2, 1},
                                 {7, 5, 9},
                                 {70, 200, 150}}) {  // more than one 128 x 192 block of y
    fixture f(in, out, tokens, static_cast<unsigned>(in + out + tokens));
    std::vector<float> y(tokens * out, std::numeric_limits<float>::quiet_NaN());  // never read
    f.layer.forward(f.params.data(), f.params.data(), f.x.data(), tokens, y.data());
    const auto want = f.reference({f.x.begin(), f.x.end()}, {f.params.begin(), f.params.end()});
    INFO("in=" << in << " out=" << out << " tokens=" << tokens);
    CHECK(relative_error(y.data(), want) < 1e-6);
  }
}

TEST_CASE("linear forward with bf16 weights and inputs multiplies the bf16 values, adds the float bias") {
  fixture f(33, 17, 11, 5);
  std::vector<bf16> gemm_weights(f.params.size()), xb(f.x.size());
  std::vector<double> rounded_params(f.params.begin(), f.params.end()), rounded_x(f.x.size());
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    gemm_weights[i] = bf16(f.params[i]);
    if (i >= f.layer.weight && i < f.layer.weight + f.layer.in * f.layer.out) {
      rounded_params[i] = static_cast<float>(gemm_weights[i]);
    }
  }
  for (std::size_t i = 0; i < f.x.size(); ++i) {
    xb[i] = bf16(f.x[i]);
    rounded_x[i] = static_cast<float>(xb[i]);
  }
  std::vector<float> y(f.tokens * f.layer.out);
  f.layer.forward(gemm_weights.data(), f.params.data(), xb.data(), f.tokens, y.data());
  CHECK(relative_error(y.data(), f.reference(rounded_x, rounded_params)) < 1e-6);
  // and the result is visibly the bf16 product, not the float one
  CHECK(relative_error(y.data(), f.reference({f.x.begin(), f.x.end()}, {f.params.begin(), f.params.end()})) > 1e-4);
}

TEST_CASE("linear backward matches central differences: dW and db accumulate, dx is written") {
  fixture f(6, 5, 7, 7);
  std::mt19937 rng(8);
  const auto initial = random_values(f.table.total_size(), rng);
  auto grads = initial;
  std::vector<float> dx(f.x.size(), std::numeric_limits<float>::quiet_NaN());  // overwritten, never read
  f.layer.backward(f.params.data(), grads.data(), f.x.data(), f.w.data(), f.tokens, dx.data());

  std::vector<double> xd(f.x.begin(), f.x.end()), pd(f.params.begin(), f.params.end());
  auto objective = [&] { return f.objective(xd, pd); };
  std::vector<double> want_dx, want_dw, want_db;
  for (std::size_t i = 0; i < xd.size(); ++i) want_dx.push_back(central_difference(xd, i, objective));
  for (std::size_t i = 0; i < f.layer.in * f.layer.out; ++i) {
    want_dw.push_back(central_difference(pd, f.layer.weight + i, objective));
  }
  for (std::size_t i = 0; i < f.layer.out; ++i) want_db.push_back(central_difference(pd, f.layer.bias + i, objective));
  std::vector<float> added(grads.size());
  for (std::size_t i = 0; i < grads.size(); ++i) added[i] = grads[i] - initial[i];
  CHECK(relative_error(dx.data(), want_dx) < 1e-5);
  CHECK(relative_error(added.data() + f.layer.weight, want_dw) < 1e-5);
  CHECK(relative_error(added.data() + f.layer.bias, want_db) < 1e-5);
  // Nothing outside the layer's two tensors changes.
  for (std::size_t i = 0; i < f.layer.weight; ++i) CHECK(grads[i] == initial[i]);
}

TEST_CASE("linear backward: accumulate_dx adds dy W to dx, dx == nullptr skips it") {
  fixture f(40, 30, 150, 9);  // more tokens than one GEMM block
  std::mt19937 rng(10);
  const auto dx0 = random_values(f.x.size(), rng);
  std::vector<float> g1(f.table.total_size(), 0.0f), g2 = g1, g3 = g1;
  std::vector<float> fresh(f.x.size()), accumulated = dx0;
  f.layer.backward(f.params.data(), g1.data(), f.x.data(), f.w.data(), f.tokens, fresh.data());
  f.layer.backward(f.params.data(), g2.data(), f.x.data(), f.w.data(), f.tokens, accumulated.data(), true);
  f.layer.backward(f.params.data(), g3.data(), f.x.data(), f.w.data(), f.tokens, static_cast<float*>(nullptr));
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(accumulated[i]) - (static_cast<double>(dx0[i]) + fresh[i])));
    scale = std::max(scale, std::abs(static_cast<double>(fresh[i])));
  }
  CHECK(worst < 1e-6 * scale);
  CHECK(g1 == g2);  // parameter gradients do not depend on what happens to dx
  CHECK(g1 == g3);
  // dx = dy W exactly as a double product would give it
  for (std::size_t t = 0; t < f.tokens; t += 37) {
    for (std::size_t i = 0; i < f.layer.in; ++i) {
      double s = 0;
      for (std::size_t o = 0; o < f.layer.out; ++o) {
        s += static_cast<double>(f.w[t * f.layer.out + o]) * f.params[f.layer.weight + o * f.layer.in + i];
      }
      CHECK(std::abs(fresh[t * f.layer.in + i] - s) < 1e-5);
    }
  }
}

}  // namespace linear_test
