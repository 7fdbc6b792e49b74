// cputrain::kernels::onednn — one row-major matrix product on oneDNN's kernels, executed on the calling thread:
// C = alpha * op(A) * op(B) + beta * C, A and B both float or both bf16, C float. kernels::gemm calls it per
// block from its own oneTBB tasks; OpenMP is held to one thread, so nothing here starts a thread, and primitives
// are cached per shape. oneDNN's own header is not part of this one: a program compiled over cputrain::instances
// never parses it (kernels/detail/onednn_primitives.hpp has the oneDNN side).
#pragma once

#if defined(CPUTRAIN_HAVE_ONEDNN)

#include <cstddef>
#include <functional>
#include <string>

#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::kernels::onednn {

/// What a primitive is specialised for: every argument of a product but the data.
struct product_key {
  std::size_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool trans_a = false, trans_b = false, bf16 = false;
  float alpha = 1.0f, beta = 0.0f;
  bool operator==(const product_key&) const = default;
};

struct product_key_hash {
  std::size_t operator()(const product_key& key) const noexcept {
    std::size_t h = 0;
    const auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    for (const std::size_t v : {key.m, key.n, key.k, key.lda, key.ldb, key.ldc}) mix(v);
    mix((key.trans_a ? 1u : 0u) | (key.trans_b ? 2u : 0u) | (key.bf16 ? 4u : 0u));
    mix(std::hash<float>{}(key.alpha));
    mix(std::hash<float>{}(key.beta));
    return h;
  }
};

/// Whether oneDNN runs bf16 x bf16 products natively on this CPU (AVX512-BF16 dot products or AMX tiles), as
/// capped by DNNL_MAX_CPU_ISA. Elsewhere its bf16 kernels are emulated or missing.
[[nodiscard]] CPUTRAIN_DECL bool native_bf16();

/// Whether oneDNN runs AVX-512 kernels here (as capped by DNNL_MAX_CPU_ISA).
[[nodiscard]] CPUTRAIN_DECL bool has_avx512();

/// oneDNN's name for the instruction set it dispatches to, e.g. "avx512_core_bf16".
[[nodiscard]] CPUTRAIN_DECL std::string effective_isa_name();

/// Runs the product `key` describes on the calling thread. a, b: float when !key.bf16, bf16 (as 16-bit
/// storage) when key.bf16; c: float. m, n and k must be positive.
CPUTRAIN_DECL void matmul(const product_key& key, const void* a, const void* b, float* c);

/// oneDNN's name for the kernel that runs `key` (creating its primitive if needed).
[[nodiscard]] CPUTRAIN_DECL std::string implementation(const product_key& key);

}  // namespace cputrain::kernels::onednn

#if CPUTRAIN_DEFINE_FUNCTIONS
#include "cputrain/kernels/detail/onednn_primitives.hpp"  // IWYU pragma: export
#endif

#endif  // CPUTRAIN_HAVE_ONEDNN
