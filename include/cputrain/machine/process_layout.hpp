// cputrain::process_layout — where this process stands in a training job: its rank among all processes, its
// rank among the processes on its machine, the NUMA nodes it trains on and the threads each of them gets.
// A parallel policy's discover() fills it in at run time; rank 0 prints describe() so a user can check the
// layout before a long run.
#pragma once

#include "cputrain/machine/thread_plan.hpp"

#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/machine/topology.hpp"

namespace cputrain {

/// This machine's host name, as process_layout::host reports it ("unknown-host" if the system will not say).
[[nodiscard]] inline std::string host_name() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "unknown-host";
  return buffer;
}

struct process_layout {
  int world_size = 1;  // processes in the job
  int rank = 0;        // this process among them
  int local_size = 1;  // processes on this machine
  int local_rank = 0;  // this process among those
  int hosts = 1;       // machines in the job
  std::string host;
  topology nodes;       // the NUMA nodes this process trains on, restricted to the CPUs it may use
  thread_plan threads;  // threads per node, parallel to nodes.nodes()
  std::vector<std::string> warnings;

  [[nodiscard]] std::string describe() const;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::string process_layout::describe() const {
  std::ostringstream out;
  out << "rank " << rank << "/" << world_size << " (local " << local_rank << "/" << local_size << ") on "
      << host << ": " << threads.total() << " threads (" << threads.reason << ")\n";
  const auto& ns = nodes.nodes();
  for (std::size_t i = 0; i < ns.size(); ++i) {
    out << "  NUMA node " << ns[i].os_index << ": cpus " << format_cpulist(ns[i].cpus) << ", " << ns[i].cores
        << " cores, " << threads.threads_per_node[i] << " threads\n";
  }
  for (const auto& w : threads.warnings) out << "  warning: " << w << "\n";
  for (const auto& w : warnings) out << "  warning: " << w << "\n";
  return out.str();
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain
