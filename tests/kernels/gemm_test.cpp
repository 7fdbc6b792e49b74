// Tests for include/cputrain/kernels/gemm.hpp against a double-precision reference, on every backend this build
// and CPU offer (gemm_backend.hpp): each case runs once per backend.
#include <catch2/catch.hpp>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <thread>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/kernels/gemm.hpp"
#include "cputrain/kernels/gemm_backend.hpp"
#include "cputrain/core/cpu_features.hpp"
#include "support/random_values.hpp"
#include "support/sanitizers.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace gemm_test {

using cputrain::bf16;
using cputrain::kernels::gemm_backend_choice;
using cputrain::kernels::gemm;
using cputrain::kernels::transpose;

namespace {

template <class T>
std::vector<T> random_matrix(std::size_t rows, std::size_t ld, std::mt19937& rng) {
  std::vector<float> values(rows * ld);
  cputrain_test::fill_uniform(values.data(), values.size(), -1.0f, 1.0f, rng());
  return std::vector<T>(values.begin(), values.end());
}

float as_float(float x) { return x; }
float as_float(bf16 x) { return static_cast<float>(x); }

template <class T>
std::vector<double> widened(const std::vector<T>& x) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = as_float(x[i]);
  return out;
}

// The oracle: row i of op(A) op(B) in double, A and B row-major with leading dimensions lda and ldb (op transposes
// where asked), into out[0..n). Out of the sanitizers' reach (support/sanitizers.hpp): under TSan it was most of the
// program's time, and it touches nothing of the library's. A row at a time, so that no product-sized buffer is
// allocated (under TSan every new page of it faults its shadow in).
CPUTRAIN_TEST_NOT_SANITIZED void reference_row(const double* a, std::size_t lda, bool ta, const double* b,
                                               std::size_t ldb, bool tb, std::size_t i, std::size_t n, std::size_t k,
                                               double* out) {
  for (std::size_t j = 0; j < n; ++j) {
    double sum = 0;
    for (std::size_t p = 0; p < k; ++p) {
      sum += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
    }
    out[j] = sum;
  }
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
  const std::vector<double> a_wide = widened(a), b_wide = widened(b);
  std::vector<double> product(n);
  double worst = 0;
  for (std::size_t i = 0; i < m; ++i) {
    reference_row(a_wide.data(), lda, ta, b_wide.data(), ldb, tb, i, n, k, product.data());
    for (std::size_t j = 0; j < n; ++j) {
      const double expected =
          alpha * product[j] + (beta == 0.0f ? 0.0 : beta * static_cast<double>(c0[i * ldc + j]));
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

/// The backends to run a case on; the choice is set for the rest of the test case and undone at its end.
struct backend_under_test {
  explicit backend_under_test(gemm_backend_choice choice) { cputrain::kernels::set_gemm_backend(choice); }
  ~backend_under_test() { cputrain::kernels::set_gemm_backend(gemm_backend_choice::automatic); }
  backend_under_test(const backend_under_test&) = delete;
  backend_under_test& operator=(const backend_under_test&) = delete;
};

gemm_backend_choice any_backend() {
  if (cputrain::kernels::onednn_built_in()) {
    return GENERATE(gemm_backend_choice::eigen, gemm_backend_choice::onednn, gemm_backend_choice::automatic);
  }
  return GENERATE(gemm_backend_choice::eigen, gemm_backend_choice::automatic);
}

/// Backends for bf16 x bf16 products: oneDNN only where it has bf16 kernels at all (none below AVX-512).
gemm_backend_choice bf16_backend() {
  const auto choice = any_backend();
#if defined(CPUTRAIN_HAVE_ONEDNN)
  if (choice == gemm_backend_choice::onednn && !cputrain::kernels::onednn::has_avx512()) {
    return gemm_backend_choice::eigen;
  }
#endif
  return choice;
}

}  // namespace

TEST_CASE("gemm matches a double reference for every transpose, odd shapes, alpha and beta") {
  const backend_under_test backend(any_backend());
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

TEST_CASE("oneDNN's products take larger blocks exactly where that still leaves 16 tasks") {
  using cputrain::kernels::gemm_blocking;
  const auto large = gemm_blocking::for_product(4096, 768, true);  // GLUE's 32 x 128 tokens: 16 x 2 blocks
  CHECK(large.rows == 256);
  CHECK(large.cols == 384);
  const auto small = gemm_blocking::for_product(1536, 768, true);  // 4 x 384 tokens: 6 x 2 large blocks only
  CHECK(small.rows == 128);
  CHECK(small.cols == 192);
  CHECK(gemm_blocking::for_product(4096, 768, false).rows == 128);  // Eigen keeps its blocks
  CHECK(gemm_blocking::for_product(3073, 385, true).rows == 256);   // 13 x 2 rounded up
}

TEST_CASE("products in large blocks match the reference, partial edge blocks included") {
  const backend_under_test backend(any_backend());
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      check_against_reference<float, float>(ta, tb, 1100, 1550, 9, 1.0f, 0.0f, 1);  // 5 x 5 large blocks
      check_against_reference<float, float>(ta, tb, 1100, 1550, 9, -0.5f, 1.0f, 0);
    }
  }
}

TEST_CASE("bf16 operands are multiplied exactly and accumulated in float") {
  const backend_under_test backend(bf16_backend());
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      check_against_reference<bf16, bf16>(ta, tb, 200, 250, 130, 1.0f, 0.0f, 2);
      check_against_reference<bf16, float>(ta, tb, 131, 77, 64, 1.0f, 1.0f, 0);
      check_against_reference<float, bf16>(ta, tb, 5, 400, 300, 0.5f, 0.0f, 5);
    }
  }
}

