// Tests for include/cputrain/optim/grad_clip.hpp: torch.nn.utils.clip_grad_norm_'s norm and clipped gradients
// (reference from scripts/make_optim_reference.py), the same norm for any thread count, non-finite gradients left
// alone, and the errors.
#include <catch2/catch.hpp>

#include "support/checks.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/optim/grad_clip.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace grad_clip_test {

using cputrain::usage_error;
using cputrain::optim::clip_grad_norm;
using cputrain::optim::global_norm;

using cputrain::test::says;

namespace {

constexpr std::size_t n_ref = 37;  // three tensors of 20, 5 and 12 in torch, one flat buffer here

float clip_grad(std::size_t i) { return static_cast<float>(static_cast<int>((i * 11) % 23) - 11) / 8.0f; }

std::vector<float> ref_grads() {
  std::vector<float> g(n_ref);
  for (std::size_t i = 0; i < n_ref; ++i) g[i] = clip_grad(i);
  return g;
}

bool bitwise_equal(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

// ---- output of /usr/bin/python3 scripts/make_optim_reference.py (torch 1.13), pasted ----
// exact norm (double, fsum): 5.115845482420281
constexpr double exact_norm = 0x1.476a032b989adp+2;
// max_norm 1.0
constexpr float torch_norm_clipped = 0x1.476a04p+2f;
constexpr std::array<float, 37> torch_grads_clipped = {
    -0x1.133928p-2f, 0x0p+0f, 0x1.133928p-2f, -0x1.905322p-6f,
    0x1.f467eap-3f, -0x1.905322p-5f, 0x1.c25d86p-3f, -0x1.2c3e5ap-4f,
    0x1.905322p-3f, -0x1.905322p-4f, 0x1.5e48bep-3f, -0x1.f467eap-4f,
    0x1.2c3e5ap-3f, -0x1.2c3e5ap-3f, 0x1.f467eap-4f, -0x1.5e48bep-3f,
    0x1.905322p-4f, -0x1.905322p-3f, 0x1.2c3e5ap-4f, -0x1.c25d86p-3f,
    0x1.905322p-5f, -0x1.f467eap-3f, 0x1.905322p-6f, -0x1.133928p-2f,
    0x0p+0f, 0x1.133928p-2f, -0x1.905322p-6f, 0x1.f467eap-3f,
    -0x1.905322p-5f, 0x1.c25d86p-3f, -0x1.2c3e5ap-4f, 0x1.905322p-3f,
    -0x1.905322p-4f, 0x1.5e48bep-3f, -0x1.f467eap-4f, 0x1.2c3e5ap-3f,
    -0x1.2c3e5ap-3f,
};
// max_norm 100.0
constexpr float torch_norm_unclipped = 0x1.476a04p+2f;
constexpr std::array<float, 37> torch_grads_unclipped = {
    -0x1.6p+0f, 0x0p+0f, 0x1.6p+0f, -0x1p-3f,
    0x1.4p+0f, -0x1p-2f, 0x1.2p+0f, -0x1.8p-2f,
    0x1p+0f, -0x1p-1f, 0x1.cp-1f, -0x1.4p-1f,
    0x1.8p-1f, -0x1.8p-1f, 0x1.4p-1f, -0x1.cp-1f,
    0x1p-1f, -0x1p+0f, 0x1.8p-2f, -0x1.2p+0f,
    0x1p-2f, -0x1.4p+0f, 0x1p-3f, -0x1.6p+0f,
    0x0p+0f, 0x1.6p+0f, -0x1p-3f, 0x1.4p+0f,
    -0x1p-2f, 0x1.2p+0f, -0x1.8p-2f, 0x1p+0f,
    -0x1p-1f, 0x1.cp-1f, -0x1.4p-1f, 0x1.8p-1f,
    -0x1.8p-1f,
};
// ---- end of the pasted output ----

}  // namespace

TEST_CASE("clip_grad_norm: norm and clipped gradients equal torch's", "[optim][grad_clip]") {
  std::vector<float> g = ref_grads();
  CHECK(global_norm(g) == static_cast<float>(exact_norm));
  CHECK(global_norm(g) == torch_norm_clipped);

  const float norm = clip_grad_norm(g, 1.0f);
  CHECK(norm == torch_norm_clipped);
  for (std::size_t i = 0; i < n_ref; ++i) {
    INFO("element " << i);
    CHECK(g[i] == torch_grads_clipped[i]);
  }
  CHECK(global_norm(g) == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("clip_grad_norm: a norm under max_norm leaves the gradients alone", "[optim][grad_clip]") {
  std::vector<float> g = ref_grads();
  CHECK(clip_grad_norm(g, 100.0f) == torch_norm_unclipped);
  CHECK(bitwise_equal(g, torch_grads_unclipped));
  CHECK(bitwise_equal(g, ref_grads()));
  CHECK(clip_grad_norm(g, std::numeric_limits<float>::infinity()) == torch_norm_unclipped);
  CHECK(bitwise_equal(g, ref_grads()));
}

TEST_CASE("clip_grad_norm: large buffers are summed in double", "[optim][grad_clip]") {
  // 3,000,017 halves: the sum of squares is exact in double, but not in float (past 2^24 float stops counting).
  std::vector<float> halves(3'000'017, 0.5f);
  CHECK(global_norm(halves) == static_cast<float>(std::sqrt(3'000'017 * 0.25)));
  // Squares past float's range: torch would overflow to inf.
  const std::vector<float> big(4, 1e30f);
  CHECK(global_norm(big) == 2e30f);
  CHECK(global_norm(std::vector<float>{}) == 0.0f);
  std::vector<float> empty;
  CHECK(clip_grad_norm(empty, 1.0f) == 0.0f);
}

TEST_CASE("clip_grad_norm: identical with one thread and with two", "[optim][grad_clip][threads]") {
  std::vector<float> g(3'000'000);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = std::ldexp(uniform(rng), -static_cast<int>(i % 23));
  const auto run = [&](int threads) {
    std::vector<float> copy = g;
    float norm = 0;
    tbb::task_arena(threads).execute([&] { norm = clip_grad_norm(copy, 0.5f); });
    return std::pair{norm, copy};
  };
  const auto [norm1, g1] = run(1);
  const auto [norm2, g2] = run(2);
  CHECK(norm1 > 0.5f);
  CHECK(std::memcmp(&norm1, &norm2, sizeof norm1) == 0);
  CHECK_FALSE(bitwise_equal(g1, g));
  CHECK(bitwise_equal(g1, g2));
}

TEST_CASE("clip_grad_norm: a NaN or Inf gradient is reported and nothing is scaled", "[optim][grad_clip]") {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
    INFO("bad gradient " << bad);
    std::vector<float> g = ref_grads();
    g[30] = bad;
    const std::vector<float> before = g;
    const float norm = clip_grad_norm(g, 1.0f);
    CHECK_FALSE(std::isfinite(norm));
    CHECK(std::isnan(norm) == std::isnan(bad));
    CHECK(bitwise_equal(g, before));
  }
}

TEST_CASE("clip_grad_norm: max_norm must be positive", "[optim][grad_clip][errors]") {
  std::vector<float> g = ref_grads();
  CHECK_THROWS_MATCHES(clip_grad_norm(g, 0.0f), usage_error,
                       says("clip_grad_norm: max_norm = 0 must be > 0") && says("global_norm"));
  CHECK_THROWS_MATCHES(clip_grad_norm(g, -1.0f), usage_error, says("max_norm = -1"));
  CHECK_THROWS_MATCHES(clip_grad_norm(g, std::numeric_limits<float>::quiet_NaN()), usage_error,
                       says("max_norm = nan"));
  CHECK(bitwise_equal(g, ref_grads()));
}

}  // namespace grad_clip_test
