// cputrain::kernels::onednn, the oneDNN side of kernels/onednn_matmul.hpp: the CPU engine, the primitives cached
// per shape and what runs them on the calling thread. Included by onednn_matmul.hpp where its functions are
// defined (header-only, or the file that compiles them); a program that uses oneDNN's own API beside cputrain's
// (a benchmark of oneDNN's whole-matrix product) includes it for the shared engine.
#pragma once

#include "cputrain/kernels/onednn_matmul.hpp"

#if defined(CPUTRAIN_HAVE_ONEDNN)

#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/policy/alloc/standard.hpp"

#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
// Declared here rather than through <omp.h>, which would ask every consumer for -fopenmp; libdnnl brings the
// OpenMP runtime that defines it.
extern "C" void omp_set_num_threads(int) __attribute__((weak));
#elif DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_TBB
#include <oneapi/tbb/task_arena.h>
#endif

namespace cputrain::kernels::onednn {

/// A created primitive with the descriptors its arguments are wrapped in.
struct prepared_product {
  dnnl::matmul primitive;
  dnnl::memory::desc a, b, c, scratchpad;
  std::string implementation;  // oneDNN's name for the kernel, e.g. "brg:avx512_core_amx_bf16"
};

/// The process's CPU engine. Never destroyed: threads' streams may outlive any static destructor order.
inline const dnnl::engine& cpu_engine() {
  static const dnnl::engine* const engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

namespace detail {

/// Holds the asynchronous signals of the calling thread while it lives. oneDNN's generated GEMM kernels point the
/// stack pointer into the heap while they run (oneDNN issue 4845, fixed upstream in 2026, present in Debian's 2.6):
/// a signal handled on that thread then writes its frame into the heap and corrupts it. Measured here: run_qa's
/// SIGTERM checkpoint corrupted the heap in 3 of 6 runs; with the signals held until the product ends, none. A
/// held signal is delivered as soon as the product returns (microseconds). Signals the thread raises itself
/// (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP) stay unblocked.
class signals_held {
 public:
  signals_held() noexcept {
    sigset_t all;
    sigfillset(&all);
    for (const int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP}) sigdelset(&all, s);
    pthread_sigmask(SIG_BLOCK, &all, &previous_);
  }
  ~signals_held() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  signals_held(const signals_held&) = delete;
  signals_held& operator=(const signals_held&) = delete;

 private:
  sigset_t previous_;
};

/// Runs f with oneDNN's threading runtime held to the calling thread.
template <class F>
void on_this_thread_only(F&& f) {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  thread_local const bool capped = [] {
    if (omp_set_num_threads != nullptr) omp_set_num_threads(1);
    return true;
  }();
  (void)capped;
  f();
#elif DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_TBB
  // A oneDNN built on oneTBB would split the product over the caller's arena with a split that depends on its
  // size; a one-thread arena keeps the result independent of the thread count.
  thread_local tbb::task_arena single(1, 1);
  single.execute(f);
#else
  f();
#endif
}

inline dnnl::memory::desc matrix_desc(std::size_t rows, std::size_t cols, std::size_t ld, bool transposed,
                                      dnnl::memory::data_type type) {
  const auto r = static_cast<dnnl::memory::dim>(rows), c = static_cast<dnnl::memory::dim>(cols);
  const auto l = static_cast<dnnl::memory::dim>(ld);
  // op(X) is rows x cols; stored transposed means element (i, j) sits at j * ld + i.
  return dnnl::memory::desc({r, c}, type, transposed ? dnnl::memory::dims{1, l} : dnnl::memory::dims{l, 1});
}

CPUTRAIN_DECL std::unique_ptr<prepared_product> create(const product_key& key);

/// Shapes kept at most; a program with endlessly changing shapes gets fresh primitives past it (oneDNN's own
/// primitive cache still spares it the kernel generation).
inline constexpr std::size_t max_cached_products = 4096;

/// The primitive for `key`, created on first use. Each thread remembers what it has looked up, so the shared
/// table's lock is taken once per thread and shape.
CPUTRAIN_DECL const prepared_product& prepare(const product_key& key);

inline std::vector<unsigned char, alloc::allocator<unsigned char, alloc::standard>>& scratchpad(std::size_t bytes) {
  thread_local std::vector<unsigned char, alloc::allocator<unsigned char, alloc::standard>> buffer;
  if (buffer.size() < bytes || buffer.empty()) buffer.resize(std::max<std::size_t>(bytes, 64));
  return buffer;
}

}  // namespace detail

#if CPUTRAIN_DEFINE_FUNCTIONS

CPUTRAIN_DECL bool native_bf16() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  return (isa & bf16) == bf16;
}

