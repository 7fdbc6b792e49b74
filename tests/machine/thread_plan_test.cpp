#include <catch2/catch.hpp>

#include <stdlib.h>

#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "cputrain/machine/thread_plan.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace thread_plan_test {

using cputrain::numa_node;
using cputrain::plan_threads;
using cputrain::thread_plan;
using cputrain::thread_request;
using cputrain::topology;

namespace {

// A topology of nodes with these core counts (one CPU per core; the CPUs need not exist here).
topology nodes_with_cores(std::vector<int> cores) {
  std::vector<numa_node> nodes;
  int next_cpu = 0;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    numa_node node{static_cast<int>(i), {}, cores[i], 0};
    for (int c = 0; c < cores[i]; ++c) node.cpus.push_back(next_cpu++);
    nodes.push_back(node);
  }
  return topology::from_nodes(nodes, "test");
}

// An environment of exactly these variables.
struct fake_env {
  std::map<std::string, std::string> vars;
  const char* operator()(const char* name) const {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  }
};

const fake_env no_env{};

// The machine's own CPU limit stays out unless a test gives one.
thread_plan plan(const topology& topo, thread_request request, const fake_env& env = no_env) {
  if (!request.cpu_limit) request.honour_cpu_quota = false;
  return plan_threads(topo, request, env);
}

thread_request threads(int n) { return thread_request{.threads = n}; }

thread_request limited(double cpus, int sharers = 1, std::optional<int> n = std::nullopt) {
  return thread_request{.threads = n, .cpu_limit = cputrain::cpu_quota{cpus, "/sys/fs/cgroup/cpu.max"},
                        .quota_sharers = sharers};
}

}  // namespace

TEST_CASE("without a request each node gets its cores minus one for the OS") {
  const thread_plan p = plan(nodes_with_cores({16, 8}), {});
  CHECK(p.threads_per_node == std::vector<int>{15, 7});
  CHECK(p.total() == 22);
  CHECK(p.reason == "cores of each node minus one for the OS");
  CHECK(p.warnings.empty());
  CHECK(plan(nodes_with_cores({1, 2}), {}).threads_per_node == std::vector<int>{1, 1});
}

TEST_CASE("an explicit total is split in proportion to cores by largest remainder") {
  const auto split = [](std::vector<int> cores, int total) {
    return plan(nodes_with_cores(std::move(cores)), threads(total)).threads_per_node;
  };
  CHECK(split({16, 16}, 4) == std::vector<int>{2, 2});
  CHECK(split({16, 16}, 5) == std::vector<int>{3, 2});          // a tie goes to the lower node
  CHECK(split({8, 24}, 8) == std::vector<int>{2, 6});           // exact shares
  CHECK(split({10, 20, 30}, 10) == std::vector<int>{2, 3, 5});  // 1.67, 3.33, 5: remainder to node 0
  CHECK(split({30, 2}, 4) == std::vector<int>{3, 1});           // 3.75 + 0.25 -> 4, 0 -> one moved to node 1
  CHECK(split({1, 1, 100}, 100) == std::vector<int>{1, 1, 98});
  CHECK(split({4, 4, 4}, 3) == std::vector<int>{1, 1, 1});
  CHECK(split({7}, 3) == std::vector<int>{3});

  const thread_plan p = plan(nodes_with_cores({16, 16}), threads(4));
  CHECK(p.reason == "--threads 4");
  CHECK(p.warnings.empty());
}

TEST_CASE("fewer threads than nodes: the first nodes get one each, with a warning") {
  const thread_plan p = plan(nodes_with_cores({4, 4, 4}), threads(2));
  CHECK(p.threads_per_node == std::vector<int>{1, 1, 0});
  REQUIRE(p.warnings.size() == 1);
  CHECK_THAT(p.warnings[0], Catch::Contains("only 2 threads for 3 NUMA nodes") && Catch::Contains("node 2"));
}

TEST_CASE("a node given more threads than cores is warned about") {
  const thread_plan p = plan(nodes_with_cores({16, 8}), threads(36));
  CHECK(p.threads_per_node == std::vector<int>{24, 12});
  REQUIRE(p.warnings.size() == 2);
  CHECK(p.warnings[0] == "node 0 gets 24 threads for 16 cores (oversubscribed)");
  CHECK(p.warnings[1] == "node 1 gets 12 threads for 8 cores (oversubscribed)");

  const thread_plan one = plan(nodes_with_cores({1, 3}), threads(4));
  CHECK(one.threads_per_node == std::vector<int>{1, 3});
  CHECK(one.warnings.empty());
}

TEST_CASE("OMP_NUM_THREADS is the user's word when no count is given") {
  const topology topo = nodes_with_cores({16, 16});
  const thread_plan p = plan(topo, {}, fake_env{{{"OMP_NUM_THREADS", "4"}}});
  CHECK(p.threads_per_node == std::vector<int>{2, 2});
  CHECK(p.reason == "OMP_NUM_THREADS=4");

  CHECK(plan(topo, {}, fake_env{{{"OMP_NUM_THREADS", "8,4"}}}).threads_per_node == std::vector<int>{4, 4});
  CHECK(plan(topo, {}, fake_env{{{"OMP_NUM_THREADS", " 6 "}}}).threads_per_node == std::vector<int>{3, 3});
  CHECK(plan(topo, {}, fake_env{{{"OMP_NUM_THREADS", "1"}}}).threads_per_node == std::vector<int>{1, 0});
}

