// Tests for include/cputrain/kernels/layer_norm.hpp: forward against a double-precision reference, backward
// (dx, dgamma, dbeta) against central differences of that reference, with x kept as float and as bf16; thread-count
// independence of the parameter gradients; in-place use; the row callback of backward and the one-row forward that
// fused kernels use; the float statistics on rows far from zero, constant rows of any length, and results that do
// not depend on a row's alignment or the thread count.
#include <catch2/catch.hpp>

#include "support/checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/core/bf16.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/layer_norm.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace layer_norm_test {

using cputrain::bf16;
using cputrain::kernels::layer_norm_backward;
using cputrain::kernels::layer_norm_forward;
using cputrain::kernels::layer_norm_forward_row;

using cputrain::test::relative_error;

namespace {

std::vector<float> random_values(std::size_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

/// Rounds every value to the nearest bf16, so the tensor reads the same as float or as bf16.
void round_to_bf16(std::vector<float>& v) {
  for (auto& x : v) x = static_cast<float>(bf16(x));
}

std::vector<bf16> as_bf16(const std::vector<float>& v) {
  std::vector<bf16> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = bf16(v[i]);
  return out;
}

/// torch.nn.LayerNorm in double.
std::vector<double> reference_forward(const std::vector<double>& x, const std::vector<double>& gamma,
                                      const std::vector<double>& beta, double eps, std::size_t rows,
                                      std::size_t cols) {
  std::vector<double> y(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (std::size_t j = 0; j < cols; ++j) mean += x[r * cols + j];
    mean /= static_cast<double>(cols);
    for (std::size_t j = 0; j < cols; ++j) var += (x[r * cols + j] - mean) * (x[r * cols + j] - mean);
    var /= static_cast<double>(cols);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (std::size_t j = 0; j < cols; ++j) y[r * cols + j] = (x[r * cols + j] - mean) * rstd * gamma[j] + beta[j];
  }
  return y;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct problem {
  std::size_t rows, cols;
  float eps;
  std::vector<float> x, gamma, beta, w;  // w: the weights of the objective L = sum(w * y)
};

problem make_problem(std::size_t rows, std::size_t cols, float eps, unsigned seed) {
  std::mt19937 rng(seed);
  problem p{rows, cols, eps, {}, {}, {}, {}};
  p.x = random_values(rows * cols, rng, -2.0f, 2.0f);
  // Rows with different offsets and spreads: the statistics must not depend on where a row sits.
  for (std::size_t r = 0; r < rows; ++r) {
    const float offset = static_cast<float>(r % 3) * 3.0f - 3.0f, spread = 0.25f + static_cast<float>(r % 4);
    for (std::size_t j = 0; j < cols; ++j) p.x[r * cols + j] = p.x[r * cols + j] * spread + offset;
  }
  p.gamma = random_values(cols, rng, 0.5f, 1.5f);
  p.beta = random_values(cols, rng, -0.5f, 0.5f);
  p.w = random_values(rows * cols, rng);
  return p;
}

/// dL/dx, dL/dgamma, dL/dbeta of L = sum(w * LayerNorm(x)) by central differences of the double reference.
struct numeric_gradients {
  std::vector<double> dx, dgamma, dbeta;
};

numeric_gradients finite_differences(const problem& p) {
  auto x = to_double(p.x), gamma = to_double(p.gamma), beta = to_double(p.beta);
  const auto w = to_double(p.w);
  auto objective = [&] {
    const auto y = reference_forward(x, gamma, beta, p.eps, p.rows, p.cols);
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i) l += w[i] * y[i];
    return l;
  };
  auto derivative = [&](double& v) {
    const double h = 1e-5 * std::max(1.0, std::abs(v)), saved = v;
    v = saved + h;
    const double up = objective();
    v = saved - h;
    const double down = objective();
    v = saved;
    return (up - down) / (2 * h);
  };
  numeric_gradients g;
  for (auto& v : x) g.dx.push_back(derivative(v));
  for (auto& v : gamma) g.dgamma.push_back(derivative(v));
  for (auto& v : beta) g.dbeta.push_back(derivative(v));
  return g;
}

struct analytic_gradients {
  std::vector<float> dx, dgamma, dbeta;
};

/// Our forward (for mean and rstd) then backward with x kept as TX, dgamma/dbeta starting from `initial`.
template <class TX>
analytic_gradients backward(const problem& p, const std::vector<float>& initial_dgamma,
                            const std::vector<float>& initial_dbeta) {
  std::vector<float> y(p.rows * p.cols), mean(p.rows), rstd(p.rows);
  layer_norm_forward(p.x.data(), p.gamma.data(), p.beta.data(), p.eps, p.rows, p.cols, y.data(), mean.data(),
                     rstd.data());
  std::vector<TX> kept(p.x.size());
  for (std::size_t i = 0; i < kept.size(); ++i) kept[i] = TX(p.x[i]);
  analytic_gradients g{std::vector<float>(p.x.size()), initial_dgamma, initial_dbeta};
  layer_norm_backward(p.w.data(), kept.data(), mean.data(), rstd.data(), p.gamma.data(), p.rows, p.cols,
                      g.dx.data(), g.dgamma.data(), g.dbeta.data());
  return g;
}

}  // namespace

TEST_CASE("layer_norm_forward matches a double reference: y, mean and 1/std") {
  for (float eps : {1e-12f, 1e-5f}) {
    const auto p = make_problem(37, 129, eps, 11);
    std::vector<float> y(p.x.size()), mean(p.rows), rstd(p.rows);
    layer_norm_forward(p.x.data(), p.gamma.data(), p.beta.data(), eps, p.rows, p.cols, y.data(), mean.data(),
                       rstd.data());
    const auto want = reference_forward(to_double(p.x), to_double(p.gamma), to_double(p.beta), eps, p.rows, p.cols);
    INFO("eps=" << eps);
    CHECK(relative_error(y, want) < 2e-6);
    for (std::size_t r = 0; r < p.rows; ++r) {
      double m = 0, v = 0;
      for (std::size_t j = 0; j < p.cols; ++j) m += p.x[r * p.cols + j];
      m /= static_cast<double>(p.cols);
      for (std::size_t j = 0; j < p.cols; ++j) v += (p.x[r * p.cols + j] - m) * (p.x[r * p.cols + j] - m);
      v /= static_cast<double>(p.cols);  // biased, as torch
      CHECK(std::abs(mean[r] - m) <= 1e-6 * std::max(1.0, std::abs(m)));
      CHECK(std::abs(rstd[r] - 1.0 / std::sqrt(v + eps)) <= 1e-6 / std::sqrt(v + eps));
    }
  }
}

TEST_CASE("layer_norm_forward: a constant row gives exactly beta, not NaN") {
  const std::size_t cols = 10;
  std::vector<float> x(2 * cols, 0.1f), gamma(cols, 2.0f), beta(cols), y(2 * cols), mean(2), rstd(2);
  for (std::size_t j = 0; j < cols; ++j) {
    beta[j] = 0.25f * static_cast<float>(j);
    x[cols + j] = -7.0f;
  }
  layer_norm_forward(x.data(), gamma.data(), beta.data(), 1e-12f, 2, cols, y.data(), mean.data(), rstd.data());
  for (std::size_t r = 0; r < 2; ++r) {
    for (std::size_t j = 0; j < cols; ++j) CHECK(y[r * cols + j] == beta[j]);
    CHECK(std::isfinite(rstd[r]));
  }
  CHECK(mean[0] == 0.1f);
  CHECK(mean[1] == -7.0f);
}

TEST_CASE("layer_norm_backward matches finite differences: dx, dgamma, dbeta (x kept as float)") {
  for (float eps : {1e-12f, 1e-5f}) {
    const auto p = make_problem(7, 33, eps, 21);
    const auto want = finite_differences(p);
    std::mt19937 rng(5);
    const auto dgamma0 = random_values(p.cols, rng), dbeta0 = random_values(p.cols, rng);
    const auto got = backward<float>(p, dgamma0, dbeta0);
    std::vector<float> dgamma(p.cols), dbeta(p.cols);  // what was added: the parameter gradients accumulate
    for (std::size_t j = 0; j < p.cols; ++j) {
      dgamma[j] = got.dgamma[j] - dgamma0[j];
      dbeta[j] = got.dbeta[j] - dbeta0[j];
    }
    INFO("eps=" << eps);
    CHECK(relative_error(got.dx, want.dx) < 1e-5);
    CHECK(relative_error(dgamma, want.dgamma) < 1e-5);
    CHECK(relative_error(dbeta, want.dbeta) < 1e-5);
  }
}

TEST_CASE("layer_norm_backward with x kept as bf16 matches finite differences and the float path") {
  auto p = make_problem(9, 40, 1e-12f, 31);
  round_to_bf16(p.x);  // representable: bf16 storage loses nothing, so both paths see the same input
  const auto want = finite_differences(p);
  const std::vector<float> zero(p.cols, 0.0f);
  const auto from_bf16 = backward<bf16>(p, zero, zero);
  const auto from_float = backward<float>(p, zero, zero);
  CHECK(relative_error(from_bf16.dx, want.dx) < 1e-5);
  CHECK(relative_error(from_bf16.dgamma, want.dgamma) < 1e-5);
  CHECK(relative_error(from_bf16.dbeta, want.dbeta) < 1e-5);
  // Same values read: the same results, to the rounding of a differently compiled loop (fused multiply-adds).
  CHECK(relative_error(from_bf16.dx, to_double(from_float.dx)) < 1e-6);
  CHECK(relative_error(from_bf16.dgamma, to_double(from_float.dgamma)) < 1e-6);
  CHECK(same_bits(from_bf16.dbeta, from_float.dbeta));  // dbeta does not read x
}

TEST_CASE("layer_norm_backward with the float input rounded to bf16 for keeping stays close to the float path") {
  // bf16 mixed precision: forward on the float x, backward from its bf16 copy (and the float statistics).
  const auto p = make_problem(16, 64, 1e-12f, 41);
  const std::size_t n = p.x.size();
  std::vector<float> y(n), mean(p.rows), rstd(p.rows);
  layer_norm_forward(p.x.data(), p.gamma.data(), p.beta.data(), p.eps, p.rows, p.cols, y.data(), mean.data(),
                     rstd.data());
  const auto kept = as_bf16(p.x);
  std::vector<float> dx_bf(n), dg_bf(p.cols), db_bf(p.cols), dx_f(n), dg_f(p.cols), db_f(p.cols);
  layer_norm_backward(p.w.data(), kept.data(), mean.data(), rstd.data(), p.gamma.data(), p.rows, p.cols,
                      dx_bf.data(), dg_bf.data(), db_bf.data());
  layer_norm_backward(p.w.data(), p.x.data(), mean.data(), rstd.data(), p.gamma.data(), p.rows, p.cols,
                      dx_f.data(), dg_f.data(), db_f.data());
  CHECK(relative_error(dx_bf, to_double(dx_f)) < 3e-2);
  CHECK(relative_error(dg_bf, to_double(dg_f)) < 3e-2);
  CHECK(same_bits(db_bf, db_f));  // dbeta does not read x
  CHECK(relative_error(dx_bf, to_double(dx_f)) > 1e-4);  // but the rest does read the bf16 copy
}

TEST_CASE("layer_norm_backward: dgamma, dbeta and dx are bit-identical in arenas of 1 and 2 threads") {
  const std::size_t rows = 3000, cols = 768;
  std::mt19937 rng(7);
  const auto x = random_values(rows * cols, rng), dy = random_values(rows * cols, rng);
  const auto gamma = random_values(cols, rng, 0.5f, 1.5f), beta = random_values(cols, rng);
  std::vector<float> y(rows * cols), mean(rows), rstd(rows);
  layer_norm_forward(x.data(), gamma.data(), beta.data(), 1e-12f, rows, cols, y.data(), mean.data(), rstd.data());
  auto run = [&](int threads, std::vector<float>& dx, std::vector<float>& dg, std::vector<float>& db) {
    dx.assign(rows * cols, 0.0f);
    dg.assign(cols, 0.0f);
    db.assign(cols, 0.0f);
    tbb::task_arena(threads).execute([&] {
      layer_norm_backward(dy.data(), x.data(), mean.data(), rstd.data(), gamma.data(), rows, cols, dx.data(),
                          dg.data(), db.data());
    });
  };
  std::vector<float> dx1, dg1, db1, dx2, dg2, db2;
  run(1, dx1, dg1, db1);
  run(2, dx2, dg2, db2);
  CHECK(same_bits(dg1, dg2));
  CHECK(same_bits(db1, db2));
  CHECK(same_bits(dx1, dx2));
  // and the sums are right (to float accumulation over 3000 rows)
  for (std::size_t j = 0; j < cols; j += 97) {
    double s = 0;
    for (std::size_t r = 0; r < rows; ++r) s += dy[r * cols + j];
    CHECK(std::abs(db1[j] - s) < 1e-3);
  }
}

TEST_CASE("layer_norm in place (y == x forward, dx == dy backward) equals out of place") {
  const auto p = make_problem(50, 300, 1e-12f, 51);
  const std::size_t n = p.x.size();
  std::vector<float> y(n), mean(p.rows), rstd(p.rows), mean2(p.rows), rstd2(p.rows);
  layer_norm_forward(p.x.data(), p.gamma.data(), p.beta.data(), p.eps, p.rows, p.cols, y.data(), mean.data(),
                     rstd.data());
  auto inplace = p.x;
  layer_norm_forward(inplace.data(), p.gamma.data(), p.beta.data(), p.eps, p.rows, p.cols, inplace.data(),
                     mean2.data(), rstd2.data());
  CHECK(same_bits(inplace, y));
  CHECK(same_bits(mean, mean2));
  CHECK(same_bits(rstd, rstd2));

  std::vector<float> dx(n), dg(p.cols), db(p.cols), dg2(p.cols), db2(p.cols);
  layer_norm_backward(p.w.data(), p.x.data(), mean.data(), rstd.data(), p.gamma.data(), p.rows, p.cols, dx.data(),
                      dg.data(), db.data());
  auto d = p.w;
  layer_norm_backward(d.data(), p.x.data(), mean.data(), rstd.data(), p.gamma.data(), p.rows, p.cols, d.data(),
                      dg2.data(), db2.data());
  CHECK(same_bits(d, dx));
  CHECK(same_bits(dg2, dg));
  CHECK(same_bits(db2, db));
}

TEST_CASE("layer_norm_forward_row, row by row, equals layer_norm_forward") {
  const auto p = make_problem(40, 300, 1e-12f, 61);
  std::vector<float> y(p.x.size()), mean(p.rows), rstd(p.rows);
  std::vector<float> y_rows(p.x.size()), mean_rows(p.rows), rstd_rows(p.rows);
  layer_norm_forward(p.x.data(), p.gamma.data(), p.beta.data(), p.eps, p.rows, p.cols, y.data(), mean.data(),
                     rstd.data());
  for (std::size_t r = 0; r < p.rows; ++r) {
    layer_norm_forward_row(p.x.data() + r * p.cols, p.gamma.data(), p.beta.data(), p.eps, p.cols,
                           y_rows.data() + r * p.cols, mean_rows[r], rstd_rows[r]);
  }
  CHECK(same_bits(y_rows, y));
  CHECK(same_bits(mean_rows, mean));
  CHECK(same_bits(rstd_rows, rstd));
}

TEST_CASE("layer_norm_backward hands every finished row of dx to row_done once, in arenas of 1 and 2 threads") {
  // Enough rows for many row blocks; the callback applies dropout, as the encoder layer fuses it.
  const std::size_t rows = 700, cols = 96;
  std::mt19937 rng(71);
  const auto x = random_values(rows * cols, rng), dy = random_values(rows * cols, rng);
  const auto gamma = random_values(cols, rng, 0.5f, 1.5f), beta = random_values(cols, rng);
  std::vector<float> y(rows * cols), mean(rows), rstd(rows);
  layer_norm_forward(x.data(), gamma.data(), beta.data(), 1e-12f, rows, cols, y.data(), mean.data(), rstd.data());
  std::vector<float> dx(rows * cols), dg(cols), db(cols);
  layer_norm_backward(dy.data(), x.data(), mean.data(), rstd.data(), gamma.data(), rows, cols, dx.data(), dg.data(),
                      db.data());
  std::vector<float> want(rows * cols);
  cputrain::kernels::dropout_forward(dx.data(), rows * cols, 0.1f, 8, 9, want.data());
  for (int threads : {1, 2}) {
    std::vector<float> dx2(rows * cols), dg2(cols), db2(cols), dropped(rows * cols, -1.0f);
    std::vector<int> calls(rows, 0), right_row(rows, 0);  // written by the callback's threads; Catch checks after
    const cputrain::kernels::dropout_stream mask(8, 9);
    tbb::task_arena(threads).execute([&] {
      layer_norm_backward(dy.data(), x.data(), mean.data(), rstd.data(), gamma.data(), rows, cols, dx2.data(),
                          dg2.data(), db2.data(), [&](std::size_t r, const float* row) {
                            ++calls[r];
                            right_row[r] = row == dx2.data() + r * cols ? 1 : 0;
                            cputrain::kernels::dropout_apply(mask, r * cols, cols, 0.1f, row,
                                                             dropped.data() + r * cols);
                          });
    });
    INFO("threads=" << threads);
    CHECK(std::all_of(calls.begin(), calls.end(), [](int c) { return c == 1; }));
    CHECK(std::all_of(right_row.begin(), right_row.end(), [](int c) { return c == 1; }));
    CHECK(same_bits(dx2, dx));
    CHECK(same_bits(dg2, dg));
    CHECK(same_bits(db2, db));
    CHECK(same_bits(dropped, want));
  }
}

TEST_CASE("layer_norm_forward's float statistics on rows far from zero: mean to 1 ulp, 1/std to 4e-7") {
  // A one-pass variance (mean(x^2) - mean(x)^2) would lose ~6 digits here; the mean without its second-pass
  // correction is off by ~2 ulps. Exact statistics in long double from the same float inputs.
  for (auto [cols, offset] : {std::pair<std::size_t, float>{768, 1000.0f}, {33, 1e4f}, {1000, -300.0f}}) {
    const std::size_t rows = 64;
    std::mt19937 rng(81);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(rows * cols), gamma(cols, 1.0f), beta(cols, 0.0f), y(x.size()), mean(rows), rstd(rows);
    for (auto& v : x) v = offset + normal(rng);
    layer_norm_forward(x.data(), gamma.data(), beta.data(), 1e-12f, rows, cols, y.data(), mean.data(), rstd.data());
    double worst_mean_ulps = 0, worst_rstd = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      long double m = 0, v = 0;
      for (std::size_t j = 0; j < cols; ++j) m += x[r * cols + j];
      m /= static_cast<long double>(cols);
      for (std::size_t j = 0; j < cols; ++j) v += (x[r * cols + j] - m) * (x[r * cols + j] - m);
      v /= static_cast<long double>(cols);
      const long double rs = 1.0L / std::sqrt(v + 1e-12L);
      const float near = static_cast<float>(m);
      const double ulp = std::nextafter(std::abs(near), INFINITY) - std::abs(near);
      worst_mean_ulps = std::max(worst_mean_ulps, static_cast<double>(std::abs(mean[r] - m)) / ulp);
      worst_rstd = std::max(worst_rstd, static_cast<double>(std::abs(rstd[r] - rs) / rs));
    }
    INFO("cols=" << cols << " offset=" << offset);
    CHECK(worst_mean_ulps <= 1.0);
    CHECK(worst_rstd < 4e-7);
  }
}

