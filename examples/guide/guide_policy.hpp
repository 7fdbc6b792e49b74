// The guide example's choice of precision, parallelism and allocator, in one place for its two source files.
// With CPUTRAIN_SEPARATE_COMPILATION (examples/guide/CMakeLists.txt) the model and trainer of this policy are
// compiled once, in cputrain_instances.cpp, instead of in train_qa.cpp: editing train_qa.cpp then recompiles in a
// fraction of the time (docs/build.md, "Compiling cputrain once"). Without it, nothing changes.
#pragma once

#include <cputrain/cputrain.hpp>

namespace guide {
// fp32 instead: cputrain::precision::fp32.
using policy = cputrain::policy<cputrain::precision::bf16_mixed, cputrain::parallel::single, cputrain::alloc::numa_local>;
}  // namespace guide

CPUTRAIN_EXTERN_TEMPLATES(guide::policy);
