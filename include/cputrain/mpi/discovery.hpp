// cputrain::dist::discover_layout — a rank's process_layout under MPI, found without the user computing anything:
// world size and rank from the communicator; every rank's host and allowed CPUs exchanged, then place_rank
// (machine/rank_placement.hpp) picks this rank's NUMA node and CPUs and plan_threads its threads (--threads or
// OMP_NUM_THREADS if given, else the node share's cores minus one). describe_job() gathers every rank's layout on
// rank 0 for the start-up report. Launcher variables (OMPI_*, PMI_RANK, PMIX_RANK, MV2_*, I_MPI_*) are never
// read: MPI itself says who is who, so Intel MPI's environment cannot confuse it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

#include "cputrain/core/error.hpp"
#include "cputrain/mpi/communicator.hpp"
#include "cputrain/machine/process_layout.hpp"
#include "cputrain/machine/rank_placement.hpp"
#include "cputrain/machine/thread_plan.hpp"
#include "cputrain/machine/topology.hpp"

namespace cputrain::dist {

namespace detail {

// Records of every rank, exchanged as text: "host\tcpulist\tnodelist" joined by '\n' (host names hold neither).
inline std::vector<rank_view> exchange_views(mpi_communicator& comm, const rank_view& mine) {
  std::string joined;
  const auto all = comm.gather_strings(
      mine.host + "\t" + format_cpulist(mine.allowed_cpus) + "\t" + format_cpulist(mine.numa_nodes), 0);
  for (const std::string& record : all) {
    joined += record;
    joined += '\n';
  }
  comm.broadcast_bytes(joined, 0);
  std::vector<rank_view> views;
  std::size_t start = 0;
  while (start < joined.size()) {
    const std::size_t end = joined.find('\n', start);
    const std::string record = joined.substr(start, end - start);
    const std::size_t tab = record.find('\t');
    const std::size_t tab2 = tab == std::string::npos ? tab : record.find('\t', tab + 1);
    if (tab2 == std::string::npos) throw error("cputrain: a rank sent a malformed layout record: \"" + record + "\"");
    rank_view v;
    v.host = record.substr(0, tab);
    v.allowed_cpus = parse_cpulist(record.substr(tab + 1, tab2 - tab - 1), "a rank's allowed CPUs");
    v.numa_nodes = parse_cpulist(record.substr(tab2 + 1), "a rank's NUMA nodes");
    views.push_back(std::move(v));
    start = end + 1;
  }
  if (views.size() != static_cast<std::size_t>(comm.size()))
    throw error("cputrain: layout exchange gave " + std::to_string(views.size()) + " records for " +
                std::to_string(comm.size()) + " ranks");
  return views;
}

}  // namespace detail

/// This rank's layout. Collective over `comm`. `topo`: this process's topology (topology::detect()).
[[nodiscard]] inline process_layout discover_layout(mpi_communicator& comm, const topology& topo,
                                                    const thread_request& request) {
  rank_view mine;
  mine.host = host_name();
  for (const numa_node& node : topo.nodes()) {
    mine.allowed_cpus.insert(mine.allowed_cpus.end(), node.cpus.begin(), node.cpus.end());
    mine.numa_nodes.push_back(node.os_index);
  }
  std::sort(mine.allowed_cpus.begin(), mine.allowed_cpus.end());
  const auto views = detail::exchange_views(comm, mine);
  rank_placement placed = place_rank(topo, views, comm.rank());

  process_layout layout;
  layout.world_size = comm.size();
  layout.rank = comm.rank();
  layout.local_size = placed.local_size;
  layout.local_rank = placed.local_rank;
  layout.host = mine.host;
  layout.nodes = placed.nodes;
  // The ranks of one host share its container's CPU limit, if it has one.
  thread_request shared = request;
  shared.quota_sharers = placed.local_size;
  layout.threads = plan_threads(layout.nodes, shared);
  layout.warnings = std::move(placed.warnings);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (auto warning = single_cpu_binding_warning(mine.allowed_cpus.size(), online > 0 ? static_cast<int>(online) : 0,
                                                placed.local_size)) {
    layout.warnings.push_back(std::move(*warning));
  }
  std::size_t hosts = 0;
  for (std::size_t r = 0; r < views.size(); ++r) {
    bool first = true;
    for (std::size_t q = 0; q < r; ++q) first = first && views[q].host != views[r].host;
    hosts += first ? 1 : 0;
  }
  layout.hosts = static_cast<int>(hosts);
  return layout;
}

/// Every rank's layout.describe(), in rank order, on rank 0 (empty elsewhere). Collective.
[[nodiscard]] inline std::string describe_job(mpi_communicator& comm, const process_layout& layout) {
  std::string text;
  for (const std::string& part : comm.gather_strings(layout.describe(), 0)) text += part;
  return text;
}

}  // namespace cputrain::dist