TEST_CASE("layer_norm_forward: a constant row of any length gives exactly its value as mean and beta as output") {
  for (std::size_t cols : {std::size_t{1}, std::size_t{64}, std::size_t{100}, std::size_t{768}}) {
    for (float value : {1000.1f, -7.0f, 0.1f, 3e-20f}) {
      std::vector<float> x(cols, value), gamma(cols, 1.5f), beta(cols), y(cols);
      for (std::size_t j = 0; j < cols; ++j) beta[j] = 0.01f * static_cast<float>(j) - 0.3f;
      float mean = 0, rstd = 0;
      layer_norm_forward_row(x.data(), gamma.data(), beta.data(), 1e-12f, cols, y.data(), mean, rstd);
      INFO("cols=" << cols << " value=" << value);
      CHECK(mean == value);
      CHECK(std::isfinite(rstd));
      CHECK(same_bits(y, beta));
    }
  }
}

TEST_CASE("layer_norm results do not depend on where a row sits in memory or on the thread count") {
  const auto p = make_problem(1, 777, 1e-12f, 91);  // 12 whole groups of 64 lanes and a tail of 9
  const std::size_t cols = p.cols;
  std::vector<float> y0(cols), dx0(cols), dg0(cols, 0.0f), db0(cols, 0.0f);
  float mean0 = 0, rstd0 = 0;
  layer_norm_forward_row(p.x.data(), p.gamma.data(), p.beta.data(), p.eps, cols, y0.data(), mean0, rstd0);
  layer_norm_backward(p.w.data(), p.x.data(), &mean0, &rstd0, p.gamma.data(), 1, cols, dx0.data(), dg0.data(),
                      db0.data());
  for (std::size_t offset = 1; offset < 18; ++offset) {
    // The row, its gradient and the outputs all start `offset` floats into their buffers.
    std::vector<float> x(cols + offset), dy(cols + offset), y(cols + offset), dx(cols + offset);
    std::copy(p.x.begin(), p.x.end(), x.begin() + static_cast<std::ptrdiff_t>(offset));
    std::copy(p.w.begin(), p.w.end(), dy.begin() + static_cast<std::ptrdiff_t>(offset));
    std::vector<float> dg(cols, 0.0f), db(cols, 0.0f);
    float mean = 0, rstd = 0;
    layer_norm_forward_row(x.data() + offset, p.gamma.data(), p.beta.data(), p.eps, cols, y.data() + offset, mean,
                           rstd);
    layer_norm_backward(dy.data() + offset, x.data() + offset, &mean, &rstd, p.gamma.data(), 1, cols,
                        dx.data() + offset, dg.data(), db.data());
    INFO("offset=" << offset);
    CHECK(mean == mean0);
    CHECK(rstd == rstd0);
    CHECK(std::memcmp(y.data() + offset, y0.data(), cols * sizeof(float)) == 0);
    CHECK(std::memcmp(dx.data() + offset, dx0.data(), cols * sizeof(float)) == 0);
    CHECK(same_bits(dg, dg0));
    CHECK(same_bits(db, db0));
  }
  // Many rows over many tasks: the forward is the same in arenas of 1 and 2 threads.
  const std::size_t rows = 3000;
  std::mt19937 rng(92);
  const auto x = random_values(rows * 768, rng, -3.0f, 5.0f);
  std::vector<float> y1(x.size()), y2(x.size()), m1(rows), m2(rows), r1(rows), r2(rows);
  tbb::task_arena(1).execute([&] {
    layer_norm_forward(x.data(), p.gamma.data(), p.beta.data(), 1e-12f, rows, 768, y1.data(), m1.data(), r1.data());
  });
  tbb::task_arena(2).execute([&] {
    layer_norm_forward(x.data(), p.gamma.data(), p.beta.data(), 1e-12f, rows, 768, y2.data(), m2.data(), r2.data());
  });
  CHECK(same_bits(y1, y2));
  CHECK(same_bits(m1, m2));
  CHECK(same_bits(r1, r2));
}

}  // namespace layer_norm_test