TEST_CASE("a malformed OMP_NUM_THREADS is a usage error quoting it") {
  const topology topo = nodes_with_cores({4});
  for (const std::string bad : {"", "abc", "0", "-2", "3x", "+4", "4,", ",4", "4,,2", "8,0", "99999999999"}) {
    INFO("OMP_NUM_THREADS=" << bad);
    try {
      plan(topo, {}, fake_env{{{"OMP_NUM_THREADS", bad}}});
      FAIL("accepted");
    } catch (const cputrain::usage_error& e) {
      CHECK_THAT(e.what(), Catch::Contains("OMP_NUM_THREADS=\"" + bad + "\""));
    }
  }
}

TEST_CASE("an explicit count wins over OMP_NUM_THREADS, even a malformed one") {
  const topology topo = nodes_with_cores({16, 16});
  const thread_plan p = plan(topo, threads(6), fake_env{{{"OMP_NUM_THREADS", "abc"}}});
  CHECK(p.threads_per_node == std::vector<int>{3, 3});
  CHECK(p.reason == "--threads 6");
  REQUIRE(p.warnings.size() == 1);
  CHECK_THAT(p.warnings[0], Catch::Contains("OMP_NUM_THREADS=\"abc\" is ignored"));
}

TEST_CASE("OMP_NUM_THREADS is not read when not to be honoured") {
  const topology topo = nodes_with_cores({16, 16});
  thread_request request;
  request.honour_omp_num_threads = false;
  const thread_plan p = plan(topo, request, fake_env{{{"OMP_NUM_THREADS", "abc"}}});
  CHECK(p.threads_per_node == std::vector<int>{15, 15});
  CHECK(p.warnings.empty());
}

TEST_CASE("a thread count below one is a usage error") {
  const topology topo = nodes_with_cores({4});
  CHECK_THROWS_AS(plan(topo, threads(0)), cputrain::usage_error);
  CHECK_THROWS_WITH(plan(topo, threads(-3)), Catch::Contains("-3"));
}

TEST_CASE("plan_threads reads the process environment by default") {
  const topology topo = nodes_with_cores({16, 16});
  ::setenv("OMP_NUM_THREADS", "6", 1);
  const thread_request no_limit{.honour_cpu_quota = false};
  const thread_plan p = plan_threads(topo, no_limit);
  ::unsetenv("OMP_NUM_THREADS");
  CHECK(p.threads_per_node == std::vector<int>{3, 3});
  CHECK(p.reason == "OMP_NUM_THREADS=6");
  CHECK(plan_threads(topo, no_limit).threads_per_node == std::vector<int>{15, 15});
}

TEST_CASE("a container's CPU limit caps the automatic choice, minus one for the OS") {
  // A pod limited to 16 CPUs on a 2 x 32-core node that it sees whole (no static CPU manager).
  const thread_plan p = plan(nodes_with_cores({32, 32}), limited(16));
  CHECK(p.threads_per_node == std::vector<int>{8, 7});
  CHECK(p.total() == 15);
  CHECK(p.reason == "the CPU limit of 16 CPUs (/sys/fs/cgroup/cpu.max) minus one for the OS");
  CHECK(p.warnings.empty());
  // A fraction rounds up: 2.5 CPUs keep 3 threads busy, one left for the OS.
  CHECK(plan(nodes_with_cores({8}), limited(2.5)).total() == 2);
  CHECK(plan(nodes_with_cores({8}), limited(0.5)).total() == 1);
}

TEST_CASE("a CPU limit above the cores changes nothing") {
  const thread_plan p = plan(nodes_with_cores({4}), limited(64));
  CHECK(p.threads_per_node == std::vector<int>{3});
  CHECK(p.reason == "cores of each node minus one for the OS");
  CHECK(p.warnings.empty());
}

TEST_CASE("ranks of one host share its CPU limit") {
  const thread_plan p = plan(nodes_with_cores({32}), limited(16, 2));
  CHECK(p.total() == 7);
  CHECK(p.reason == "the CPU limit of 16 CPUs (/sys/fs/cgroup/cpu.max) shared by 2 ranks minus one for the OS");
}

TEST_CASE("an explicit count beyond the CPU limit is kept, with a warning") {
  const thread_plan p = plan(nodes_with_cores({32}), limited(4, 1, 12));
  CHECK(p.total() == 12);
  CHECK(p.reason == "--threads 12");
  REQUIRE(p.warnings.size() == 1);
  CHECK(p.warnings[0] == "12 threads for the CPU limit of 4 CPUs (/sys/fs/cgroup/cpu.max): the kernel throttles the "
                         "threads beyond it");
  fake_env env;
  env.vars["OMP_NUM_THREADS"] = "8";
  const thread_plan omp = plan(nodes_with_cores({32}), limited(4), env);
  CHECK(omp.total() == 8);
  CHECK(omp.warnings.size() == 1);
  CHECK(plan(nodes_with_cores({32}), limited(4, 1, 4)).warnings.empty());
}

}  // namespace thread_plan_test
