// cputrain/policy.hpp — the compile-time policies: precision (fp32, bf16_mixed), allocator (standard, tbb_scalable,
// numa_local), parallel (the concepts, single) and cputrain::policy<> that combines them.
#pragma once

#include "cputrain/policy/alloc/allocator_policy.hpp"      // IWYU pragma: export
#include "cputrain/policy/alloc/numa_local.hpp"            // IWYU pragma: export
#include "cputrain/policy/alloc/standard.hpp"              // IWYU pragma: export
#include "cputrain/policy/alloc/tbb_scalable.hpp"          // IWYU pragma: export
#include "cputrain/policy/allocator.hpp"                   // IWYU pragma: export
#include "cputrain/policy/parallel.hpp"                    // IWYU pragma: export
#include "cputrain/policy/parallel/parallel_policy.hpp"    // IWYU pragma: export
#include "cputrain/policy/parallel/single.hpp"             // IWYU pragma: export
#include "cputrain/policy/policy.hpp"                      // IWYU pragma: export
#include "cputrain/policy/precision.hpp"                   // IWYU pragma: export
#include "cputrain/policy/precision/bf16_mixed.hpp"        // IWYU pragma: export
#include "cputrain/policy/precision/fp32.hpp"              // IWYU pragma: export
#include "cputrain/policy/precision/precision_policy.hpp"  // IWYU pragma: export
