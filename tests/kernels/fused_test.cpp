// Tests for include/cputrain/kernels/fused.hpp: every fused pass against the unfused composition of the
// whole-tensor kernels, bit for bit, with float and bf16 kept copies, computed in place (float) or beside them,
// over several row blocks and rows that are not a whole number of vector blocks, in arenas of 1 and 2 threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <type_traits>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/core/bf16.hpp"
#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/kernels/bias.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/fused.hpp"
#include "cputrain/kernels/gelu.hpp"
#include "cputrain/kernels/layer_norm.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace fused_test {

using cputrain::bf16;
namespace kn = cputrain::kernels;

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// The whole tensor as the activation type, the way the unfused layer kept it.
template <class A>
std::vector<A> kept_copy(const std::vector<float>& v) {
  if constexpr (std::is_same_v<A, float>) {
    return v;
  } else {
    std::vector<A> out(v.size());
    cputrain::to_bf16(std::span<const float>(v), std::span<A>(out));
    return out;
  }
}

// Shapes: [tokens, hidden] with several row blocks (rows_per_block(96) = 170 rows), and odd widths.
constexpr std::size_t rows = 400;

template <class A>
void check_bias_keep(std::size_t cols) {
  const auto y0 = random_values(rows * cols, 1), bias = random_values(cols, 2);
  auto want = y0;
  kn::add_bias(want.data(), bias.data(), rows, cols);
  for (int threads : {1, 2}) {
    auto y = y0;
    std::vector<A> kept(y.size());
    tbb::task_arena(threads).execute([&] { kn::bias_keep(bias.data(), rows, cols, y.data(), kept.data()); });
    INFO("cols=" << cols << " threads=" << threads);
    CHECK(same_bits(y, y0));  // only read when it is not kept itself
    CHECK(same_bits(kept, kept_copy<A>(want)));
  }
  // In place, as the float layer computes into the kept tensor.
  if constexpr (std::is_same_v<A, float>) {
    auto y = y0;
    kn::bias_keep(bias.data(), rows, cols, y.data(), y.data());
    CHECK(same_bits(y, want));
  }
  CHECK(!same_bits(want, y0));
}

template <class A>
void check_bias_gelu_keep(std::size_t cols) {
  const auto y0 = random_values(rows * cols, 3, -4.0f, 4.0f), bias = random_values(cols, 4);
  auto with_bias = y0;
  kn::add_bias(with_bias.data(), bias.data(), rows, cols);
  std::vector<float> gelu(with_bias.size());
  kn::gelu_forward(with_bias.data(), with_bias.size(), gelu.data());
  const auto want_in = kept_copy<A>(with_bias), want_out = kept_copy<A>(gelu);
  for (int threads : {1, 2}) {
    // Float: y is the kept input itself (as in the layer); bf16: y is float scratch beside the bf16 copies.
    auto y = y0;
    std::vector<A> in(y.size()), out(y.size());
    A* in_kept = in.data();
    if constexpr (std::is_same_v<A, float>) in_kept = y.data();
    tbb::task_arena(threads).execute(
        [&] { kn::bias_gelu_keep(bias.data(), rows, cols, y.data(), in_kept, out.data()); });
    if constexpr (std::is_same_v<A, float>) {
      in = y;
    } else {
      CHECK(same_bits(y, y0));  // float scratch, only read
    }
    INFO("cols=" << cols << " threads=" << threads);
    CHECK(same_bits(in, want_in));
    CHECK(same_bits(out, want_out));
  }
  // GELU really ran: negative inputs shrink towards 0, large positive ones pass.
  std::size_t shrunk = 0;
  for (std::size_t i = 0; i < gelu.size(); ++i) shrunk += with_bias[i] < -1.0f && std::abs(gelu[i]) < 0.2f ? 1 : 0;
  CHECK(shrunk > gelu.size() / 10);
}

