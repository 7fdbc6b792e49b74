// cputrain::optim::adamw — torch.optim.AdamW over one flat parameter and one flat gradient buffer, with per-range
// weight decay as Hugging Face's Trainer groups it; the learning rate is passed to every step. Bit for bit
// torch's result on the same kind of CPU (operation order and roundings: docs/model.md), for any thread count;
// its state reloads into an optimizer that continues bit-identically. -ffast-math voids this.
#pragma once

#include "cputrain/policy/alloc/standard.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/optim/param_ranges.hpp"
#include "cputrain/policy/alloc/allocator_policy.hpp"

#if defined(__AVX512F__)
#define CPUTRAIN_ADAMW_NS adamw_avx512
#elif defined(__AVX__) && defined(__FMA__)
#define CPUTRAIN_ADAMW_NS adamw_avx_fma
#elif defined(__AVX__)
#define CPUTRAIN_ADAMW_NS adamw_avx
#elif defined(__SSE2__)
#define CPUTRAIN_ADAMW_NS adamw_sse2
#elif defined(__ARM_FEATURE_FMA)
#define CPUTRAIN_ADAMW_NS adamw_scalar_fma
#else
#define CPUTRAIN_ADAMW_NS adamw_scalar
#endif

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace cputrain::optim {

/// AdamW's hyper-parameters, with Hugging Face TrainingArguments' defaults (learning_rate, adam_beta1,
/// adam_beta2, adam_epsilon, weight_decay). Doubles, as Python holds them.
struct adamw_options {
  /// used by step() without an lr; a schedule passes its own to every step
  double lr = 5e-5;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  /// applied to the ranges marked `decay` only
  double weight_decay = 0.0;
};

/// Throws usage_error naming the first option out of its domain: lr >= 0, beta1 and beta2 in [0, 1), eps >= 0,
/// weight_decay >= 0, all finite.
CPUTRAIN_DECL void check_options(const adamw_options& o);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void check_options(const adamw_options& o) {
  const auto fail = [](const char* name, double value, const char* domain) {
    return usage_error(std::string("cputrain::optim::adamw: option ") + name + " = " + detail::number_text(value) +
                       " is out of range: it must be " + domain);
  };
  // Written so that NaN fails every test.
  if (!(o.lr >= 0 && std::isfinite(o.lr))) throw fail("lr", o.lr, ">= 0 and finite");
  if (!(o.beta1 >= 0 && o.beta1 < 1)) throw fail("beta1", o.beta1, "in [0, 1)");
  if (!(o.beta2 >= 0 && o.beta2 < 1)) throw fail("beta2", o.beta2, "in [0, 1)");
  if (!(o.eps >= 0 && std::isfinite(o.eps))) throw fail("eps", o.eps, ">= 0 and finite");
  if (!(o.weight_decay >= 0 && std::isfinite(o.weight_decay))) {
    throw fail("weight_decay", o.weight_decay, ">= 0 and finite");
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

namespace detail {

/// One step's scalars, already rounded to float.
struct adamw_coefficients {
  float beta1, one_minus_beta1, beta2, one_minus_beta2, bias_correction2_sqrt, eps, neg_step_size;
};

/// A piece of the buffer no longer than adamw::chunk_size, all with or all without decay.
struct adamw_segment {
  std::size_t offset, size;
  bool decay;
};

// Everything whose machine code depends on the instruction set lives in an inline namespace named after it, so
// that translation units built with different -m flags never share (through the linker) one copy of it.
inline namespace CPUTRAIN_ADAMW_NS {

#if defined(__FMA__) || defined(__AVX512F__) || defined(__ARM_FEATURE_FMA)
/// Whether this build fuses the moment updates as ATen's vector kernels do (see the top of the file).
inline constexpr bool adamw_fused = true;
#else
inline constexpr bool adamw_fused = false;
#endif

// One "register" of lanes and the operations the update needs. Each is one IEEE operation, rounded once; fmadd
// is fused exactly when adamw_fused says so (without FMA instructions nothing can fuse a*b+c behind our back).
struct adamw_lanes_scalar {
  using reg = float;
  static constexpr std::size_t width = 1;
  static reg load(const float* p) { return *p; }
  static void store(float* p, reg x) { *p = x; }
  static reg set1(float x) { return x; }
  static reg mul(reg a, reg b) { return a * b; }
  static reg add(reg a, reg b) { return a + b; }
  static reg div(reg a, reg b) { return a / b; }
  static reg sqrt(reg a) { return std::sqrt(a); }
  static reg fmadd(reg a, reg b, reg c) {
    if constexpr (adamw_fused) {
      return std::fma(a, b, c);
    } else {
      return a * b + c;
    }
  }
};

#if defined(__SSE2__)
struct adamw_lanes_sse2 {
  using reg = __m128;
  static constexpr std::size_t width = 4;
  static reg load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, reg x) { _mm_storeu_ps(p, x); }
  static reg set1(float x) { return _mm_set1_ps(x); }
  static reg mul(reg a, reg b) { return _mm_mul_ps(a, b); }
  static reg add(reg a, reg b) { return _mm_add_ps(a, b); }
  static reg div(reg a, reg b) { return _mm_div_ps(a, b); }
  static reg sqrt(reg a) { return _mm_sqrt_ps(a); }
#if defined(__FMA__)
  static reg fmadd(reg a, reg b, reg c) { return _mm_fmadd_ps(a, b, c); }
#else
  static reg fmadd(reg a, reg b, reg c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
#endif
};
#endif

#if defined(__AVX__)
struct adamw_lanes_avx {
  using reg = __m256;
  static constexpr std::size_t width = 8;
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, reg x) { _mm256_storeu_ps(p, x); }
  static reg set1(float x) { return _mm256_set1_ps(x); }
  static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static reg div(reg a, reg b) { return _mm256_div_ps(a, b); }
  static reg sqrt(reg a) { return _mm256_sqrt_ps(a); }
#if defined(__FMA__)
  static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
#else
  static reg fmadd(reg a, reg b, reg c) { return _mm256_add_ps(_mm256_mul_ps(a, b), c); }
#endif
};
#endif

#if defined(__AVX512F__)
struct adamw_lanes_avx512 {
  using reg = __m512;
  static constexpr std::size_t width = 16;
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, reg x) { _mm512_storeu_ps(p, x); }
  static reg set1(float x) { return _mm512_set1_ps(x); }
  static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static reg div(reg a, reg b) { return _mm512_div_ps(a, b); }
  // The zero-masked form with every lane selected is the same instruction; GCC 12's _mm512_sqrt_ps starts from
  // a self-initialised "undefined" vector that -Wmaybe-uninitialized reports once inlined (GCC bug 105593).
  static reg sqrt(reg a) { return _mm512_maskz_sqrt_ps(static_cast<__mmask16>(0xFFFF), a); }
  static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
};
#endif

#if defined(__AVX512F__)
using adamw_lanes = adamw_lanes_avx512;
#elif defined(__AVX__)
using adamw_lanes = adamw_lanes_avx;
#elif defined(__SSE2__)
using adamw_lanes = adamw_lanes_sse2;
#else
using adamw_lanes = adamw_lanes_scalar;
#endif

/// The instruction set of this translation unit's kernel, for logs and benchmarks.
#if defined(__AVX512F__)
inline constexpr std::string_view adamw_isa = "avx512";
#elif defined(__AVX__) && defined(__FMA__)
inline constexpr std::string_view adamw_isa = "avx+fma";
#elif defined(__AVX__)
inline constexpr std::string_view adamw_isa = "avx";
#elif defined(__SSE2__)
inline constexpr std::string_view adamw_isa = "sse2";
#elif defined(__ARM_FEATURE_FMA)
inline constexpr std::string_view adamw_isa = "scalar+fma";
#else
inline constexpr std::string_view adamw_isa = "scalar";
#endif

/// The moment and parameter update over whole registers of `Lanes`; returns how many elements it did.
template <class Lanes>
std::size_t adamw_update_lanes(float* p, const float* g, float* m, float* v, std::size_t n,
                               const adamw_coefficients& c) {
  using L = Lanes;
  const typename L::reg b1 = L::set1(c.beta1), a1 = L::set1(c.one_minus_beta1);
  const typename L::reg b2 = L::set1(c.beta2), a2 = L::set1(c.one_minus_beta2);
  const typename L::reg bc2 = L::set1(c.bias_correction2_sqrt), eps = L::set1(c.eps);
  const typename L::reg step = L::set1(c.neg_step_size);
  std::size_t i = 0;
  for (; i + L::width <= n; i += L::width) {
    const typename L::reg gi = L::load(g + i);
    const typename L::reg mi = L::fmadd(gi, a1, L::mul(L::load(m + i), b1));
    const typename L::reg vi = L::fmadd(L::mul(a2, gi), gi, L::mul(L::load(v + i), b2));
    L::store(m + i, mi);
    L::store(v + i, vi);
    const typename L::reg denom = L::add(L::div(L::sqrt(vi), bc2), eps);
    L::store(p + i, L::add(L::load(p + i), L::div(L::mul(step, mi), denom)));
  }
  return i;
}

inline void adamw_update(float* p, const float* g, float* m, float* v, std::size_t n, const adamw_coefficients& c) {
  const std::size_t done = adamw_update_lanes<adamw_lanes>(p, g, m, v, n, c);
  adamw_update_lanes<adamw_lanes_scalar>(p + done, g + done, m + done, v + done, n - done, c);
}

// Its own pass, as in torch: inside the update, p * factor + step would be contracted into one rounding.
inline void adamw_decay(float* p, std::size_t n, float factor) {
  for (std::size_t i = 0; i < n; ++i) p[i] = p[i] * factor;
}

}  // namespace CPUTRAIN_ADAMW_NS
}  // namespace detail

inline namespace CPUTRAIN_ADAMW_NS {

/// AdamW over a flat buffer of `size()` floats.
/// @tparam Alloc allocator policy (policy/allocator.hpp) for the two moment buffers; 64-byte aligned.
template <alloc::allocator_policy Alloc = alloc::standard>
class adamw {
 public:
  using buffer_type = std::vector<float, alloc::allocator<float, Alloc>>;

  /// Elements per task. Fixed, so the work split never depends on the machine; large enough to amortise a task,
  /// small enough that a chunk of the four streams stays in L2 between the decay and update passes.
  static constexpr std::size_t chunk_size = 16384;

  /// The kernel this translation unit runs: "avx512", "avx+fma", "avx", "sse2", "scalar+fma" or "scalar".
  static constexpr std::string_view kernel_isa = detail::adamw_isa;

  /// @param size   elements in the parameter (and gradient) buffer
  /// @param ranges must tile [0, size) (check_ranges); `decay` selects where weight_decay applies
  adamw(std::size_t size, std::vector<param_range> ranges, const adamw_options& options = {})
      : options_(options), ranges_(std::move(ranges)), exp_avg_(size, 0.0f), exp_avg_sq_(size, 0.0f) {
    check_options(options_);
    check_ranges(ranges_, size, "cputrain::optim::adamw");
    build_segments();
  }

  /// Every element decays (one range over the whole buffer).
  explicit adamw(std::size_t size, const adamw_options& options = {})
      : adamw(size, std::vector<param_range>{param_range{0, size, true}}, options) {}

  /// One optimizer step with learning rate `lr` (a double, as torch's param_groups hold it: the bias-corrected
  /// step size lr / (1 - beta1^t) is formed in double before rounding, so passing a float lr can differ by an ulp).
  void step(std::span<float> params, std::span<const float> grads, double lr) {
    check_sizes("step", "params", params.size());
    check_sizes("step", "grads", grads.size());
    if (!(lr >= 0 && std::isfinite(lr))) {
      throw usage_error("cputrain::optim::adamw::step: lr = " + detail::number_text(lr) + " must be >= 0 and finite");
    }
    const double t = static_cast<double>(step_count_ + 1);
    const double bias_correction1 = 1.0 - std::pow(options_.beta1, t);
    const double bias_correction2 = 1.0 - std::pow(options_.beta2, t);
    // Python rounds lr * weight_decay before subtracting it from 1; a compiler allowed to contract would fuse the
    // two into one FMA, another rounding. The volatile read keeps them apart.
    volatile double lr_wd = lr * options_.weight_decay;
    const float decay_factor = static_cast<float>(1.0 - lr_wd);
    const detail::adamw_coefficients c{.beta1 = static_cast<float>(options_.beta1),
                                       .one_minus_beta1 = static_cast<float>(1.0 - options_.beta1),
                                       .beta2 = static_cast<float>(options_.beta2),
                                       .one_minus_beta2 = static_cast<float>(1.0 - options_.beta2),
                                       .bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2)),
                                       .eps = static_cast<float>(options_.eps),
                                       .neg_step_size = static_cast<float>(-(lr / bias_correction1))};

    float* const p = params.data();
    const float* const g = grads.data();
    float* const m = exp_avg_.data();
    float* const v = exp_avg_sq_.data();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, segments_.size()),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t s = r.begin(); s != r.end(); ++s) {
                          const detail::adamw_segment seg = segments_[s];
                          if (seg.decay && decay_factor != 1.0f) {
                            detail::adamw_decay(p + seg.offset, seg.size, decay_factor);
                          }
                          detail::adamw_update(p + seg.offset, g + seg.offset, m + seg.offset, v + seg.offset,
                                               seg.size, c);
                        }
                      });
    ++step_count_;
  }

  /// A step at options().lr, for a constant learning rate.
  void step(std::span<float> params, std::span<const float> grads) { step(params, grads, options_.lr); }

  /// Steps taken (torch's state["step"]); the next step is step_count() + 1.
  std::uint64_t step_count() const noexcept { return step_count_; }
  /// First moment, torch's state["exp_avg"], in buffer order.
  std::span<const float> exp_avg() const noexcept { return exp_avg_; }
  /// Second moment, torch's state["exp_avg_sq"], in buffer order.
  std::span<const float> exp_avg_sq() const noexcept { return exp_avg_sq_; }

  /// Restores a checkpoint written from step_count(), exp_avg() and exp_avg_sq(); the next step continues as the
  /// saved optimizer would have.
  void load_state(std::uint64_t step, std::span<const float> exp_avg, std::span<const float> exp_avg_sq) {
    check_sizes("load_state", "exp_avg", exp_avg.size());
    check_sizes("load_state", "exp_avg_sq", exp_avg_sq.size());
    std::copy(exp_avg.begin(), exp_avg.end(), exp_avg_.begin());
    std::copy(exp_avg_sq.begin(), exp_avg_sq.end(), exp_avg_sq_.begin());
    step_count_ = step;
  }

  std::size_t size() const noexcept { return exp_avg_.size(); }
  const adamw_options& options() const noexcept { return options_; }
  std::span<const param_range> ranges() const noexcept { return ranges_; }

 private:
  void check_sizes(const char* function, const char* what, std::size_t got) const {
    if (got != size()) {
      throw usage_error(std::string("cputrain::optim::adamw::") + function + ": " + what + " has " +
                        std::to_string(got) + " elements, but the optimizer was built for " +
                        std::to_string(size()));
    }
  }

  // Ranges in buffer order, neighbours with the same decay merged, cut at chunk_size.
  void build_segments() {
    std::vector<param_range> sorted;
    for (const param_range& r : ranges_) {
      if (r.size != 0) sorted.push_back(r);
    }
    std::sort(sorted.begin(), sorted.end(),
              [](const param_range& a, const param_range& b) { return a.offset < b.offset; });
    std::vector<param_range> merged;
    for (const param_range& r : sorted) {
      if (!merged.empty() && merged.back().decay == r.decay) {
        merged.back().size += r.size;
      } else {
        merged.push_back(r);
      }
    }
    for (const param_range& r : merged) {
      for (std::size_t done = 0; done < r.size; done += chunk_size) {
        segments_.push_back({r.offset + done, std::min(chunk_size, r.size - done), r.decay});
      }
    }
  }

  adamw_options options_;
  std::vector<param_range> ranges_;
  std::vector<detail::adamw_segment> segments_;
  buffer_type exp_avg_;
  buffer_type exp_avg_sq_;
  std::uint64_t step_count_ = 0;
};

}  // namespace CPUTRAIN_ADAMW_NS
}  // namespace cputrain::optim
