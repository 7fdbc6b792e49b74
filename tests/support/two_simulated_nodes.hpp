// The machine of the [hwloc-synthetic] tests: tests/machine/CMakeLists.txt runs them with
// HWLOC_SYNTHETIC="package:1 numa:2 core:1 pu:1" HWLOC_THISSYSTEM=1, two NUMA nodes of one CPU each, bound for real.
// hwloc numbers those CPUs 0 and 1, which this process may not be allowed to use (taskset, a container's cpuset),
// so two_simulated_nodes gives the two PUs the OS indices of the first two CPUs of the process's affinity mask
// (hwloc's "indexes=" attribute) for as long as it lives: the tests run, and hold, on any mask of two or more CPUs.
#pragma once

#include <catch2/catch.hpp>

#include <sched.h>
#include <stdlib.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "support/skip.hpp"

namespace cputrain::test {

/// What tests/machine/CMakeLists.txt sets; the tests check it, so they never run on another machine by mistake.
inline constexpr const char* two_node_description = "package:1 numa:2 core:1 pu:1";

/// The CPUs of the calling thread's affinity mask, sorted.
inline std::vector<int> affinity_mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

/// Checks that the environment names the two-node machine, then points HWLOC_SYNTHETIC at the first two allowed
/// CPUs until it is destroyed (it puts the variable back). Create it before the first topology::detect() and
/// before the test starts TBB's threads:
///   const cputrain::test::two_simulated_nodes machine;
///   if (machine.cpus().empty()) return;  // reported skipped: fewer than two CPUs
class two_simulated_nodes {
 public:
  two_simulated_nodes() {
    const char* synthetic = std::getenv("HWLOC_SYNTHETIC");
    const char* thissystem = std::getenv("HWLOC_THISSYSTEM");
    REQUIRE(synthetic != nullptr);
    REQUIRE(std::string(synthetic) == two_node_description);
    REQUIRE(thissystem != nullptr);
    REQUIRE(std::string(thissystem) == "1");
    const std::vector<int> allowed = affinity_mask();
    if (allowed.size() < 2) {
      report_skipped("two simulated NUMA nodes need two CPUs; this process may use only CPU " +
                     std::to_string(allowed.at(0)));
      return;
    }
    cpus_ = {allowed[0], allowed[1]};
    if (cpus_ != std::vector<int>{0, 1}) {
      const std::string indexed = std::string(two_node_description) + "(indexes=" + std::to_string(cpus_[0]) + "," +
                                  std::to_string(cpus_[1]) + ")";
      REQUIRE(::setenv("HWLOC_SYNTHETIC", indexed.c_str(), 1) == 0);
      restore_ = two_node_description;
    }
  }
  ~two_simulated_nodes() {
    if (restore_) ::setenv("HWLOC_SYNTHETIC", restore_->c_str(), 1);
  }
  two_simulated_nodes(const two_simulated_nodes&) = delete;
  two_simulated_nodes& operator=(const two_simulated_nodes&) = delete;

  /// {the CPU of node 0, the CPU of node 1}; empty when the test was reported skipped.
  [[nodiscard]] const std::vector<int>& cpus() const noexcept { return cpus_; }

 private:
  std::vector<int> cpus_;
  std::optional<std::string> restore_;
};

}  // namespace cputrain::test
