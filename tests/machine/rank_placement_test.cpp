// Tests for include/cputrain/machine/rank_placement.hpp: local ranks by host, NUMA node by local rank, CPUs of a
// shared node split only between ranks that could otherwise run on the same ones, and the warnings.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/machine/rank_placement.hpp"
#include "support/checks.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace rank_placement_test {

using cputrain::numa_node;
using cputrain::place_rank;
using cputrain::rank_view;
using cputrain::topology;
using cputrain::test::says;

namespace {

// Two NUMA nodes of four cores each (no SMT).
topology two_nodes() {
  return topology::from_nodes({numa_node{0, {0, 1, 2, 3}, 4, 0}, numa_node{1, {4, 5, 6, 7}, 4, 0}}, "test");
}
topology one_node(std::vector<int> cpus) {
  const int cores = static_cast<int>(cpus.size());
  return topology::from_nodes({numa_node{0, std::move(cpus), cores, 0}}, "test");
}

}  // namespace

TEST_CASE("one rank per NUMA node: each rank gets its own node whole and the usual thread rule") {
  const std::vector<rank_view> ranks{{"a", {0, 1, 2, 3, 4, 5, 6, 7}}, {"a", {0, 1, 2, 3, 4, 5, 6, 7}}};
  const auto r0 = place_rank(two_nodes(), ranks, 0), r1 = place_rank(two_nodes(), ranks, 1);
  CHECK(r0.local_rank == 0);
  CHECK(r1.local_rank == 1);
  CHECK(r0.local_size == 2);
  CHECK(r0.node_index == 0);
  CHECK(r1.node_index == 1);
  REQUIRE(r1.nodes.nodes().size() == 1);
  CHECK(r0.nodes.nodes()[0].cpus == std::vector<int>{0, 1, 2, 3});
  CHECK(r1.nodes.nodes()[0].cpus == std::vector<int>{4, 5, 6, 7});
  CHECK(r1.nodes.nodes()[0].os_index == 1);
  CHECK(r1.nodes.nodes()[0].cores == 4);
  CHECK(r0.ranks_on_node == 1);
  CHECK(r0.warnings.empty());
  CHECK(cputrain::plan_threads(r1.nodes, cputrain::thread_request{.honour_omp_num_threads = false,
                                                                     .honour_cpu_quota = false}).total() == 3);
}

TEST_CASE("two unbound ranks on a one-node machine split its CPUs, and the first warns once") {
  const std::vector<rank_view> ranks{{"a", {0, 1}}, {"a", {0, 1}}};
  const auto r0 = place_rank(one_node({0, 1}), ranks, 0), r1 = place_rank(one_node({0, 1}), ranks, 1);
  CHECK(r0.nodes.nodes()[0].cpus == std::vector<int>{0});
  CHECK(r1.nodes.nodes()[0].cpus == std::vector<int>{1});
  CHECK(r0.nodes.nodes()[0].cores == 1);
  CHECK(r0.ranks_on_node == 2);
  REQUIRE(r0.warnings.size() == 1);
  CHECK_THAT(r0.warnings[0], Catch::Contains("host a runs 2 ranks on 1 NUMA node"));
  CHECK(r1.warnings.empty());  // said once per host
  // With one core each, the rule (cores minus one) still gives every rank a thread.
  CHECK(cputrain::plan_threads(r1.nodes, cputrain::thread_request{.honour_omp_num_threads = false,
                                                                     .honour_cpu_quota = false}).total() == 1);
}

TEST_CASE("ranks the launcher already bound to their own cores keep them") {
  // mpirun --bind-to core: each rank may only use its core, so its topology holds only that CPU.
  const std::vector<rank_view> ranks{{"a", {0}}, {"a", {1}}};
  const auto r0 = place_rank(one_node({0}), ranks, 0), r1 = place_rank(one_node({1}), ranks, 1);
  CHECK(r0.nodes.nodes()[0].cpus == std::vector<int>{0});
  CHECK(r1.nodes.nodes()[0].cpus == std::vector<int>{1});
}

TEST_CASE("local ranks count the ranks of the same host, in rank order, however ranks are mapped") {
  const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
  // -ppn 2 (by slot): ranks 0,1 on host a, 2,3 on host b.
  const std::vector<rank_view> by_slot{{"a", all}, {"a", all}, {"b", all}, {"b", all}};
  CHECK(place_rank(two_nodes(), by_slot, 2).local_rank == 0);
  CHECK(place_rank(two_nodes(), by_slot, 3).local_rank == 1);
  CHECK(place_rank(two_nodes(), by_slot, 3).node_index == 1);
  CHECK(place_rank(two_nodes(), by_slot, 3).local_size == 2);
  // Round robin (by node): ranks 0,2 on a, 1,3 on b.
  const std::vector<rank_view> by_node{{"a", all}, {"b", all}, {"a", all}, {"b", all}};
  CHECK(place_rank(two_nodes(), by_node, 2).local_rank == 1);
  CHECK(place_rank(two_nodes(), by_node, 2).node_index == 1);
  CHECK(place_rank(two_nodes(), by_node, 1).node_index == 0);
}

