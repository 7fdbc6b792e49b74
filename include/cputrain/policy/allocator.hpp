// The allocator policies: cputrain::alloc::standard (64-byte aligned operator new), alloc::tbb_scalable
// (oneTBB's scalable allocator) and alloc::numa_local (memory on the NUMA node of the arena that allocates or
// first touches it), the concept allocator_policy a new one must satisfy, and the std-compatible
// alloc::allocator<T, Policy> adapter.
#pragma once

#include "cputrain/policy/alloc/numa_local.hpp"        // IWYU pragma: export
#include "cputrain/policy/alloc/allocator_policy.hpp"  // IWYU pragma: export
#include "cputrain/policy/alloc/standard.hpp"          // IWYU pragma: export
#include "cputrain/policy/alloc/tbb_scalable.hpp"      // IWYU pragma: export
