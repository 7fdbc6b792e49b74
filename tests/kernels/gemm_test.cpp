// Tests for include/cputrain/kernels/gemm.hpp against a double-precision reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/kernels/gemm.hpp"

using cputrain::bf16;
using cputrain::kernels::gemm;
using cputrain::kernels::transpose;

namespace {

template <class T>
std::vector<T> random_matrix(std::size_t rows, std::size_t ld, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<T> out(rows * ld);
  for (auto& x : out) x = T(dist(rng));
  return out;
}

float as_float(float x) { return x; }
float as_float(bf16 x) { return static_cast<float>(x); }

// op(X)(i, j) for X stored row-major with leading dimension ld.
template <class T>
double op_at(const std::vector<T>& x, std::size_t ld, bool trans, std::size_t i, std::size_t j) {
  return trans ? as_float(x[j * ld + i]) : as_float(x[i * ld + j]);
}

template <class TA, class TB>
void check_against_reference(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, float alpha, float beta,
                             std::size_t pad) {
  std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 17 + k * 7 + (ta ? 1 : 0) + (tb ? 2 : 0)));
  const std::size_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  const std::size_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  const std::size_t lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
  const auto a = random_matrix<TA>(a_rows, lda, rng);
  const auto b = random_matrix<TB>(b_rows, ldb, rng);
  auto c = random_matrix<float>(m, ldc, rng);
  if (beta == 0.0f) {
    for (auto& x : c) x = std::numeric_limits<float>::quiet_NaN();  // beta == 0 must not read C
  }
  const auto c0 = c;
  gemm(ta ? transpose::yes : transpose::no, tb ? transpose::yes : transpose::no, m, n, k, alpha, a.data(), lda,
       b.data(), ldb, beta, c.data(), ldc);
  double worst = 0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double expected = 0;
      for (std::size_t p = 0; p < k; ++p) expected += op_at(a, lda, ta, i, p) * op_at(b, ldb, tb, p, j);
      expected = alpha * expected + (beta == 0.0f ? 0.0 : beta * static_cast<double>(c0[i * ldc + j]));
      // float accumulation over k terms of magnitude <= 1: error bounded by ~k * 2^-24 * sum|terms|
      worst = std::max(worst, std::abs(c[i * ldc + j] - expected) / (1.0 + std::sqrt(static_cast<double>(k))));
    }
    for (std::size_t j = n; j < ldc; ++j) {  // padding columns are never written
      REQUIRE(std::memcmp(&c[i * ldc + j], &c0[i * ldc + j], sizeof(float)) == 0);
    }
  }
  INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << " alpha=" << alpha
            << " beta=" << beta);
  CHECK(worst < 1e-5);
}

}  // namespace

TEST_CASE("gemm matches a double reference for every transpose, odd shapes, alpha and beta") {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (auto [m, n, k] : {std::tuple<std::size_t, std::size_t, std::size_t>{1, 1, 1},
                             {3, 5, 7},
                             {129, 193, 65},    // one past the block shape in both directions
                             {300, 400, 33},
                             {64, 768, 200}}) {
        check_against_reference<float, float>(ta, tb, m, n, k, 1.0f, 0.0f, 0);
        check_against_reference<float, float>(ta, tb, m, n, k, -0.5f, 1.0f, 3);
        check_against_reference<float, float>(ta, tb, m, n, k, 2.0f, 0.25f, 1);
      }
    }
  }
}

TEST_CASE("bf16 operands are widened exactly and accumulated in float") {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      check_against_reference<bf16, bf16>(ta, tb, 200, 250, 130, 1.0f, 0.0f, 2);
      check_against_reference<bf16, float>(ta, tb, 131, 77, 64, 1.0f, 1.0f, 0);
      check_against_reference<float, bf16>(ta, tb, 5, 400, 300, 0.5f, 0.0f, 5);
    }
  }
}

TEST_CASE("k == 0 or alpha == 0 scales C by beta, and empty products do nothing") {
  std::vector<float> c(6, 2.0f);
  const float a = 1.0f, b = 1.0f;
  gemm(transpose::no, transpose::no, 2, 3, 0, 1.0f, &a, 0, &b, 3, 0.5f, c.data(), 3);
  CHECK(c == std::vector<float>(6, 1.0f));
  std::vector<float> nan_c(6, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> ones(6, 1.0f);
  gemm(transpose::no, transpose::no, 2, 3, 2, 0.0f, ones.data(), 2, ones.data(), 3, 0.0f, nan_c.data(), 3);
  CHECK(nan_c == std::vector<float>(6, 0.0f));
  gemm(transpose::no, transpose::no, 0, 3, 2, 1.0f, ones.data(), 2, ones.data(), 3, 0.0f, nan_c.data(), 3);
}

TEST_CASE("gemm gives bit-identical results whatever the thread count") {
  const std::size_t m = 700, n = 900, k = 257;
  std::mt19937 rng(7);
  const auto a = random_matrix<float>(m, k, rng);
  const auto b = random_matrix<float>(n, k, rng);
  std::vector<float> one(m * n), two(m * n);
  tbb::task_arena(1).execute(
      [&] { gemm(transpose::no, transpose::yes, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, one.data(), n); });
  tbb::task_arena(2).execute(
      [&] { gemm(transpose::no, transpose::yes, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, two.data(), n); });
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
}

TEST_CASE("arguments that cannot describe the matrices are refused with the reason") {
  std::vector<float> x(100, 1.0f), c(100);
  CHECK_THROWS_WITH(gemm(transpose::no, transpose::no, 4, 5, 6, 1.0f, x.data(), 5, x.data(), 5, 0.0f, c.data(), 5),
                    Catch::Contains("lda 5 is smaller than A's 6 columns"));
  CHECK_THROWS_WITH(gemm(transpose::no, transpose::yes, 4, 5, 6, 1.0f, x.data(), 6, x.data(), 5, 0.0f, c.data(), 5),
                    Catch::Contains("ldb 5 is smaller than B's 6 columns"));
  CHECK_THROWS_WITH(gemm(transpose::no, transpose::no, 4, 5, 6, 1.0f, x.data(), 6, x.data(), 5, 0.0f, c.data(), 4),
                    Catch::Contains("ldc 4"));
  const float* null_a = nullptr;
  CHECK_THROWS_WITH(gemm(transpose::no, transpose::no, 4, 5, 6, 1.0f, null_a, 6, x.data(), 5, 0.0f, c.data(), 5),
                    Catch::Contains("A or B is null"));
}
