// cputrain::kernels::gemm — C = alpha * op(A) * op(B) + beta * C on row-major matrices, split into fixed blocks
// of C that run as oneTBB tasks in the caller's arena, each on the kernels gemm_backend.hpp chooses (oneDNN or
// Eigen). Every element is computed by one task over all of K, so the result is the same for any thread count.
#pragma once

#include "cputrain/kernels/gemm_backend.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <oneapi/tbb/blocked_range2d.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>

#include "cputrain/core/bf16.hpp"
#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/kernels/onednn_matmul.hpp"
#include "cputrain/policy/alloc/standard.hpp"

#if defined(CPUTRAIN_USE_BLAS)
// OpenBLAS starts its own thread pool unless told otherwise; a weak reference keeps other BLASes linkable.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
#endif

namespace cputrain::kernels {

enum class transpose : bool { no = false, yes = true };

/// Where a product runs: split over the current arena's threads, or all on the calling thread (for callers
/// that already run many small products in parallel, e.g. one per attention head).
enum class gemm_threads : bool { arena = false, calling_thread = true };

/// Block shape of C per task: big enough that Eigen's packing is amortised, small enough for two tasks per
/// core on BERT's shapes (e.g. 1536 x 768 -> 48 tasks).
inline constexpr std::size_t gemm_block_rows = 128;
inline constexpr std::size_t gemm_block_cols = 192;

/// oneDNN's products take blocks four times that size wherever that still leaves at least
/// gemm_min_large_blocks tasks: each call then packs its panels for twice as many rows and columns, and at
/// 4,096 tokens (GLUE's 32 x 128) the products run about 10-20% faster (docs/benchmarks.md). The choice depends
/// on the shape only, never on the thread count, so results stay the same for any thread count.
inline constexpr std::size_t gemm_large_block_rows = 256;
inline constexpr std::size_t gemm_large_block_cols = 384;
inline constexpr std::size_t gemm_min_large_blocks = 16;

/// The block shape a product of C[m x n] is split into.
struct gemm_blocking {
  std::size_t rows = gemm_block_rows, cols = gemm_block_cols;

  [[nodiscard]] static gemm_blocking for_product(std::size_t m, std::size_t n, bool on_onednn) {
    const std::size_t large = ((m + gemm_large_block_rows - 1) / gemm_large_block_rows) *
                              ((n + gemm_large_block_cols - 1) / gemm_large_block_cols);
    if (on_onednn && large >= gemm_min_large_blocks) return {gemm_large_block_rows, gemm_large_block_cols};
    return {};
  }
};

namespace detail {

template <class T>
concept gemm_scalar = std::same_as<T, float> || std::same_as<T, bf16>;

using row_major = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using const_map = Eigen::Map<const row_major, Eigen::Unaligned, Eigen::OuterStride<>>;
using mut_map = Eigen::Map<row_major, Eigen::Unaligned, Eigen::OuterStride<>>;

/// Scratch for widened bf16 panels, one per thread, grown on demand and kept: no allocation per step. Aligned
/// alike on every thread, so no result can depend on which thread packed a panel.
inline std::vector<float, alloc::allocator<float, alloc::standard>>& scratch(int which) {
  thread_local std::vector<float, alloc::allocator<float, alloc::standard>> buffers[2];
  return buffers[which];
}

inline void ensure_single_threaded_blas() {
#if defined(CPUTRAIN_USE_BLAS)
  static const bool done = [] {
    if (openblas_set_num_threads != nullptr) openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
#endif
}

/// A float view of rows [r0, r0+rows) x cols [c0, c0+cols) of a stored row-major matrix (leading dim ld).
/// float storage is mapped in place; bf16 storage is widened into scratch(slot).
template <gemm_scalar T>
const_map panel(const T* data, std::size_t ld, std::size_t r0, std::size_t rows, std::size_t c0,
                std::size_t cols, int slot) {
  const T* first = data + r0 * ld + c0;
  if constexpr (std::same_as<T, float>) {
    return const_map(first, static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols),
                     Eigen::OuterStride<>(static_cast<Eigen::Index>(ld)));
  } else {
    auto& buffer = scratch(slot);
    if (buffer.size() < rows * cols) buffer.resize(rows * cols);
    for (std::size_t r = 0; r < rows; ++r) {
      cputrain::detail::to_float_kernel(first + r * ld, buffer.data() + r * cols, cols);
    }
    return const_map(buffer.data(), static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols),
                     Eigen::OuterStride<>(static_cast<Eigen::Index>(cols)));
  }
}

/// Whether products of TA x TB operands go to oneDNN (see gemm_backend.hpp); mixed operands never do.
template <gemm_scalar TA, gemm_scalar TB>
bool runs_on_onednn() {
  if constexpr (!std::same_as<TA, TB>) {
    return false;
  } else if constexpr (std::same_as<TA, bf16>) {
    return bf16_gemm_backend() == gemm_backend::onednn;
  } else {
    return fp32_gemm_backend() == gemm_backend::onednn;
  }
}

inline void check_gemm_arguments(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k,
                                 const void* a, std::size_t lda, const void* b, std::size_t ldb, const float* c,
                                 std::size_t ldc) {
  const std::size_t a_cols = trans_a ? m : k;  // columns of A as stored
  const std::size_t b_cols = trans_b ? k : n;
  auto fail = [&](const std::string& what) {
    throw usage_error("cputrain::kernels::gemm(m=" + std::to_string(m) + ", n=" + std::to_string(n) +
                      ", k=" + std::to_string(k) + "): " + what);
  };
  if (lda < a_cols) fail("lda " + std::to_string(lda) + " is smaller than A's " + std::to_string(a_cols) + " columns");
  if (ldb < b_cols) fail("ldb " + std::to_string(ldb) + " is smaller than B's " + std::to_string(b_cols) + " columns");
  if (ldc < n) fail("ldc " + std::to_string(ldc) + " is smaller than C's " + std::to_string(n) + " columns");
  if (m > 0 && n > 0 && c == nullptr) fail("C is null");
  if (m > 0 && n > 0 && k > 0 && (a == nullptr || b == nullptr)) fail("A or B is null");
}

}  // namespace detail