CPUTRAIN_DECL bool has_avx512() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  return (isa & avx512) == avx512;
}

CPUTRAIN_DECL std::string effective_isa_name() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

namespace detail {

CPUTRAIN_DECL std::unique_ptr<prepared_product> create(const product_key& key) {
  using dt = dnnl::memory::data_type;
  const dt in = key.bf16 ? dt::bf16 : dt::f32;
  auto p = std::make_unique<prepared_product>();
  p->a = matrix_desc(key.m, key.k, key.lda, key.trans_a, in);
  p->b = matrix_desc(key.k, key.n, key.ldb, key.trans_b, in);
  p->c = matrix_desc(key.m, key.n, key.ldc, false, dt::f32);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // C = beta * C + alpha * (A B): alpha as a linear post-op on the product (output scales left the API in 3.0),
  // then the sum post-op adds beta times what C held.
  dnnl::post_ops ops;
#if DNNL_VERSION_MAJOR >= 3
  if (key.alpha != 1.0f) ops.append_eltwise(dnnl::algorithm::eltwise_linear, key.alpha, 0.0f);
#else
  if (key.alpha != 1.0f) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, key.alpha, 0.0f);
#endif
  if (key.beta != 0.0f) ops.append_sum(key.beta);
  attr.set_post_ops(ops);
  try {
#if DNNL_VERSION_MAJOR >= 3
    const dnnl::matmul::primitive_desc pd(cpu_engine(), p->a, p->b, p->c, attr);
#else
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p->a, p->b, p->c), attr, cpu_engine());
#endif
    p->scratchpad = pd.scratchpad_desc();
    p->implementation = pd.impl_info_str();
    p->primitive = dnnl::matmul(pd);
  } catch (const dnnl::error& e) {
    throw error(std::string("oneDNN has no ") + (key.bf16 ? "bf16" : "fp32") + " matrix product for this CPU (" +
                effective_isa_name() + "; " + e.what() + "): unset CPUTRAIN_GEMM_BACKEND=onednn to use Eigen");
  }
  return p;
}

CPUTRAIN_DECL const prepared_product& prepare(const product_key& key) {
  thread_local std::unordered_map<product_key, const prepared_product*, product_key_hash> seen;
  if (const auto it = seen.find(key); it != seen.end()) return *it->second;
  static std::mutex mutex;
  static std::unordered_map<product_key, std::unique_ptr<prepared_product>, product_key_hash> table;
  std::unique_lock lock(mutex);
  if (const auto it = table.find(key); it != table.end()) {
    seen.emplace(key, it->second.get());
    return *it->second;
  }
  if (table.size() >= max_cached_products) {
    lock.unlock();
    thread_local std::unique_ptr<prepared_product> uncached;
    uncached = create(key);
    return *uncached;
  }
  const prepared_product& made = *(table[key] = create(key));
  seen.emplace(key, &made);
  return made;
}

}  // namespace detail

CPUTRAIN_DECL void matmul(const product_key& key, const void* a, const void* b, float* c) {
  detail::on_this_thread_only([&] {
    const prepared_product& p = detail::prepare(key);
    thread_local dnnl::stream stream(cpu_engine());
    auto& pad = detail::scratchpad(p.scratchpad.get_size());
    const dnnl::engine& engine = cpu_engine();
    const detail::signals_held held;
    p.primitive.execute(stream, {{DNNL_ARG_SRC, dnnl::memory(p.a, engine, const_cast<void*>(a))},
                                 {DNNL_ARG_WEIGHTS, dnnl::memory(p.b, engine, const_cast<void*>(b))},
                                 {DNNL_ARG_DST, dnnl::memory(p.c, engine, c)},
                                 {DNNL_ARG_SCRATCHPAD, dnnl::memory(p.scratchpad, engine, pad.data())}});
    stream.wait();
  });
}

CPUTRAIN_DECL std::string implementation(const product_key& key) {
  std::string name;
  detail::on_this_thread_only([&] { name = detail::prepare(key).implementation; });
  return name;
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::kernels::onednn

#endif  // CPUTRAIN_HAVE_ONEDNN