TEST_CASE("k == 0 or alpha == 0 scales C by beta, and empty products do nothing") {
  const backend_under_test backend(any_backend());
  std::vector<float> c(6, 2.0f);
  const float a = 1.0f, b = 1.0f;
  gemm(transpose::no, transpose::no, 2, 3, 0, 1.0f, &a, 0, &b, 3, 0.5f, c.data(), 3);
  CHECK(c == std::vector<float>(6, 1.0f));
  std::vector<float> nan_c(6, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> ones(6, 1.0f);
  gemm(transpose::no, transpose::no, 2, 3, 2, 0.0f, ones.data(), 2, ones.data(), 3, 0.0f, nan_c.data(), 3);
  CHECK(nan_c == std::vector<float>(6, 0.0f));
  // m == 0 or n == 0: an empty product, C is not touched (not even scaled by beta = 0).
  std::vector<float> untouched(6, 7.0f);
  gemm(transpose::no, transpose::no, 0, 3, 2, 1.0f, ones.data(), 2, ones.data(), 3, 0.0f, untouched.data(), 3);
  CHECK(untouched == std::vector<float>(6, 7.0f));
  gemm(transpose::no, transpose::no, 2, 0, 2, 1.0f, ones.data(), 2, ones.data(), 3, 0.0f, untouched.data(), 3);
  CHECK(untouched == std::vector<float>(6, 7.0f));
}

template <class T>
void check_thread_count_independence(std::size_t m = 700, std::size_t n = 900, std::size_t k = 257) {
  std::mt19937 rng(7);
  const auto a = random_matrix<T>(m, k, rng);
  const auto b = random_matrix<T>(n, k, rng);
  std::vector<float> one(m * n), two(m * n), single(m * n);
  tbb::task_arena(1).execute(
      [&] { gemm(transpose::no, transpose::yes, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, one.data(), n); });
  tbb::task_arena(2).execute(
      [&] { gemm(transpose::no, transpose::yes, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, two.data(), n); });
  // Attention's per-head products run all their blocks on the calling thread: the same bits again.
  tbb::task_arena(2).execute([&] {
    gemm(transpose::no, transpose::yes, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, single.data(), n,
         cputrain::kernels::gemm_threads::calling_thread);
  });
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(one.data(), single.data(), one.size() * sizeof(float)) == 0);
}

TEST_CASE("gemm gives bit-identical results whatever the thread count") {
  const backend_under_test backend(any_backend());
  check_thread_count_independence<float>();
  check_thread_count_independence<float>(1100, 1550, 64);  // large blocks on oneDNN
}

TEST_CASE("bf16 gemm gives bit-identical results whatever the thread count") {
  const backend_under_test backend(bf16_backend());
  check_thread_count_independence<bf16>();
}

TEST_CASE("a GEMM backend is chosen by name, and an unknown name is refused with its source") {
  using cputrain::kernels::parse_gemm_backend;
  CHECK(parse_gemm_backend("auto", "test") == gemm_backend_choice::automatic);
  CHECK(parse_gemm_backend("eigen", "test") == gemm_backend_choice::eigen);
  CHECK(parse_gemm_backend("onednn", "test") == gemm_backend_choice::onednn);
  CHECK_THROWS_WITH(parse_gemm_backend("mkl", "environment variable CPUTRAIN_GEMM_BACKEND"),
                    Catch::Contains("CPUTRAIN_GEMM_BACKEND") && Catch::Contains("'mkl'") &&
                        Catch::Contains("auto, eigen or onednn"));
  {
    const backend_under_test backend(gemm_backend_choice::eigen);
    CHECK(cputrain::kernels::bf16_gemm_backend() == cputrain::kernels::gemm_backend::eigen);
    CHECK(cputrain::kernels::fp32_gemm_backend() == cputrain::kernels::gemm_backend::eigen);
    CHECK_THAT(cputrain::kernels::gemm_path_description(true), Catch::StartsWith("Eigen"));
  }
  if (cputrain::kernels::onednn_built_in()) {
#if defined(CPUTRAIN_HAVE_ONEDNN)
    // oneDNN's fp32 kernels measured faster than Eigen's with AVX-512, not with AVX2 only.
    const bool avx512 = cputrain::kernels::onednn::has_avx512();
    CHECK((cputrain::kernels::fp32_gemm_backend() == cputrain::kernels::gemm_backend::onednn) == avx512);
    CHECK_THAT(cputrain::kernels::gemm_path_description(false), Catch::StartsWith(avx512 ? "oneDNN" : "Eigen"));
#endif
  } else {
    CHECK_THROWS_WITH(cputrain::kernels::set_gemm_backend(gemm_backend_choice::onednn),
                      Catch::Contains("built without oneDNN"));
  }
}

