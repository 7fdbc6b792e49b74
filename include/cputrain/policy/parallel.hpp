// The parallel policies: cputrain::parallel::single (one process) and the concepts parallel_policy and
// communicator that the per-socket and multi-node policies satisfy too.
#pragma once

#include "cputrain/policy/parallel/parallel_policy.hpp"  // IWYU pragma: export
#include "cputrain/policy/parallel/single.hpp"           // IWYU pragma: export
