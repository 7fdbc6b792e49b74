// cputrain::parallel::multi_node — processes on one or many machines, one per socket (NUMA node) of each, started
// by any MPI launcher (mpirun -f hostfile -n 4 -ppn 2, OpenMPI's --hostfile ... --map-by ppr:2:node, a Kubeflow
// MPIJob). Each rank finds its host, local rank, NUMA node and threads by itself (mpi/discovery.hpp);
// gradients are averaged over MPI in buckets overlapped with backward (distributed/gradient_reducer.hpp). A world of one
// — the program started without mpirun — is a valid job, so one binary serves every scenario.
#pragma once

#include "cputrain/mpi/discovery.hpp"
#include "cputrain/mpi/communicator.hpp"
#include "cputrain/machine/process_layout.hpp"
#include "cputrain/machine/thread_plan.hpp"
#include "cputrain/machine/topology.hpp"
#include "cputrain/policy/parallel/parallel_policy.hpp"

namespace cputrain::parallel {

struct multi_node {
  static constexpr std::string_view name = "multi_node";
  static constexpr bool uses_mpi = true;
  static constexpr bool spans_nodes = true;
  using communicator = dist::mpi_communicator;

  /// This rank's layout on MPI_COMM_WORLD (collective; needs a dist::mpi_environment alive).
  [[nodiscard]] static process_layout discover(const topology& topo, const thread_request& request) {
    communicator comm;
    return discover(comm, topo, request);
  }
  [[nodiscard]] static process_layout discover(communicator& comm, const topology& topo, const thread_request& request) {
    return dist::discover_layout(comm, topo, request);
  }
};
static_assert(parallel_policy<multi_node>);

}  // namespace cputrain::parallel
