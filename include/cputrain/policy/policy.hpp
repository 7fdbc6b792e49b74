// cputrain::policy<Precision, Parallel, Alloc> — the one type that tells a model, a trainer and their buffers
// how to run: precision, parallelism and where memory comes from, e.g.
//   cputrain::policy<cputrain::precision::bf16_mixed, cputrain::parallel::single, cputrain::alloc::numa_local>
// A wrong or misplaced type stops the build saying which parameter is wrong and what belongs there.
#pragma once

#include "cputrain/policy/allocator.hpp"

#include <vector>

#include "cputrain/policy/parallel.hpp"
#include "cputrain/policy/precision.hpp"

namespace cputrain {

template <class Precision = precision::fp32, class Parallel = parallel::single, class Alloc = alloc::standard>
struct policy {
  static_assert(!parallel::parallel_policy<Precision> && !alloc::allocator_policy<Precision>,
                "cputrain::policy<Precision, Parallel, Alloc>: the first parameter is a parallel or allocator "
                "policy; the order is precision, then parallel, then allocator");
  static_assert(precision::precision_policy<Precision>,
                "cputrain::policy<Precision, Parallel, Alloc>: Precision must be a precision policy such as "
                "cputrain::precision::fp32 or cputrain::precision::bf16_mixed");

  static_assert(!precision::precision_policy<Parallel> && !alloc::allocator_policy<Parallel>,
                "cputrain::policy<Precision, Parallel, Alloc>: the second parameter is a precision or allocator "
                "policy; the order is precision, then parallel, then allocator");
  static_assert(parallel::parallel_policy<Parallel>,
                "cputrain::policy<Precision, Parallel, Alloc>: Parallel must be a parallel policy such as "
                "cputrain::parallel::single");

  static_assert(!precision::precision_policy<Alloc> && !parallel::parallel_policy<Alloc>,
                "cputrain::policy<Precision, Parallel, Alloc>: the third parameter is a precision or parallel "
                "policy; the order is precision, then parallel, then allocator");
  static_assert(alloc::allocator_policy<Alloc>,
                "cputrain::policy<Precision, Parallel, Alloc>: Alloc must be an allocator policy such as "
                "cputrain::alloc::standard, cputrain::alloc::tbb_scalable or cputrain::alloc::numa_local");

  using precision_policy = Precision;
  using parallel_policy = Parallel;
  using allocator_policy = Alloc;

  /// A std-compatible allocator placing memory by this policy's allocator.
  template <class T>
  using allocator = alloc::allocator<T, Alloc>;
  /// The buffer type for flat parameter, gradient and workspace buffers.
  template <class T>
  using buffer = std::vector<T, allocator<T>>;
};

}  // namespace cputrain
