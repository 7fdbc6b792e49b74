// The parallel policies: cputrain::parallel::single (one process, no MPI), per_socket (one process per NUMA node
// of one machine) and multi_node (processes across machines), and the concepts parallel_policy and communicator
// they satisfy.
#pragma once

#include "cputrain/policy/parallel/parallel_policy.hpp"  // IWYU pragma: export
#include "cputrain/policy/parallel/multi_node.hpp"       // IWYU pragma: export
#include "cputrain/policy/parallel/per_socket.hpp"       // IWYU pragma: export
#include "cputrain/policy/parallel/single.hpp"           // IWYU pragma: export
