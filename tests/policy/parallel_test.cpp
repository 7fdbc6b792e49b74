// Tests for include/cputrain/policy/parallel.hpp: parallel::single and the shape every parallel policy has.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <unistd.h>

#include "cputrain/policy/parallel.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace parallel_test {

namespace par = cputrain::parallel;

namespace {
struct no_communicator {
  static constexpr std::string_view name = "broken";
  static constexpr bool uses_mpi = false;
  static constexpr bool spans_nodes = false;
  static cputrain::process_layout discover(const cputrain::topology&, const cputrain::thread_request&);
};
struct half_communicator {  // has rank/size but cannot reduce
  int rank() const { return 0; }
  int size() const { return 1; }
  void barrier() {}
};
}  // namespace

TEST_CASE("single is a parallel policy that needs no MPI") {
  STATIC_REQUIRE(par::parallel_policy<par::single>);
  STATIC_REQUIRE_FALSE(par::single::uses_mpi);
  STATIC_REQUIRE_FALSE(par::single::spans_nodes);
  CHECK(par::single::name == "single");
  STATIC_REQUIRE_FALSE(par::parallel_policy<no_communicator>);
  STATIC_REQUIRE_FALSE(par::communicator<half_communicator>);
}

TEST_CASE("single's communicator is the world of one process") {
  par::single::communicator comm;
  CHECK(comm.rank() == 0);
  CHECK(comm.size() == 1);
  std::vector<float> gradients{1.5f, -2.0f, 0.25f};
  comm.all_reduce_sum(gradients);  // the sum over one rank is the buffer itself
  CHECK(gradients == std::vector<float>{1.5f, -2.0f, 0.25f});
  comm.broadcast(gradients, 0);
  CHECK(gradients == std::vector<float>{1.5f, -2.0f, 0.25f});
  comm.barrier();
  CHECK_THROWS_AS(comm.broadcast(gradients, 1), cputrain::usage_error);
  CHECK_THROWS_WITH(comm.broadcast(gradients, 3), Catch::Contains("root 3"));
}

TEST_CASE("single::discover makes this process rank 0 of 1 on every node, threads by the plan") {
  // Two nodes of 4 and 2 cores: the default plan leaves one core per node to the OS.
  const auto topo = cputrain::topology::from_nodes(
      {cputrain::numa_node{0, {0, 1, 2, 3}, 4, 0}, cputrain::numa_node{1, {4, 5}, 2, 0}}, "test");
  const auto layout = par::single::discover(topo, cputrain::thread_request{std::nullopt, false});
  CHECK(layout.world_size == 1);
  CHECK(layout.rank == 0);
  CHECK(layout.local_size == 1);
  CHECK(layout.local_rank == 0);
  REQUIRE(layout.nodes.nodes().size() == 2);
  CHECK(layout.threads.threads_per_node == std::vector<int>{3, 1});
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  CHECK(layout.host == host);
  const std::string text = layout.describe();
  CHECK_THAT(text, Catch::Contains("rank 0/1"));
  CHECK_THAT(text, Catch::Contains("NUMA node 1: cpus 4-5, 2 cores, 1 threads"));

  const auto asked = par::single::discover(topo, cputrain::thread_request{6, false});
  CHECK(asked.threads.total() == 6);
  CHECK(asked.threads.threads_per_node == std::vector<int>{4, 2});
}

TEST_CASE("single's communicator sums, maximises and gathers over its one rank") {
  const par::single::communicator comm;
  CHECK(comm.all_reduce_sum(2.5) == 2.5);
  CHECK(comm.all_reduce_max(std::int64_t{-7}) == -7);
  const std::vector<float> part{1.0f, 2.0f};
  CHECK(comm.gatherv(part, 0) == part);
  CHECK_THROWS_WITH(comm.gatherv(part, 1), Catch::Contains("gatherv: root 1"));
}

}  // namespace parallel_test
