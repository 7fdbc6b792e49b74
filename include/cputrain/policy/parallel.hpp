// The parallel policies' shape: the concepts parallel_policy and communicator, and cputrain::parallel::single (one
// process, no MPI). The policies that run over MPI, parallel::per_socket and parallel::multi_node, are in
// cputrain/mpi.hpp (the cputrain::mpi component).
#pragma once

#include "cputrain/policy/parallel/single.hpp"           // IWYU pragma: export
#include "cputrain/policy/parallel/parallel_policy.hpp"  // IWYU pragma: export
