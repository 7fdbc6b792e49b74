// cputrain::kernels::gemm_backend — which kernels run kernels::gemm's products (oneDNN or Eigen, per precision),
// chosen once per process from what the CPU offers; CPUTRAIN_GEMM_BACKEND=auto|eigen|onednn or
// set_gemm_backend() forces one. Two backends differ in rounding: a run and its resume should use the same one.
#pragma once

#include "cputrain/kernels/onednn_matmul.hpp"

#include <atomic>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cputrain/core/error.hpp"

namespace cputrain::kernels {

/// What a user may ask for.
enum class gemm_backend_choice { automatic, eigen, onednn };

/// Where one kind of product runs.
enum class gemm_backend { eigen, onednn };

/// Parses "auto", "eigen" or "onednn"; throws usage_error naming `source` otherwise.
[[nodiscard]] inline gemm_backend_choice parse_gemm_backend(std::string_view text, std::string_view source) {
  if (text == "auto" || text.empty()) return gemm_backend_choice::automatic;
  if (text == "eigen") return gemm_backend_choice::eigen;
  if (text == "onednn") return gemm_backend_choice::onednn;
  throw usage_error(std::string(source) + ": unknown GEMM backend '" + std::string(text) +
                    "' (expected auto, eigen or onednn)");
}

/// Whether this build can call oneDNN at all.
[[nodiscard]] constexpr bool onednn_built_in() noexcept {
#if defined(CPUTRAIN_HAVE_ONEDNN)
  return true;
#else
  return false;
#endif
}

namespace detail {

inline gemm_backend_choice choice_from_environment() {
  const char* text = std::getenv("CPUTRAIN_GEMM_BACKEND");
  return text == nullptr ? gemm_backend_choice::automatic
                         : parse_gemm_backend(text, "environment variable CPUTRAIN_GEMM_BACKEND");
}

inline std::atomic<gemm_backend_choice>& backend_choice() {
  static std::atomic<gemm_backend_choice> choice{choice_from_environment()};
  return choice;
}

}  // namespace detail

/// Overrides CPUTRAIN_GEMM_BACKEND for the rest of the process (for tests and side-by-side comparisons). Call
/// it between steps, not while products run. Throws usage_error for `onednn` in a build without it.
inline void set_gemm_backend(gemm_backend_choice choice) {
  if (choice == gemm_backend_choice::onednn && !onednn_built_in()) {
    throw usage_error("GEMM backend onednn: this program was built without oneDNN (CPUTRAIN_WITH_ONEDNN)");
  }
  detail::backend_choice().store(choice, std::memory_order_relaxed);
}

[[nodiscard]] inline gemm_backend_choice current_gemm_backend_choice() {
  return detail::backend_choice().load(std::memory_order_relaxed);
}

namespace detail {
/// The user's choice, or under `auto` oneDNN exactly where `onednn_wins` (decided once per process).
template <class Rule>
gemm_backend backend_by(const Rule& onednn_wins) {
#if defined(CPUTRAIN_HAVE_ONEDNN)
  switch (current_gemm_backend_choice()) {
    case gemm_backend_choice::eigen: return gemm_backend::eigen;
    case gemm_backend_choice::onednn: return gemm_backend::onednn;
    case gemm_backend_choice::automatic: return onednn_wins() ? gemm_backend::onednn : gemm_backend::eigen;
  }
#endif
  (void)onednn_wins;
  return gemm_backend::eigen;
}
}  // namespace detail

/// Where fp32 x fp32 products run.
[[nodiscard]] inline gemm_backend fp32_gemm_backend() {
  return detail::backend_by([] {
#if defined(CPUTRAIN_HAVE_ONEDNN)
    static const bool avx512 = onednn::has_avx512();
    return avx512;
#else
    return false;
#endif
  });
}

/// Where bf16 x bf16 products run.
[[nodiscard]] inline gemm_backend bf16_gemm_backend() {
  return detail::backend_by([] {
#if defined(CPUTRAIN_HAVE_ONEDNN)
    static const bool native = onednn::native_bf16();
    return native;
#else
    return false;
#endif
  });
}

/// A line for logs and `cputrain-machine`: where products of `bf16` (or fp32) operands run on this CPU, e.g.
/// "oneDNN (CPU ISA avx512_core_amx, native bf16)" or "Eigen, bf16 widened to fp32 (no native bf16 on this CPU)".
[[nodiscard]] inline std::string gemm_path_description(bool bf16) {
  const gemm_backend backend = bf16 ? bf16_gemm_backend() : fp32_gemm_backend();
  if (backend == gemm_backend::eigen) {
    const std::string what = bf16 ? "Eigen, bf16 widened to fp32" : "Eigen";
    if (!onednn_built_in()) return what + " (built without oneDNN)";
    if (current_gemm_backend_choice() == gemm_backend_choice::eigen) return what + " (forced)";
    return what + (bf16 ? " (no native bf16 on this CPU)" : " (faster than oneDNN's fp32 without AVX-512)");
  }
#if defined(CPUTRAIN_HAVE_ONEDNN)
  std::string line = "oneDNN (CPU ISA " + onednn::effective_isa_name();
  if (bf16) line += onednn::native_bf16() ? ", native bf16" : ", bf16 emulated: slow";
  return line + ")";
#else
  return "Eigen";
#endif
}

}  // namespace cputrain::kernels