#if defined(CPUTRAIN_HAVE_ONEDNN)
TEST_CASE("bf16 products go to oneDNN exactly where the CPU has native bf16") {
  const auto features = cputrain::cpu_features::detect();
  const bool native = cputrain::kernels::onednn::native_bf16();
  INFO("oneDNN ISA: " << cputrain::kernels::onednn::effective_isa_name());
  // DNNL_MAX_CPU_ISA may cap oneDNN below what the CPU has, never above.
  if (native) CHECK((features.avx512bf16 || features.amx_bf16));
  CHECK((cputrain::kernels::bf16_gemm_backend() == cputrain::kernels::gemm_backend::onednn) == native);
  CHECK_THAT(cputrain::kernels::gemm_path_description(true),
             Catch::Contains(native ? "native bf16" : "widened to fp32"));
}
#endif

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
#if defined(CPUTRAIN_HAVE_ONEDNN)
TEST_CASE("oneDNN forced where it has no bf16 kernels is refused with the reason") {
  if (cputrain::kernels::onednn::has_avx512()) {
    // Runs for real under DNNL_MAX_CPU_ISA=AVX2 (registered so in tests/kernels/CMakeLists.txt).
    SUCCEED("oneDNN has bf16 kernels here (" << cputrain::kernels::onednn::effective_isa_name() << ")");
    return;
  }
  const backend_under_test backend(gemm_backend_choice::onednn);
  std::vector<bf16> a(64 * 64, bf16(1.0f));
  std::vector<float> c(64 * 64);
  CHECK_THROWS_WITH(gemm(transpose::no, transpose::no, 64, 64, 64, 1.0f, a.data(), 64, a.data(), 64, 0.0f, c.data(), 64),
                    Catch::Contains("oneDNN has no bf16 matrix product for this CPU") &&
                        Catch::Contains("CPUTRAIN_GEMM_BACKEND"));
  // fp32 still runs there, and automatic choice sends bf16 to Eigen.
  CHECK(cputrain::kernels::onednn::native_bf16() == false);
}
#endif

#if defined(CPUTRAIN_HAVE_ONEDNN)
namespace {
std::atomic<int> signals_handled{0};
extern "C" void count_signal(int) { signals_handled.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

TEST_CASE("signals that arrive while oneDNN multiplies leave the heap intact") {
  // oneDNN's generated GEMM kernels point the stack pointer into the heap while they run (its issue 4845): a
  // signal handled on that thread then wrote its frame into the heap. Here a second thread signals the one that
  // multiplies, thousands of times, and the multiplying thread allocates and frees between products (glibc
  // aborts on a corrupted heap).
  struct sigaction action {}, previous{};
  action.sa_handler = count_signal;
  sigemptyset(&action.sa_mask);
  REQUIRE(sigaction(SIGUSR1, &action, &previous) == 0);
  const backend_under_test backend(gemm_backend_choice::onednn);
  const std::size_t n = 256;
  std::mt19937 rng(3);
  const auto a = random_matrix<float>(n, n, rng);
  const auto b = random_matrix<float>(n, n, rng);
  std::vector<float> c(n * n), first(n * n);
  std::atomic<bool> done{false};
  const pthread_t target = pthread_self();
  std::thread sender([&] {
    while (!done.load()) {
      pthread_kill(target, SIGUSR1);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  });
  for (int i = 0; i < 1500; ++i) {
    gemm(transpose::no, transpose::no, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n,
         cputrain::kernels::gemm_threads::calling_thread);
    std::vector<char> churn(1024 + static_cast<std::size_t>(i % 700), 1);
    if (i == 0) first = c;
  }
  done.store(true);
  sender.join();
  sigaction(SIGUSR1, &previous, nullptr);
  CHECK(signals_handled.load() > 100);
  CHECK(std::memcmp(c.data(), first.data(), c.size() * sizeof(float)) == 0);
}
#endif

}  // namespace gemm_test
