// cputrain/machine.hpp — the machine: NUMA topology (hwloc or /sys), CPU quotas, thread plans, one pinned oneTBB arena
// per NUMA node, rank placement.
#pragma once

#include "cputrain/machine/arenas.hpp"            // IWYU pragma: export
#include "cputrain/machine/cpu_quota.hpp"         // IWYU pragma: export
#include "cputrain/machine/current_node.hpp"      // IWYU pragma: export
#include "cputrain/machine/memory_allowance.hpp"  // IWYU pragma: export
#include "cputrain/machine/memory_bill.hpp"       // IWYU pragma: export
#include "cputrain/machine/process_layout.hpp"    // IWYU pragma: export
#include "cputrain/machine/rank_placement.hpp"    // IWYU pragma: export
#include "cputrain/machine/thread_plan.hpp"       // IWYU pragma: export
#include "cputrain/machine/topology.hpp"          // IWYU pragma: export
