// The precision policies: cputrain::precision::fp32 and cputrain::precision::bf16_mixed, and the concept
// precision_policy a new one must satisfy.
#pragma once

#include "cputrain/policy/precision/bf16_mixed.hpp"    // IWYU pragma: export
#include "cputrain/policy/precision/fp32.hpp"          // IWYU pragma: export
#include "cputrain/policy/precision/precision_policy.hpp"  // IWYU pragma: export