/// C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C, all row-major.
/// op(A) = A (stored m x k, leading dimension lda >= k) or A^T (stored k x m, lda >= m); likewise B.
/// beta == 0 never reads C (it may hold garbage or NaN). Arguments that cannot describe the matrices
/// (leading dimensions too small, null data) throw usage_error.
template <detail::gemm_scalar TA, detail::gemm_scalar TB>
void gemm(transpose trans_a, transpose trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
          const TA* a, std::size_t lda, const TB* b, std::size_t ldb, float beta, float* c, std::size_t ldc,
          gemm_threads threads = gemm_threads::arena) {
  const bool ta = trans_a == transpose::yes;
  const bool tb = trans_b == transpose::yes;
  detail::check_gemm_arguments(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  if (m == 0 || n == 0) return;
  detail::ensure_single_threaded_blas();

  const bool on_onednn = k > 0 && alpha != 0.0f && detail::runs_on_onednn<TA, TB>();
  const auto block = [&](std::size_t r0, std::size_t rows, std::size_t c0, std::size_t cols) {
#if defined(CPUTRAIN_HAVE_ONEDNN)
    if (on_onednn) {
      // op(A) rows [r0, r0+rows), op(B) columns [c0, c0+cols): the same storage with the offsets of the block.
      const TA* a_block = ta ? a + r0 : a + r0 * lda;
      const TB* b_block = tb ? b + c0 * ldb : b + c0;
      const onednn::product_key key{rows, cols, k, lda, ldb, ldc, ta, tb, std::same_as<TA, bf16>, alpha, beta};
      onednn::matmul(key, a_block, b_block, c + r0 * ldc + c0);
      return;
    }
#else
    (void)on_onednn;
#endif
    detail::mut_map c_block(c + r0 * ldc + c0, static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols),
                            Eigen::OuterStride<>(static_cast<Eigen::Index>(ldc)));
    if (k == 0 || alpha == 0.0f) {
      if (beta == 0.0f) {
        c_block.setZero();
      } else {
        c_block *= beta;
      }
      return;
    }
    // op(A) rows [r0, r0+rows): A's rows when not transposed, A's columns (rows of A^T) when transposed.
    const auto a_panel = ta ? detail::panel(a, lda, 0, k, r0, rows, 0) : detail::panel(a, lda, r0, rows, 0, k, 0);
    const auto b_panel = tb ? detail::panel(b, ldb, c0, cols, 0, k, 1) : detail::panel(b, ldb, 0, k, c0, cols, 1);
    if (beta == 0.0f) {
      if (ta && tb) {
        c_block.noalias() = alpha * (a_panel.transpose() * b_panel.transpose());
      } else if (ta) {
        c_block.noalias() = alpha * (a_panel.transpose() * b_panel);
      } else if (tb) {
        c_block.noalias() = alpha * (a_panel * b_panel.transpose());
      } else {
        c_block.noalias() = alpha * (a_panel * b_panel);
      }
    } else {
      if (beta != 1.0f) c_block *= beta;
      if (ta && tb) {
        c_block.noalias() += alpha * (a_panel.transpose() * b_panel.transpose());
      } else if (ta) {
        c_block.noalias() += alpha * (a_panel.transpose() * b_panel);
      } else if (tb) {
        c_block.noalias() += alpha * (a_panel * b_panel.transpose());
      } else {
        c_block.noalias() += alpha * (a_panel * b_panel);
      }
    }
  };

  const auto blocking = gemm_blocking::for_product(m, n, on_onednn);
  const std::size_t row_blocks = (m + blocking.rows - 1) / blocking.rows;
  const std::size_t col_blocks = (n + blocking.cols - 1) / blocking.cols;
  if (row_blocks * col_blocks == 1) {
    block(0, m, 0, n);
    return;
  }
  if (threads == gemm_threads::calling_thread) {
    // The same blocks in the same order as the parallel path, so both give the same bits.
    for (std::size_t bi = 0; bi < row_blocks; ++bi) {
      for (std::size_t bj = 0; bj < col_blocks; ++bj) {
        const std::size_t r0 = bi * blocking.rows;
        const std::size_t c0 = bj * blocking.cols;
        block(r0, std::min(blocking.rows, m - r0), c0, std::min(blocking.cols, n - c0));
      }
    }
    return;
  }
  // simple_partitioner with grain 1 over block indices: the block shapes never depend on the thread count.
  tbb::parallel_for(
      tbb::blocked_range2d<std::size_t>(0, row_blocks, 1, 0, col_blocks, 1),
      [&](const tbb::blocked_range2d<std::size_t>& r) {
        for (std::size_t bi = r.rows().begin(); bi != r.rows().end(); ++bi) {
          for (std::size_t bj = r.cols().begin(); bj != r.cols().end(); ++bj) {
            const std::size_t r0 = bi * blocking.rows;
            const std::size_t c0 = bj * blocking.cols;
            block(r0, std::min(blocking.rows, m - r0), c0, std::min(blocking.cols, n - c0));
          }
        }
      },
      tbb::simple_partitioner());
}

}  // namespace cputrain::kernels
