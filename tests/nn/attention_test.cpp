// Tests for include/cputrain/nn/attention.hpp: multi-head self-attention against a double reference, with a padded
// key mask, with and without dropout on the probabilities; dq, dk, dv against central differences; bf16
// activations; thread-count independence; sequences longer than one GEMM block.
#include <catch2/catch.hpp>

#include "support/checks.hpp"
#include "support/sanitizers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/core/bf16.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/softmax.hpp"
#include "cputrain/nn/attention.hpp"

using cputrain::bf16;
using cputrain::kernels::attention_mask_min;
using cputrain::nn::attention_backward;
using cputrain::nn::attention_forward;
using cputrain::nn::attention_shape;
using cputrain::kernels::dropout_draw;

// Plain operator new, replaced for this executable: memory starts `new_shift` bytes past a 64-byte boundary, where
// new_shift is per thread and 0 unless a test sets it. So a per-thread scratch buffer (a std::vector<float>) lands at
// an alignment the test chooses, and a result that depends on where its scratch lives differs every time, not only
// when malloc happens to place a buffer unluckily. (new[], nothrow and sized forms forward to these two.) Not under
// AddressSanitizer, whose runtime hands out some blocks from its own operator new: there the allocator decides.
#define CPUTRAIN_TEST_REPLACES_NEW (!CPUTRAIN_TEST_ASAN)

using cputrain::test::relative_error;

namespace {
thread_local std::size_t new_shift = 0;
}  // namespace

#if CPUTRAIN_TEST_REPLACES_NEW
// noinline: inlined into a library's std::vector, GCC 12 reads the header before the block as an out-of-bounds
// access (-Warray-bounds), though it is inside the malloc'd block.
__attribute__((noinline)) void* operator new(std::size_t n) {
  void* raw = std::malloc(n + 128);
  if (raw == nullptr) throw std::bad_alloc();
  const std::uintptr_t aligned = (reinterpret_cast<std::uintptr_t>(raw) + 16 + 63) & ~std::uintptr_t{63};
  char* user = reinterpret_cast<char*>(aligned + new_shift);
  std::memcpy(user - sizeof(void*), &raw, sizeof(void*));  // where free() must start
  return user;
}
__attribute__((noinline)) void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  void* raw = nullptr;
  std::memcpy(&raw, static_cast<char*>(p) - sizeof(void*), sizeof(void*));
  std::free(raw);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
#endif

