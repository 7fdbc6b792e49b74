// A downstream program of the cputrain::mpi component: starts MPI through cputrain, sums over the world (of one, run
// without mpirun) and finds its place as the multi_node policy does.
#include <cputrain/machine/thread_plan.hpp>
#include <cputrain/machine/topology.hpp>
#include <cputrain/mpi/communicator.hpp>
#include <cputrain/mpi/environment.hpp>
#include <cputrain/mpi/multi_node.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  cputrain::dist::mpi_environment env(argc, argv);
  cputrain::dist::mpi_communicator comm;
  std::vector<float> values{1.5f, 2.5f};
  comm.all_reduce_sum(values);
  const cputrain::process_layout layout =
      cputrain::parallel::multi_node::discover(comm, cputrain::topology::detect(), cputrain::thread_request{});
  std::printf("consumer_mpi: rank %d of %d, sum %.1f %.1f, %zu host(s)\n", comm.rank(), comm.size(),
              static_cast<double>(values[0]), static_cast<double>(values[1]), static_cast<std::size_t>(layout.hosts));
  return comm.size() == 1 && values[0] == 1.5f && layout.hosts == 1 ? 0 : 1;
}
