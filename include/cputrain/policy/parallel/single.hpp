// cputrain::parallel::single — one process on one machine, using every NUMA node it is allowed to run on (one
// tbb::task_arena per node). Needs no MPI at run time: its communicator is the world of one, where a sum over
// ranks is the buffer itself.
#pragma once

#include "cputrain/policy/parallel/parallel_policy.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include <string_view>

#include "cputrain/core/error.hpp"
#include "cputrain/machine/process_layout.hpp"
#include "cputrain/machine/thread_plan.hpp"
#include "cputrain/machine/topology.hpp"

namespace cputrain::parallel {

struct single {
  static constexpr std::string_view name = "single";
  static constexpr bool uses_mpi = false;
  static constexpr bool spans_nodes = false;

  /// The communicator of a world of one process.
  class communicator {
   public:
    [[nodiscard]] int rank() const noexcept { return 0; }
    [[nodiscard]] int size() const noexcept { return 1; }
    void all_reduce_sum(std::span<float>) const noexcept {}
    void broadcast(std::span<float>, int root) const { check_root(root, "broadcast"); }
    void barrier() const noexcept {}
    [[nodiscard]] double all_reduce_sum(double value) const noexcept { return value; }
    [[nodiscard]] std::int64_t all_reduce_max(std::int64_t value) const noexcept { return value; }
    [[nodiscard]] std::vector<float> gatherv(std::span<const float> part, int root) const {
      check_root(root, "gatherv");
      return {part.begin(), part.end()};
    }

   private:
    static void check_root(int root, const char* where) {
      if (root != 0) {
        throw usage_error(std::string("cputrain::parallel::single::communicator::") + where + ": root " +
                          std::to_string(root) + " does not exist in a world of one process (the only rank is 0)");
      }
    }
  };

  /// This process is rank 0 of 1 and trains on every node of `topo`, threads as plan_threads decides.
  [[nodiscard]] static process_layout discover(const topology& topo, const thread_request& request) {
    process_layout layout;
    layout.host = host_name();
    layout.nodes = topo;
    layout.threads = plan_threads(topo, request);
    return layout;
  }
};
static_assert(parallel_policy<single>);

}  // namespace cputrain::parallel