template <class A>
void check_bias_dropout_residual_layer_norm(std::size_t cols, float p) {
  const auto z0 = random_values(rows * cols, 5), h0 = random_values(rows * cols, 6, -1.0f, 3.0f);
  const auto bias = random_values(cols, 7), gamma = random_values(cols, 8, 0.5f, 1.5f), beta = random_values(cols, 9);
  const kn::dropout_draw drop{p, 42, 17};
  // Unfused: bias, dropout over the whole tensor, residual, kept copy, LayerNorm, kept copy.
  auto z_want = z0, h_want = h0;
  kn::add_bias(z_want.data(), bias.data(), rows, cols);
  kn::dropout_forward(z_want.data(), z_want.size(), p, drop.seed, drop.stream, z_want.data());
  for (std::size_t i = 0; i < z_want.size(); ++i) z_want[i] += h_want[i];
  std::vector<float> mean_want(rows), rstd_want(rows);
  kn::layer_norm_forward(z_want.data(), gamma.data(), beta.data(), 1e-12f, rows, cols, h_want.data(),
                         mean_want.data(), rstd_want.data());
  for (int threads : {1, 2}) {
    auto z = z0, h = h0;
    std::vector<A> z_kept(z.size()), h_kept(h.size());
    std::vector<float> mean(rows), rstd(rows);
    A* zk = z_kept.data();
    if constexpr (std::is_same_v<A, float>) zk = z.data();  // computed in place, as the float layer does
    tbb::task_arena(threads).execute([&] {
      kn::bias_dropout_residual_layer_norm(bias.data(), drop, gamma.data(), beta.data(), 1e-12f, rows, cols,
                                           z.data(), zk, h.data(), mean.data(), rstd.data(), h_kept.data());
    });
    if constexpr (std::is_same_v<A, float>) {
      z_kept = z;
    } else {
      CHECK(same_bits(z, z0));  // float scratch, only read
    }
    INFO("cols=" << cols << " p=" << p << " threads=" << threads);
    CHECK(same_bits(z_kept, kept_copy<A>(z_want)));
    CHECK(same_bits(h, h_want));
    CHECK(same_bits(h_kept, kept_copy<A>(h_want)));
    CHECK(same_bits(mean, mean_want));
    CHECK(same_bits(rstd, rstd_want));
  }
  // Without a kept output, h is still written.
  auto z = z0, h = h0;
  std::vector<A> z_kept(z.size());
  std::vector<float> mean(rows), rstd(rows);
  kn::bias_dropout_residual_layer_norm(bias.data(), drop, gamma.data(), beta.data(), 1e-12f, rows, cols, z.data(),
                                       z_kept.data(), h.data(), mean.data(), rstd.data(), static_cast<A*>(nullptr));
  CHECK(same_bits(h, h_want));
  // Dropout dropped something: some z are the residual alone.
  std::size_t residual_only = 0;
  for (std::size_t i = 0; i < z_want.size(); ++i) residual_only += z_want[i] == h0[i] ? 1 : 0;
  CHECK((p == 0.0f ? residual_only == 0 : residual_only > z_want.size() * p / 2));
}

}  // namespace

TEST_CASE("bias_keep is add_bias then keeping the tensor, float and bf16") {
  for (std::size_t cols : {std::size_t{96}, std::size_t{37}}) {
    check_bias_keep<float>(cols);
    check_bias_keep<bf16>(cols);
  }
}

TEST_CASE("bias_gelu_keep is add_bias, keeping GELU's input, gelu_forward and keeping its output") {
  for (std::size_t cols : {std::size_t{200}, std::size_t{37}}) {
    check_bias_gelu_keep<float>(cols);
    check_bias_gelu_keep<bf16>(cols);
  }
}

TEST_CASE("bias_dropout_residual_layer_norm is bias, dropout, residual, keep, LayerNorm, keep, bit for bit") {
  for (std::size_t cols : {std::size_t{96}, std::size_t{37}}) {
    for (float p : {0.0f, 0.1f}) {
      check_bias_dropout_residual_layer_norm<float>(cols, p);
      check_bias_dropout_residual_layer_norm<bf16>(cols, p);
    }
  }
}

TEST_CASE("dropout_rows as layer_norm_backward's callback is dropout_backward of the finished gradient") {
  const std::size_t cols = 96;
  const auto x = random_values(rows * cols, 10), dy = random_values(rows * cols, 11);
  const auto gamma = random_values(cols, 12, 0.5f, 1.5f);
  std::vector<float> y(x.size()), mean(rows), rstd(rows);
  kn::layer_norm_forward(x.data(), gamma.data(), gamma.data(), 1e-12f, rows, cols, y.data(), mean.data(),
                         rstd.data());
  for (float p : {0.0f, 0.3f}) {
    const kn::dropout_draw drop{p, 3, 99};
    auto dx_want = dy;
    std::vector<float> dg_want(cols), db_want(cols), dropped_want(dy.size());
    kn::layer_norm_backward(dx_want.data(), x.data(), mean.data(), rstd.data(), gamma.data(), rows, cols,
                            dx_want.data(), dg_want.data(), db_want.data());
    kn::dropout_backward(dx_want.data(), dx_want.size(), p, drop.seed, drop.stream, dropped_want.data());
    for (int threads : {1, 2}) {
      auto dx = dy;
      std::vector<float> dg(cols), db(cols), dropped(dy.size(), -1.0f);
      tbb::task_arena(threads).execute([&] {
        kn::layer_norm_backward(dx.data(), x.data(), mean.data(), rstd.data(), gamma.data(), rows, cols, dx.data(),
                                dg.data(), db.data(), kn::dropout_rows(drop, cols, dropped.data()));
      });
      INFO("p=" << p << " threads=" << threads);
      CHECK(same_bits(dx, dx_want));
      CHECK(same_bits(dg, dg_want));
      CHECK(same_bits(db, db_want));
      CHECK(same_bits(dropped, dropped_want));
    }
    const auto zeros = std::count(dropped_want.begin(), dropped_want.end(), 0.0f);
    CHECK((p == 0.0f ? zeros == 0 : zeros > static_cast<std::ptrdiff_t>(dy.size() / 5)));
  }
}

TEST_CASE("fused passes refuse a dropout probability of 1 or a negative one") {
  std::vector<float> z(8), h(8), g(8, 1.0f), b(8), mean(1), rstd(1);
  CHECK_THROWS_AS(kn::bias_dropout_residual_layer_norm(b.data(), {1.0f, 0, 0}, g.data(), b.data(), 1e-12f, 1, 8,
                                                       z.data(), z.data(), h.data(), mean.data(), rstd.data(),
                                                       static_cast<float*>(nullptr)),
                  cputrain::usage_error);
  CHECK_THROWS_AS(kn::dropout_rows({-0.5f, 0, 0}, 8, z.data()), cputrain::usage_error);
}

}  // namespace fused_test
