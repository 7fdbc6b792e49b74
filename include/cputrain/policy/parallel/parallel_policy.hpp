// What a parallel policy is. A parallel policy decides at compile time what the code can do (one process, one
// process per socket, processes across machines); at run time its discover() finds where this process stands
// (world size, ranks, NUMA nodes, threads) without the user computing any of it, and its communicator moves
// gradients between processes. The shape every policy has:
//   static constexpr std::string_view name;
//   static constexpr bool uses_mpi;      // needs an MPI library at run time
//   static constexpr bool spans_nodes;   // ranks may live on different machines
//   using communicator = ...;            // satisfies cputrain::parallel::communicator
//   static process_layout discover(const topology&, const thread_request&);
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <vector>
#include <string_view>

#include "cputrain/machine/process_layout.hpp"
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