TEST_CASE("three ranks on two nodes: the third shares node 0 with the first, each with half its CPUs") {
  const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<rank_view> ranks{{"a", all}, {"a", all}, {"a", all}};
  const auto r0 = place_rank(two_nodes(), ranks, 0), r1 = place_rank(two_nodes(), ranks, 1),
             r2 = place_rank(two_nodes(), ranks, 2);
  CHECK(r0.nodes.nodes()[0].cpus == std::vector<int>{0, 1});
  CHECK(r2.nodes.nodes()[0].cpus == std::vector<int>{2, 3});
  CHECK(r1.nodes.nodes()[0].cpus == std::vector<int>{4, 5, 6, 7});
  CHECK(r0.nodes.nodes()[0].cores == 2);
  CHECK(r0.ranks_on_node == 2);
  CHECK(r1.ranks_on_node == 1);
  REQUIRE(r0.warnings.size() == 1);
  CHECK_THAT(r0.warnings[0], Catch::Contains("3 ranks on 2 NUMA nodes"));
}

TEST_CASE("more ranks than CPUs on a node: they share CPUs, and it is said") {
  const std::vector<rank_view> ranks{{"a", {0, 1}}, {"a", {0, 1}}, {"a", {0, 1}}};
  const auto r2 = place_rank(one_node({0, 1}), ranks, 2);
  CHECK(r2.nodes.nodes()[0].cpus == std::vector<int>{0});
  bool shared = false;
  for (const auto& w : r2.warnings) shared = shared || w.find("some ranks share a CPU") != std::string::npos;
  CHECK(shared);
}

TEST_CASE("a rank outside the job is refused") {
  const std::vector<rank_view> ranks{{"a", {0, 1}}};
  CHECK_THROWS_MATCHES(place_rank(one_node({0, 1}), ranks, 1), cputrain::usage_error, says("rank 1 of 1"));
}

TEST_CASE("ranks bound to one node each by the launcher do not warn, ranks bound to the same node do") {
  // --bind-to numa on a two-node machine: each rank's topology holds only its own node.
  const std::vector<rank_view> apart{{"a", {0, 1, 2, 3}, {0}}, {"a", {4, 5, 6, 7}, {1}}};
  const topology node0 = topology::from_nodes({numa_node{0, {0, 1, 2, 3}, 4, 0}}, "test");
  const topology node1 = topology::from_nodes({numa_node{1, {4, 5, 6, 7}, 4, 0}}, "test");
  const auto r0 = place_rank(node0, apart, 0), r1 = place_rank(node1, apart, 1);
  CHECK(r0.warnings.empty());
  CHECK(r1.nodes.nodes()[0].os_index == 1);
  CHECK(r0.ranks_on_node == 1);
  // Both bound to node 0 (a one-node machine, or a bad binding): they share it, and it is said.
  const std::vector<rank_view> together{{"a", {0, 1}, {0}}, {"a", {2, 3}, {0}}};
  const topology half0 = topology::from_nodes({numa_node{0, {0, 1}, 2, 0}}, "test");
  const auto t0 = place_rank(half0, together, 0);
  CHECK(t0.ranks_on_node == 2);
  REQUIRE(t0.warnings.size() == 1);
  CHECK_THAT(t0.warnings[0], Catch::Contains("runs 2 ranks on 1 NUMA node"));
  CHECK(t0.nodes.nodes()[0].cpus == std::vector<int>{0, 1});  // their CPUs do not overlap: nothing to split
}

TEST_CASE("a rank bound to one CPU on a host with more CPUs than ranks is warned about") {
  // mpirun -n 2 on a 2 x 16-core server: Open MPI binds each rank to one core.
  const auto warning = cputrain::single_cpu_binding_warning(1, 32, 2);
  REQUIRE(warning);
  CHECK(*warning == "bound to 1 CPU by the launcher although the host has 32 CPUs for 2 ranks (Open MPI binds 2 or "
                    "fewer ranks to one core each): unless that is meant, start mpirun with --bind-to none and each "
                    "rank takes its NUMA node's CPUs");
  CHECK(cputrain::single_cpu_binding_warning(1, 8, 1)->find("8 CPUs for 1 rank ") != std::string::npos);
  // One core per rank is all the host has (mpirun -n 2 on 2 cores, -n 64 on 64): nothing to say.
  CHECK_FALSE(cputrain::single_cpu_binding_warning(1, 2, 2));
  CHECK_FALSE(cputrain::single_cpu_binding_warning(1, 64, 64));
  // More than one CPU, or the host's size unknown: nothing to say.
  CHECK_FALSE(cputrain::single_cpu_binding_warning(2, 32, 2));
  CHECK_FALSE(cputrain::single_cpu_binding_warning(16, 32, 2));
  CHECK_FALSE(cputrain::single_cpu_binding_warning(1, 0, 2));
}

}  // namespace rank_placement_test
