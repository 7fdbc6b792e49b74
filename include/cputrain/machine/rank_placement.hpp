// cputrain::place_rank — which NUMA node and CPUs one rank of a job trains on, from every rank's host name and
// allowed CPUs: local rank r takes node r mod nodes, ranks sharing a node's CPUs split them, a launcher's own
// binding is kept. Pure and deterministic (tested without MPI); mpi/discovery.hpp feeds it what MPI reports.
#pragma once

#include "cputrain/machine/topology.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/machine/thread_plan.hpp"

namespace cputrain {

/// What one rank reports about itself.
struct rank_view {
  std::string host;
  /// sorted
  std::vector<int> allowed_cpus;
  /// The NUMA nodes (os_index) the rank's own topology holds: a rank bound by its launcher sees only its own.
  /// Empty: the same as this rank's.
  std::vector<int> numa_nodes = {};
};

/// Where one rank goes.
struct rank_placement {
  int local_rank = 0;
  int local_size = 1;
  /// into the rank's topology::nodes()
  int node_index = 0;
  /// ranks of this host placed on the same NUMA node
  int ranks_on_node = 1;
  /// the single NUMA node this rank trains on, narrowed to its share of the CPUs
  topology nodes;
  std::vector<std::string> warnings;
};

namespace detail {

inline std::vector<int> cpu_intersection(std::span<const int> a, std::span<const int> b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace detail

/// Places rank `rank` of `ranks` (every rank's view, in rank order) on one NUMA node of `topo` (this rank's
/// topology, already restricted to the CPUs it may use).
[[nodiscard]] CPUTRAIN_DECL rank_placement place_rank(const topology& topo, std::span<const rank_view> ranks,
                                                     int rank);

/// A warning when the launcher bound a rank to a single CPU although its host has more CPUs than ranks on it:
/// Open MPI's mpirun binds each rank to one core when it starts two or fewer (the `mpirun -n 2` of one rank per
/// socket), and the library respects a launcher's binding, so such a rank would train on one thread.
/// `host_cpus`: the host's online CPUs (0: unknown, no warning).
[[nodiscard]] CPUTRAIN_DECL std::optional<std::string> single_cpu_binding_warning(std::size_t allowed_cpus,
                                                                                  int host_cpus, int local_size);

#if CPUTRAIN_DEFINE_FUNCTIONS

CPUTRAIN_DECL rank_placement place_rank(const topology& topo, std::span<const rank_view> ranks, int rank) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= ranks.size())
    throw usage_error("cputrain::place_rank: rank " + std::to_string(rank) + " of " + std::to_string(ranks.size()));
  const auto& nodes = topo.nodes();
  if (nodes.empty()) throw usage_error("cputrain::place_rank: the topology has no NUMA node");
  const rank_view& me = ranks[static_cast<std::size_t>(rank)];

  rank_placement out;
  std::vector<int> local;  // ranks on this host, in rank order
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].host == me.host) local.push_back(static_cast<int>(r));
  }
  out.local_size = static_cast<int>(local.size());
  out.local_rank = static_cast<int>(std::find(local.begin(), local.end(), rank) - local.begin());
  const int node_count = static_cast<int>(nodes.size());
  out.node_index = out.local_rank % node_count;
  const numa_node& node = nodes[static_cast<std::size_t>(out.node_index)];

  // The node each rank of this host picks, by the same rule in its own topology; those that pick this rank's
  // node and whose CPUs there overlap this rank's share them.
  const auto node_of = [&](std::size_t i) {
    const auto& theirs = ranks[static_cast<std::size_t>(local[i])].numa_nodes;
    if (theirs.empty()) return nodes[i % nodes.size()].os_index;
    return theirs[i % theirs.size()];
  };
  std::vector<int> sharing;
  std::vector<int> distinct;
  const std::vector<int> mine = detail::cpu_intersection(node.cpus, me.allowed_cpus);
  out.ranks_on_node = 0;
  for (std::size_t i = 0; i < local.size(); ++i) {
    const int picked = node_of(i);
    if (std::find(distinct.begin(), distinct.end(), picked) == distinct.end()) distinct.push_back(picked);
    if (picked != node.os_index) continue;
    ++out.ranks_on_node;
    const auto& theirs = ranks[static_cast<std::size_t>(local[i])].allowed_cpus;
    if (local[i] == rank || !detail::cpu_intersection(mine, theirs).empty()) sharing.push_back(local[i]);
  }

  numa_node share = node;
  const std::vector<int>& cpus = mine.empty() ? node.cpus : mine;
  if (sharing.size() > 1) {
    const auto k = static_cast<std::size_t>(std::find(sharing.begin(), sharing.end(), rank) - sharing.begin());
    const std::size_t n = sharing.size(), count = cpus.size();
    if (count < n) {
      out.warnings.push_back("host " + me.host + ": " + std::to_string(n) + " ranks share NUMA node " +
                             std::to_string(node.os_index) + " with only " + std::to_string(count) +
                             " CPUs; some ranks share a CPU");
      share.cpus = {cpus[k % count]};
    } else {
      share.cpus.assign(cpus.begin() + static_cast<std::ptrdiff_t>(k * count / n),
                        cpus.begin() + static_cast<std::ptrdiff_t>((k + 1) * count / n));
    }
    share.cores = std::max(1, static_cast<int>(static_cast<double>(node.cores) * static_cast<double>(share.cpus.size()) /
                                               static_cast<double>(node.cpus.size())));
  } else {
    share.cpus = cpus;
  }
  if (share.cores > static_cast<int>(share.cpus.size())) share.cores = static_cast<int>(share.cpus.size());
  out.nodes = topology::from_nodes({share}, topo.source());

  if (distinct.size() < local.size() && out.local_rank == 0) {
    out.warnings.push_back("host " + me.host + " runs " + std::to_string(out.local_size) + " ranks on " +
                           std::to_string(distinct.size()) + " NUMA node" + (distinct.size() == 1 ? "" : "s") +
                           ": ranks share nodes (one rank per NUMA node is the layout this library is built for)");
  }
  return out;
}

CPUTRAIN_DECL std::optional<std::string> single_cpu_binding_warning(std::size_t allowed_cpus, int host_cpus,
                                                                    int local_size) {
  if (allowed_cpus != 1 || host_cpus <= local_size) return std::nullopt;
  return "bound to 1 CPU by the launcher although the host has " + std::to_string(host_cpus) + " CPUs for " +
         std::to_string(local_size) + (local_size == 1 ? " rank" : " ranks") +
         " (Open MPI binds 2 or fewer ranks to one core each): unless that is meant, start mpirun with --bind-to "
         "none and each rank takes its NUMA node's CPUs";
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain
