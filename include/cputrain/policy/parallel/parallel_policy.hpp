// What a parallel policy is: compile-time facts (name, uses_mpi, spans_nodes), a communicator type that moves
// gradients between processes, and discover(topology, thread_request), which finds at run time where this process
// stands (world size, ranks, NUMA nodes, threads).
#pragma once

#include "cputrain/machine/process_layout.hpp"

#include <concepts>
#include <cstdint>
#include <span>
#include <vector>
#include <string_view>

#include "cputrain/machine/thread_plan.hpp"
#include "cputrain/machine/topology.hpp"

namespace cputrain::parallel {

/// Moves float buffers between the processes of a job. All calls are collective: every rank makes them in the
/// same order with the same sizes.
template <class C>
concept communicator = requires(C& c, const C& cc, std::span<float> buffer, std::span<const float> part, int root,
                                double value, std::int64_t count) {
  { cc.rank() } -> std::same_as<int>;
  { cc.size() } -> std::same_as<int>;
  c.all_reduce_sum(buffer);     // in place: every rank ends with the element-wise sum over ranks
  c.broadcast(buffer, root);    // in place: every rank ends with root's values
  c.barrier();
  { c.all_reduce_sum(value) } -> std::same_as<double>;        // a scalar summed over ranks (losses)
  { c.all_reduce_max(count) } -> std::same_as<std::int64_t>;  // a scalar's maximum over ranks (agreement)
  { c.gatherv(part, root) } -> std::same_as<std::vector<float>>;  // root: every rank's part in rank order
};

template <class P>
concept parallel_policy = requires(const topology& topo, const thread_request& request) {
  { P::name } -> std::convertible_to<std::string_view>;
  { P::uses_mpi } -> std::convertible_to<bool>;
  { P::spans_nodes } -> std::convertible_to<bool>;
  typename P::communicator;
  { P::discover(topo, request) } -> std::same_as<process_layout>;
} && communicator<typename P::communicator>;

}  // namespace cputrain::parallel
