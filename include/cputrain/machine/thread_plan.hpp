// cputrain::plan_threads — how many threads each NUMA node's arena gets. An explicit count wins, then
// OMP_NUM_THREADS (the user's word, even though no OpenMP runtime is in the process), else every node gets its
// cores minus one, the core the Hugging Face CPU-training guide leaves for the OS — within the container's CPU limit
// (machine/cpu_quota.hpp) when it has one: a pod limited to 16 CPUs gets 15 threads however many cores it can see. A
// total is spread over the nodes in proportion to their cores, so a rank's threads stay on the memory they use.
#pragma once

#include "cputrain/machine/cpu_quota.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/machine/topology.hpp"

namespace cputrain {

/// What the user asked for.
struct thread_request {
  /// total threads over all nodes; wins over everything else
  std::optional<int> threads = {};
  /// read OMP_NUM_THREADS when `threads` is not given
  bool honour_omp_num_threads = true;
  /// The container's CPU limit; not given: read_cpu_quota() is asked when `honour_cpu_quota`.
  std::optional<cpu_quota> cpu_limit = {};
  bool honour_cpu_quota = true;
  /// Processes sharing the limit: the ranks of one host, which share their pod's or container's control group.
  int quota_sharers = 1;
};

/// Threads per NUMA node, and why.
struct thread_plan {
  /// parallel to topology::nodes(); 0 = no arena on that node
  std::vector<int> threads_per_node;
  /// where the numbers came from, for the log
  std::string reason;
  /// oversubscribed nodes, nodes left without a thread, ignored settings
  std::vector<std::string> warnings;

  int total() const { return std::accumulate(threads_per_node.begin(), threads_per_node.end(), 0); }
};

namespace detail {

inline const char* system_getenv(const char* name) { return std::getenv(name); }

/// OMP_NUM_THREADS as OpenMP reads it: a positive count, or a list of them per nesting level ("8,4") of which
/// the outermost is ours.
inline int parse_omp_num_threads(std::string_view value) {
  const auto fail = [&] {
    return usage_error("cputrain: OMP_NUM_THREADS=\"" + std::string(value) +
                       "\" is not a thread count: expected a positive integer, or a list of them such as \"8,4\"");
  };
  const std::string_view list = topo::trim(value);
  if (list.empty()) throw fail();
  int first = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string_view item =
        topo::trim(list.substr(start, comma == std::string_view::npos ? list.npos : comma - start));
    int count = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), count);
    if (item.empty() || item.front() == '-' || ec != std::errc() || end != item.data() + item.size() || count < 1) {
      throw fail();
    }
    if (start == 0) first = count;
    if (comma == std::string_view::npos) return first;
    start = comma + 1;
  }
}

/// Splits `total` threads over the nodes in proportion to their cores by largest remainder (ties to the lower
/// node), then gives every node left at 0 one thread from the node with the most threads per core.
/// With fewer threads than nodes, the first `total` nodes get one each.
inline std::vector<int> split_threads(const topology& topo, int total, std::vector<std::string>& warnings) {
  const std::vector<numa_node>& nodes = topo.nodes();
  const std::size_t count = nodes.size();
  std::vector<int> share(count, 0);
  if (static_cast<std::size_t>(total) < count) {
    std::string idle;
    for (std::size_t i = 0; i < count; ++i) {
      if (i < static_cast<std::size_t>(total)) {
        share[i] = 1;
      } else {
        idle += (idle.empty() ? "" : ", ") + std::to_string(nodes[i].os_index);
      }
    }
    warnings.push_back("only " + std::to_string(total) + (total == 1 ? " thread" : " threads") + " for " +
                       std::to_string(count) + " NUMA nodes: no arena on node " + idle);
    return share;
  }
  const std::int64_t cores = topo.total_cores();
  std::vector<std::int64_t> remainder(count);
  int given = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t exact = std::int64_t{total} * nodes[i].cores;
    share[i] = static_cast<int>(exact / cores);
    remainder[i] = exact % cores;
    given += share[i];
  }
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
  for (std::size_t k = 0; given < total; ++k, ++given) ++share[order[k]];
  for (std::size_t i = 0; i < count; ++i) {
    if (share[i] != 0) continue;
    std::size_t donor = count;
    for (std::size_t j = 0; j < count; ++j) {
      if (share[j] < 2) continue;
      // share[j] / cores[j] > share[donor] / cores[donor], without division
      if (donor == count || std::int64_t{share[j]} * nodes[donor].cores > std::int64_t{share[donor]} * nodes[j].cores) {
        donor = j;
      }
    }
    --share[donor];  // exists: total >= count, so while some node has 0 another has at least 2
    share[i] = 1;
  }
  return share;
}

}  // namespace detail