namespace {

std::vector<float> random_values(std::size_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

/// Sequence b has its last `b * pad_step` keys padded (HF's extended mask: 0 or the float minimum).
std::vector<float> key_mask(const attention_shape& s, std::size_t pad_step) {
  std::vector<float> m(s.batch * s.seq, 0.0f);
  for (std::size_t b = 0; b < s.batch; ++b) {
    for (std::size_t i = s.seq - std::min(s.seq - 1, b * pad_step); i < s.seq; ++i) m[b * s.seq + i] = attention_mask_min;
  }
  return m;
}

/// HF BertSelfAttention after the projections, in double: probs [groups, S, S] and context [T, H].
struct reference_result {
  std::vector<double> probs, context;
};
reference_result reference(const attention_shape& s, const std::vector<double>& q, const std::vector<double>& k,
                           const std::vector<double>& v, const std::vector<float>& mask, const dropout_draw& drop) {
  const std::size_t S = s.seq, D = s.head_dim, H = s.hidden();
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  const double keep_scale = drop.active() ? static_cast<double>(cputrain::kernels::dropout_scale(drop.p)) : 1.0;
  reference_result r{std::vector<double>(s.probs_size()), std::vector<double>(s.tokens() * H, 0.0)};
  for (std::size_t g = 0; g < s.groups(); ++g) {
    const std::size_t b = g / s.heads, h = g % s.heads;
    for (std::size_t i = 0; i < S; ++i) {
      std::vector<double> z(S);
      double max = -INFINITY;
      for (std::size_t j = 0; j < S; ++j) {
        double dot = 0;
        for (std::size_t d = 0; d < D; ++d) dot += q[(b * S + i) * H + h * D + d] * k[(b * S + j) * H + h * D + d];
        z[j] = dot * scale + mask[b * S + j];
        max = std::max(max, z[j]);
      }
      double sum = 0;
      for (std::size_t j = 0; j < S; ++j) sum += (z[j] = std::exp(z[j] - max));
      for (std::size_t j = 0; j < S; ++j) {
        const std::size_t index = g * S * S + i * S + j;
        r.probs[index] = z[j] / sum;
        double p = r.probs[index];
        if (drop.active()) {
          p = cputrain::kernels::dropout_keeps(drop.seed, drop.stream, index, drop.p) ? p * keep_scale : 0.0;
        }
        for (std::size_t d = 0; d < D; ++d) r.context[(b * S + i) * H + h * D + d] += p * v[(b * S + j) * H + h * D + d];
      }
    }
  }
  return r;
}

struct problem {
  attention_shape s;
  std::vector<float> q, k, v, mask, w;  // w: weights of the objective L = sum(w * context)
  dropout_draw drop;
};

problem make_problem(attention_shape s, std::size_t pad_step, dropout_draw drop, unsigned seed) {
  std::mt19937 rng(seed);
  const std::size_t n = s.tokens() * s.hidden();
  problem p{s, random_values(n, rng, -2, 2), random_values(n, rng, -2, 2), random_values(n, rng), key_mask(s, pad_step),
            random_values(n, rng), drop};
  return p;
}

struct result {
  std::vector<float> probs, context, dq, dk, dv;
};

template <class TA = float, class TP = float>
result run(const problem& p) {
  const std::size_t n = p.s.tokens() * p.s.hidden();
  std::vector<TA> q(n), k(n), v(n);
  for (std::size_t i = 0; i < n; ++i) {
    q[i] = TA(p.q[i]);
    k[i] = TA(p.k[i]);
    v[i] = TA(p.v[i]);
  }
  std::vector<TP> probs(p.s.probs_size());
  result r{std::vector<float>(p.s.probs_size()), std::vector<float>(n), std::vector<float>(n), std::vector<float>(n),
           std::vector<float>(n)};
  attention_forward(p.s, q.data(), k.data(), v.data(), p.mask.data(), p.drop, probs.data(), r.context.data());
  attention_backward(p.s, q.data(), k.data(), v.data(), probs.data(), p.drop, p.w.data(), r.dq.data(), r.dk.data(),
                     r.dv.data());
  for (std::size_t i = 0; i < probs.size(); ++i) r.probs[i] = static_cast<float>(probs[i]);
  return r;
}

/// dL/dq, dL/dk, dL/dv of L = sum(w * context) by central differences of the double reference.
struct numeric_gradients {
  std::vector<double> dq, dk, dv;
};
numeric_gradients finite_differences(const problem& p) {
  std::vector<double> q(p.q.begin(), p.q.end()), k(p.k.begin(), p.k.end()), v(p.v.begin(), p.v.end());
  auto objective = [&] {
    const auto c = reference(p.s, q, k, v, p.mask, p.drop).context;
    double l = 0;
    for (std::size_t i = 0; i < c.size(); ++i) l += p.w[i] * c[i];
    return l;
  };
  auto gradient = [&](std::vector<double>& x) {
    std::vector<double> g(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double saved = x[i], h = 1e-5;
      x[i] = saved + h;
      const double up = objective();
      x[i] = saved - h;
      const double down = objective();
      x[i] = saved;
      g[i] = (up - down) / (2 * h);
    }
    return g;
  };
  return {gradient(q), gradient(k), gradient(v)};
}

/// Rows of padded keys: their K and V never reach the output.
void check_padded_keys_get_no_gradient(const problem& p, const result& r) {
  const std::size_t S = p.s.seq, H = p.s.hidden();
  std::size_t padded = 0;
  for (std::size_t b = 0; b < p.s.batch; ++b) {
    for (std::size_t j = 0; j < S; ++j) {
      if (p.mask[b * S + j] == 0.0f) continue;
      ++padded;
      for (std::size_t c = 0; c < H; ++c) {
        REQUIRE(r.dk[(b * S + j) * H + c] == 0.0f);
        REQUIRE(r.dv[(b * S + j) * H + c] == 0.0f);
      }
      for (std::size_t g = b * p.s.heads; g < (b + 1) * p.s.heads; ++g) {
        for (std::size_t i = 0; i < S; ++i) REQUIRE(r.probs[g * S * S + i * S + j] == 0.0f);
      }
    }
  }
  REQUIRE(padded > 0);
}

}  // namespace

TEST_CASE("attention_forward matches the double reference, padded keys get probability exactly 0") {
  const auto p = make_problem({3, 5, 2, 4}, 1, {}, 1);
  const auto r = run(p);
  const auto want = reference(p.s, {p.q.begin(), p.q.end()}, {p.k.begin(), p.k.end()}, {p.v.begin(), p.v.end()},
                              p.mask, p.drop);
  CHECK(relative_error(r.probs, want.probs) < 1e-6);
  CHECK(relative_error(r.context, want.context) < 1e-6);
  check_padded_keys_get_no_gradient(p, r);
  for (std::size_t row = 0; row < p.s.groups() * p.s.seq; ++row) {
    double sum = 0;
    for (std::size_t j = 0; j < p.s.seq; ++j) sum += r.probs[row * p.s.seq + j];
    CHECK(std::abs(sum - 1) < 1e-6);
  }
}

TEST_CASE("attention_backward matches central differences: dq, dk, dv with a padded key mask") {
  for (std::size_t head_dim : {std::size_t{3}, std::size_t{4}}) {
    const auto p = make_problem({2, 5, 2, head_dim}, 2, {}, 2);
    const auto r = run(p);
    const auto want = finite_differences(p);
    INFO("head_dim=" << head_dim);
    CHECK(relative_error(r.dq, want.dq) < 1e-5);
    CHECK(relative_error(r.dk, want.dk) < 1e-5);
    CHECK(relative_error(r.dv, want.dv) < 1e-5);
    check_padded_keys_get_no_gradient(p, r);
  }
}

TEST_CASE("attention with dropout: reproducible, the kept probabilities are pre-dropout, gradients match") {
  const dropout_draw drop{0.3f, 1234, 17};
  const auto p = make_problem({2, 6, 2, 3}, 2, drop, 3);
  const auto r = run(p);
  const auto again = run(p);
  CHECK(same_bits(r.context, again.context));
  CHECK(same_bits(r.dq, again.dq));
  CHECK(same_bits(r.dk, again.dk));
  CHECK(same_bits(r.dv, again.dv));

  const std::vector<double> q(p.q.begin(), p.q.end()), k(p.k.begin(), p.k.end()), v(p.v.begin(), p.v.end());
  const auto want = reference(p.s, q, k, v, p.mask, p.drop);
  CHECK(relative_error(r.probs, want.probs) < 1e-6);  // kept before dropout: rows still sum to 1
  CHECK(relative_error(r.context, want.context) < 1e-6);
  // The context is dropout(P) V with the mask a whole-tensor dropout_forward over P would draw.
  std::vector<float> dropped(r.probs.size());
  cputrain::kernels::dropout_forward(r.probs.data(), r.probs.size(), drop.p, drop.seed, drop.stream, dropped.data());
  std::size_t zeros = 0;
  for (float x : dropped) zeros += x == 0.0f;
  CHECK(zeros > r.probs.size() / 5);  // dropout did drop (padded keys add some zeros too)
  // and without dropout the output differs
  auto no_drop = p;
  no_drop.drop = {};
  CHECK(relative_error(run(no_drop).context, want.context) > 1e-2);
  // another stream draws another mask
  auto other = p;
  other.drop.stream = 18;
  CHECK_FALSE(same_bits(run(other).context, r.context));

  const auto fd = finite_differences(p);
  CHECK(relative_error(r.dq, fd.dq) < 1e-5);
  CHECK(relative_error(r.dk, fd.dk) < 1e-5);
  CHECK(relative_error(r.dv, fd.dv) < 1e-5);
  check_padded_keys_get_no_gradient(p, r);
}

TEST_CASE("attention with bf16 activations stays close to the float result") {
  const auto p = make_problem({2, 7, 3, 5}, 2, {0.1f, 5, 6}, 4);
  const auto f = run<float, float>(p);
  const auto b = run<bf16, bf16>(p);
  CHECK(relative_error(b.context, {f.context.begin(), f.context.end()}) < 1e-2);
  CHECK(relative_error(b.dq, {f.dq.begin(), f.dq.end()}) < 1.5e-2);
  CHECK(relative_error(b.dk, {f.dk.begin(), f.dk.end()}) < 1.5e-2);
  CHECK(relative_error(b.dv, {f.dv.begin(), f.dv.end()}) < 1e-2);
  check_padded_keys_get_no_gradient(p, b);
  // With q, k, v already bf16 values the bf16 path rounds exactly where PyTorch's autocast does: dropout(P) and
  // dcontext enter their products as bf16. So context = bf16(dropout(P)) V and dV = bf16(dropout(P))^T bf16(dc),
  // up to float accumulation, with P the kept (float) probabilities of the same run.
  auto rounded = p;
  for (auto* x : {&rounded.q, &rounded.k, &rounded.v}) {
    for (auto& e : *x) e = static_cast<float>(bf16(e));
  }
  const auto rb = run<bf16, float>(rounded);
  const std::size_t S = p.s.seq, D = p.s.head_dim, H = p.s.hidden();
  const float keep = cputrain::kernels::dropout_scale(p.drop.p);
  const auto dropped = [&](std::size_t index) {
    const bool kept = cputrain::kernels::dropout_keeps(p.drop.seed, p.drop.stream, index, p.drop.p);
    return static_cast<double>(static_cast<float>(bf16(kept ? rb.probs[index] * keep : 0.0f)));
  };
  std::vector<double> context(rb.context.size(), 0.0), dv(rb.dv.size(), 0.0);
  for (std::size_t g = 0; g < p.s.groups(); ++g) {
    const std::size_t b = g / p.s.heads, h = g % p.s.heads;
    for (std::size_t i = 0; i < S; ++i) {
      for (std::size_t j = 0; j < S; ++j) {
        const double pij = dropped(g * S * S + i * S + j);
        for (std::size_t d = 0; d < D; ++d) {
          const std::size_t row_i = (b * S + i) * H + h * D + d, row_j = (b * S + j) * H + h * D + d;
          context[row_i] += pij * rounded.v[row_j];
          dv[row_j] += pij * static_cast<double>(static_cast<float>(bf16(p.w[row_i])));
        }
      }
    }
  }
  CHECK(relative_error(rb.context, context) < 1e-6);
  CHECK(relative_error(rb.dv, dv) < 1e-6);
  // and the rounding is real: the float path on the same inputs differs by more than float accumulation.
  const auto rf = run<float, float>(rounded);
  CHECK(relative_error(rb.context, {rf.context.begin(), rf.context.end()}) > 1e-5);
}

TEST_CASE("attention is bit-identical in arenas of 1 and 2 threads") {
  // Several shapes and repeats: which thread runs which (sequence, head) varies from run to run.
  for (std::size_t seq : {std::size_t{32}, std::size_t{21}, std::size_t{40}}) {
    const auto p = make_problem({4, seq, 4, 16}, 5, {0.1f, 9, 2}, 5);
    result one;
    tbb::task_arena(1).execute([&] { one = run(p); });
    for (int repeat = 0; repeat < 3; ++repeat) {
      result two;
      tbb::task_arena(2).execute([&] { two = run(p); });
      INFO("seq=" << seq << " repeat=" << repeat);
      CHECK(same_bits(one.probs, two.probs));
      CHECK(same_bits(one.context, two.context));
      CHECK(same_bits(one.dq, two.dq));
      CHECK(same_bits(one.dk, two.dk));
      CHECK(same_bits(one.dv, two.dv));
    }
  }
}

TEST_CASE("attention gives the same bits on whichever thread it runs (each thread has its own scratch)") {
  // Every thread keeps its own scratch buffers, allocated on its first call. New threads place theirs 0, 16, 32 and
  // 48 bytes past a 64-byte boundary (see operator new above); the main thread's sit on the boundary.
  const auto p = make_problem({2, 24, 2, 8}, 3, {0.1f, 4, 4}, 8);
  result main_f32, main_bf16;
  tbb::task_arena(1).execute([&] {
    main_f32 = run<float, float>(p);
    main_bf16 = run<bf16, bf16>(p);
  });
  for (std::size_t t = 0; t < 8; ++t) {
    result f32, b16;
    std::thread([&] {
      new_shift = 16 * (t % 4);
      tbb::task_arena(1).execute([&] {
        f32 = run<float, float>(p);
        b16 = run<bf16, bf16>(p);
      });
      new_shift = 0;
    }).join();
    INFO("thread " << t << ", its allocations " << 16 * (t % 4) << " bytes past a 64-byte boundary");
    for (auto [a, b] : {std::pair{&main_f32, &f32}, std::pair{&main_bf16, &b16}}) {
      CHECK(same_bits(a->probs, b->probs));
      CHECK(same_bits(a->context, b->context));
      CHECK(same_bits(a->dq, b->dq));
      CHECK(same_bits(a->dk, b->dk));
      CHECK(same_bits(a->dv, b->dv));
    }
  }
}

TEST_CASE("attention over a sequence longer than one GEMM block (130 tokens) matches the reference") {
  const auto p = make_problem({1, 130, 2, 8}, 0, {0.1f, 3, 4}, 6);
  auto masked = p;
  for (std::size_t j = 120; j < 130; ++j) masked.mask[j] = attention_mask_min;
  const auto r = run(masked);
  std::vector<double> q(p.q.begin(), p.q.end()), k(p.k.begin(), p.k.end()), v(p.v.begin(), p.v.end());
  const auto want = reference(p.s, q, k, v, masked.mask, p.drop);
  CHECK(relative_error(r.context, want.context) < 1e-5);
  check_padded_keys_get_no_gradient(masked, r);
  // Backward by a directional derivative: <dq, u> + <dk, u'> + <dv, u''> against one central difference.
  std::mt19937 rng(7);
  const std::size_t n = q.size();
  const auto uq = random_values(n, rng), uk = random_values(n, rng), uv = random_values(n, rng);
  auto objective = [&](double t) {
    std::vector<double> qt(n), kt(n), vt(n);
    for (std::size_t i = 0; i < n; ++i) {
      qt[i] = q[i] + t * uq[i];
      kt[i] = k[i] + t * uk[i];
      vt[i] = v[i] + t * uv[i];
    }
    const auto c = reference(p.s, qt, kt, vt, masked.mask, p.drop).context;
    double l = 0;
    for (std::size_t i = 0; i < c.size(); ++i) l += masked.w[i] * c[i];
    return l;
  };
  const double h = 1e-5, numeric = (objective(h) - objective(-h)) / (2 * h);
  double analytic = 0, scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    analytic += static_cast<double>(r.dq[i]) * uq[i] + static_cast<double>(r.dk[i]) * uk[i] +
                static_cast<double>(r.dv[i]) * uv[i];
    scale += std::abs(r.dq[i] * uq[i]) + std::abs(r.dk[i] * uk[i]) + std::abs(r.dv[i] * uv[i]);
  }
  CHECK(std::abs(analytic - numeric) < 1e-5 * scale);
}
