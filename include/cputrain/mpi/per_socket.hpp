// cputrain::parallel::per_socket — one process per socket (NUMA node) of one machine, started by mpirun: the
// "mpirun -n 2" scenario. At run time the rank finds its world, its NUMA node and its threads by itself
// (mpi/discovery.hpp); gradients are averaged over MPI (distributed/gradient_reducer.hpp). The policy says the code
// may use MPI but not span machines: discover() refuses a job whose ranks run on several hosts.
#pragma once

#include <string>

#include "cputrain/core/error.hpp"
#include "cputrain/mpi/communicator.hpp"
#include "cputrain/mpi/discovery.hpp"
#include "cputrain/machine/process_layout.hpp"
#include "cputrain/machine/thread_plan.hpp"
#include "cputrain/machine/topology.hpp"
#include "cputrain/policy/parallel/parallel_policy.hpp"

namespace cputrain::parallel {

struct per_socket {
  static constexpr std::string_view name = "per_socket";
  static constexpr bool uses_mpi = true;
  static constexpr bool spans_nodes = false;
  using communicator = dist::mpi_communicator;

  /// This rank's layout on MPI_COMM_WORLD (collective; needs a dist::mpi_environment alive). usage_error when
  /// the ranks run on more than one machine.
  [[nodiscard]] static process_layout discover(const topology& topo, const thread_request& request) {
    communicator comm;
    return discover(comm, topo, request);
  }
  [[nodiscard]] static process_layout discover(communicator& comm, const topology& topo, const thread_request& request) {
    process_layout layout = dist::discover_layout(comm, topo, request);
    if (layout.hosts > 1)
      throw usage_error("cputrain::parallel::per_socket: the " + std::to_string(layout.world_size) +
                        " ranks run on " + std::to_string(layout.hosts) +
                        " machines; per_socket is for one machine (use cputrain::parallel::multi_node)");
    return layout;
  }
};
static_assert(parallel_policy<per_socket>);

}  // namespace cputrain::parallel