/// Threads per node of `topo` for `request`; `getenv` reads the environment (tests pass their own).
/// @throws usage_error when request.threads < 1, or OMP_NUM_THREADS is consulted and is not a thread count.
CPUTRAIN_DECL thread_plan plan_threads(const topology& topo, const thread_request& request = {},
                                       const std::function<const char*(const char*)>& getenv = detail::system_getenv);

#if CPUTRAIN_DEFINE_FUNCTIONS

CPUTRAIN_DECL thread_plan plan_threads(const topology& topo, const thread_request& request,
                                       const std::function<const char*(const char*)>& getenv) {
  thread_plan plan;
  const char* omp = (request.honour_omp_num_threads && getenv) ? getenv("OMP_NUM_THREADS") : nullptr;
  std::optional<cpu_quota> limit = request.cpu_limit;
  if (!limit && request.honour_cpu_quota) limit = read_cpu_quota();
  const int sharers = std::max(1, request.quota_sharers);
  const double share = limit ? limit->cpus / sharers : 0.0;
  const auto limit_text = [&] {
    std::ostringstream text;
    text << "the CPU limit of " << limit->cpus << (limit->cpus == 1.0 ? " CPU" : " CPUs") << " (" << limit->source
         << ")";
    if (sharers > 1) text << " shared by " << sharers << " ranks";
    return text.str();
  };
  if (request.threads) {
    if (*request.threads < 1) {
      throw usage_error("cputrain: the thread count must be at least 1, got " + std::to_string(*request.threads));
    }
    plan.reason = "--threads " + std::to_string(*request.threads);
    if (omp != nullptr) {
      plan.warnings.push_back("OMP_NUM_THREADS=\"" + std::string(omp) + "\" is ignored: " + plan.reason + " was given");
    }
    plan.threads_per_node = detail::split_threads(topo, *request.threads, plan.warnings);
  } else if (omp != nullptr) {
    const int total = detail::parse_omp_num_threads(omp);
    plan.reason = "OMP_NUM_THREADS=" + std::string(omp);
    plan.threads_per_node = detail::split_threads(topo, total, plan.warnings);
  } else {
    plan.reason = "cores of each node minus one for the OS";
    for (const numa_node& node : topo.nodes()) plan.threads_per_node.push_back(std::max(1, node.cores - 1));
    // Threads beyond the limit would only be throttled (CFS bandwidth control), stalling every split GEMM.
    const int cap = std::max(1, quota_cores(share) - 1);
    if (limit && cap < plan.total()) {
      plan.reason = limit_text() + " minus one for the OS";
      plan.threads_per_node = detail::split_threads(topo, cap, plan.warnings);
    }
  }
  if (limit && plan.total() > quota_cores(share)) {
    plan.warnings.push_back(std::to_string(plan.total()) + " threads for " + limit_text() +
                            ": the kernel throttles the threads beyond it");
  }
  for (std::size_t i = 0; i < plan.threads_per_node.size(); ++i) {
    const numa_node& node = topo.nodes()[i];
    if (plan.threads_per_node[i] > node.cores) {
      plan.warnings.push_back("node " + std::to_string(node.os_index) + " gets " +
                              std::to_string(plan.threads_per_node[i]) + " threads for " + std::to_string(node.cores) +
                              (node.cores == 1 ? " core" : " cores") + " (oversubscribed)");
    }
  }
  return plan;
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain
