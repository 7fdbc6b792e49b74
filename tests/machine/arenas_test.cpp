#include <catch2/catch.hpp>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include "cputrain/machine/arenas.hpp"
#include "cputrain/policy/alloc/numa_local.hpp"
#include "support/skip.hpp"
#include "support/two_simulated_nodes.hpp"

#if CPUTRAIN_HAVE_HWLOC
#include <hwloc.h>
#endif

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace arenas_test {

using cputrain::numa_arenas;
using cputrain::numa_node;
using cputrain::this_thread_numa_node;
using cputrain::thread_plan;
using cputrain::topology;

namespace {

std::vector<int> affinity_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) throw std::runtime_error("sched_getaffinity failed");
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

// The main thread's mask when the program started: a test that left it pinned must not make later tests skip.
const std::vector<int> initial_affinity = affinity_of_this_thread();

// The two CPUs the tests put on "node 0" and "node 1"; empty, after reporting the test skipped
// (support/skip.hpp), when the process has fewer than two.
std::vector<int> two_cpus() {
  REQUIRE(affinity_of_this_thread() == initial_affinity);  // an earlier test left the main thread pinned
  if (initial_affinity.size() < 2) {
    cputrain::test::report_skipped("needs 2 CPUs; this process may use only CPU " +
                                   std::to_string(initial_affinity.at(0)));
    return {};
  }
  return {initial_affinity[0], initial_affinity[1]};
}

topology two_nodes(const std::vector<int>& cpus) {
  return topology::from_nodes({{0, {cpus[0]}, 1, 0}, {1, {cpus[1]}, 1, 0}}, "test");
}

#if CPUTRAIN_HAVE_HWLOC
// The NUMA nodes this process may place memory on: Mems_allowed_list of /proc/self/status, as the kernel has them.
std::set<int> memory_nodes_allowed() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    const std::string key = "Mems_allowed_list:";
    if (line.rfind(key, 0) != 0) continue;
    const std::vector<int> nodes = cputrain::parse_cpulist(line.substr(key.size()), "Mems_allowed_list");
    return {nodes.begin(), nodes.end()};
  }
  FAIL("no Mems_allowed_list in /proc/self/status");
  return {};
}
#endif

thread_plan plan_of(std::vector<int> threads) { return thread_plan{std::move(threads), "test", {}}; }

// Spins until `done()` or the timeout; returns done().
template <class Done>
bool wait_until(Done done, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  return done();
}

// Where the work of one arena ran.
struct observed {
  std::mutex mutex;
  std::set<int> cpus;
  std::set<int> nodes;
  std::set<std::thread::id> threads;
  std::set<std::vector<int>> masks;
  void record() {
    const int cpu = sched_getcpu();
    const std::vector<int> mask = affinity_of_this_thread();
    const std::lock_guard lock(mutex);
    cpus.insert(cpu);
    nodes.insert(this_thread_numa_node());
    threads.insert(std::this_thread::get_id());
    masks.insert(mask);
  }
};

}  // namespace

TEST_CASE("a parallel_for inside an arena runs only on that node's CPU") {
  const std::vector<int> cpus = two_cpus();
  if (cpus.empty()) return;
  numa_arenas arenas(two_nodes(cpus), plan_of({1, 1}));
  REQUIRE(arenas.size() == 2);
  CHECK(arenas.node_of(0) == 0);
  CHECK(arenas.node_of(1) == 1);
  CHECK(arenas.threads_of(0) == 1);
  CHECK(arenas.arena(1).max_concurrency() == 1);
  for (std::size_t a = 0; a < 2; ++a) {
    observed seen;
    arenas.execute(a, [&] {
      tbb::parallel_for(0, 2000, [&](int) {
        seen.record();
        std::this_thread::yield();  // gives the scheduler a chance to move us, were we not pinned
      });
    });
    CHECK(seen.cpus == std::set<int>{cpus[a]});
    CHECK(seen.masks == std::set<std::vector<int>>{{cpus[a]}});
    CHECK(seen.nodes == std::set<int>{static_cast<int>(a)});
  }
  CHECK(arenas.pinning_failures() == 0);
}

TEST_CASE("the workers of every arena are pinned too, all running at once") {
  const std::vector<int> cpus = two_cpus();
  if (cpus.empty()) return;
  // Two threads per one-CPU node, all four at once, none of them the caller (which waits outside): four TBB
  // workers, more than TBB keeps by default on a machine of two CPUs, so numa_arenas must raise the limit.
  numa_arenas arenas(two_nodes(cpus), plan_of({2, 2}));
  std::atomic<int> started{0};
  std::atomic<int> met{0};
  observed seen[2];
  arenas.run_on_all([&](std::size_t a) {
    tbb::parallel_for(
        tbb::blocked_range<int>(0, 2, 1),
        [&](const tbb::blocked_range<int>&) {
          started.fetch_add(1);
          if (wait_until([&] { return started.load() == 4; })) met.fetch_add(1);
          seen[a].record();
        },
        tbb::simple_partitioner());
  });
  CHECK(met.load() == 4);
  for (std::size_t a = 0; a < 2; ++a) {
    CHECK(seen[a].threads.size() == 2);
    CHECK(seen[a].cpus == std::set<int>{cpus[a]});
    CHECK(seen[a].masks == std::set<std::vector<int>>{{cpus[a]}});
    CHECK(seen[a].nodes == std::set<int>{static_cast<int>(a)});
  }
}

TEST_CASE("run_on_all runs every arena at the same time on its node") {
  const std::vector<int> cpus = two_cpus();
  if (cpus.empty()) return;
  numa_arenas arenas(two_nodes(cpus), plan_of({1, 1}));
  std::atomic<int> arrived{0};
  std::atomic<int> met{0};
  observed seen[2];
  arenas.run_on_all([&](std::size_t a) {
    arrived.fetch_add(1);
    // Each waits for the other: run one after the other, the first would time out.
    if (wait_until([&] { return arrived.load() == 2; })) met.fetch_add(1);
    seen[a].record();
  });
  CHECK(met.load() == 2);
  for (std::size_t a = 0; a < 2; ++a) {
    CHECK(seen[a].cpus == std::set<int>{cpus[a]});
    CHECK(seen[a].nodes == std::set<int>{static_cast<int>(a)});
  }
  CHECK(this_thread_numa_node() == -1);
}

TEST_CASE("execute returns f's result and restores the calling thread") {
  const std::vector<int> cpus = two_cpus();
  if (cpus.empty()) return;
  numa_arenas arenas(two_nodes(cpus), plan_of({1, 1}));
  const std::vector<int> before = affinity_of_this_thread();
  const std::thread::id caller = std::this_thread::get_id();
  REQUIRE(this_thread_numa_node() == -1);

  std::vector<int> inside_mask;
  int inside_node = -2;
  bool on_caller = false;
  const int answer = arenas.execute(1, [&] {
    inside_mask = affinity_of_this_thread();
    inside_node = this_thread_numa_node();
    on_caller = std::this_thread::get_id() == caller;
    return 42;
  });
  CHECK(answer == 42);
  CHECK(on_caller);
  CHECK(inside_mask == std::vector<int>{cpus[1]});
  CHECK(inside_node == 1);
  CHECK(affinity_of_this_thread() == before);
  CHECK(this_thread_numa_node() == -1);

  int value = 0;
  int& ref = arenas.execute(0, [&]() -> int& { return value; });
  CHECK(&ref == &value);

  // Inside an arena, the process's CPUs are still the ones it had before pinning.
  CHECK(arenas.execute(0, [] { return cputrain::process_allowed_cpus(); }) == before);
}

TEST_CASE("execute nested in another arena switches node and switches back") {
  const std::vector<int> cpus = two_cpus();
  if (cpus.empty()) return;
  numa_arenas arenas(two_nodes(cpus), plan_of({1, 1}));
  const std::vector<int> before = affinity_of_this_thread();
  int inner_node = -2;
  std::vector<int> inner_mask;
  int outer_node_after = -2;
  std::vector<int> outer_mask_after;
  arenas.execute(0, [&] {
    arenas.execute(1, [&] {
      inner_node = this_thread_numa_node();
      inner_mask = affinity_of_this_thread();
    });
    outer_node_after = this_thread_numa_node();
    outer_mask_after = affinity_of_this_thread();
  });
  CHECK(inner_node == 1);
  CHECK(inner_mask == std::vector<int>{cpus[1]});
  CHECK(outer_node_after == 0);
  CHECK(outer_mask_after == std::vector<int>{cpus[0]});
  CHECK(affinity_of_this_thread() == before);
  CHECK(this_thread_numa_node() == -1);
}

TEST_CASE("exceptions propagate from execute and run_on_all") {
  const std::vector<int> cpus = two_cpus();
  if (cpus.empty()) return;
  numa_arenas arenas(two_nodes(cpus), plan_of({1, 1}));
  const std::vector<int> before = affinity_of_this_thread();
  CHECK_THROWS_WITH(arenas.execute(0, []() -> int { throw std::runtime_error("boom in arena 0"); }), "boom in arena 0");
  CHECK(affinity_of_this_thread() == before);
  CHECK(this_thread_numa_node() == -1);

  std::atomic<int> calls{0};
  CHECK_THROWS_WITH(arenas.run_on_all([&](std::size_t a) {
    calls.fetch_add(1);
    if (a == 1) throw std::runtime_error("arena 1 failed");
  }),
                    "arena 1 failed");
  CHECK(calls.load() == 2);  // the other arena still ran

  CHECK_THROWS_WITH(arenas.run_on_all([](std::size_t a) { throw std::runtime_error("arena " + std::to_string(a)); }),
                    "arena 0");  // the lowest arena's
  // Still usable afterwards.
  std::atomic<int> after{0};
  arenas.run_on_all([&](std::size_t) { after.fetch_add(1); });
  CHECK(after.load() == 2);
}

TEST_CASE("numa_arenas rejects bad indices, mismatched plans and CPUs it may not use") {
  const std::vector<int> cpus = two_cpus();
  if (cpus.empty()) return;
  const topology topo = two_nodes(cpus);
  {
    numa_arenas arenas(topo, plan_of({1, 1}));
    CHECK_THROWS_AS(arenas.execute(2, [] {}), cputrain::usage_error);
    CHECK_THROWS_AS(arenas.node_of(5), cputrain::usage_error);
    CHECK_THROWS_AS(arenas.threads_of(2), cputrain::usage_error);
    CHECK_THROWS_AS(arenas.arena(2), cputrain::usage_error);
    CHECK_THROWS_WITH(arenas.execute(0, [&] { arenas.run_on_all([](std::size_t) {}); }),
                      Catch::Contains("inside the arena of node 0"));
  }
  CHECK_THROWS_AS(numa_arenas(topo, plan_of({1})), cputrain::usage_error);
  CHECK_THROWS_AS(numa_arenas(topo, plan_of({1, -1})), cputrain::usage_error);
  CHECK_THROWS_AS(numa_arenas(topo, plan_of({0, 0})), cputrain::usage_error);

  const std::vector<int> allowed = affinity_of_this_thread();
  const int foreign = allowed.back() + 1;
  const topology elsewhere = topology::from_nodes({{0, {cpus[0]}, 1, 0}, {1, {foreign}, 1, 0}});
  CHECK_THROWS_WITH(numa_arenas(elsewhere, plan_of({1, 1})),
                    Catch::Contains("CPUs " + std::to_string(foreign) + " of node 1"));
  CHECK_THROWS_AS(numa_arenas(elsewhere, plan_of({1, 1})), cputrain::topology_error);
  // A node given no thread gets no arena, so its CPUs do not matter.
  numa_arenas only_first(elsewhere, plan_of({1, 0}));
  REQUIRE(only_first.size() == 1);
  CHECK(only_first.node_of(0) == 0);
}

TEST_CASE("TBB workers are unpinned once they leave the arenas") {
  const std::vector<int> cpus = two_cpus();
  if (cpus.empty()) return;
  {
    numa_arenas arenas(two_nodes(cpus), plan_of({2, 2}));
    // Four workers at once in the arenas, each pinned to one CPU.
    std::atomic<int> ran{0};
    std::atomic<int> met{0};
    arenas.run_on_all([&](std::size_t) {
      tbb::parallel_for(
          tbb::blocked_range<int>(0, 2, 1),
          [&](const tbb::blocked_range<int>&) {
            ran.fetch_add(1);
            if (wait_until([&] { return ran.load() == 4; })) met.fetch_add(1);
          },
          tbb::simple_partitioner());
    });
    CHECK(met.load() == 4);
  }
  // Now the same workers serve an arena that belongs to no node: none may still be pinned.
  const std::vector<int>& process = initial_affinity;
  tbb::global_control enough(tbb::global_control::max_allowed_parallelism, 6);
  tbb::task_arena plain(5);
  observed seen;
  std::atomic<int> ran{0};
  plain.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int>(0, 5, 1),
        [&](const tbb::blocked_range<int>&) {
          ran.fetch_add(1);
          wait_until([&] { return ran.load() == 5; }, std::chrono::seconds(2));
          seen.record();
        },
        tbb::simple_partitioner());
  });
  INFO("threads seen: " << seen.threads.size());
  CHECK(seen.threads.size() >= 2);
  CHECK(seen.masks == std::set<std::vector<int>>{process});
  CHECK(seen.nodes == std::set<int>{-1});
}

// Why the destructor waits for TBB to free each arena: until then a worker may still be inside, or on its way in
// or out, holding TBB's record of the pinning observer, which outlives the process if it ends first (the
// LeakSanitizer report this test was written for). A second observer on the same arenas sees what TBB does:
// once ~numa_arenas returned, TBB must have told it of every thread's exit, and it unregisters it as it frees the
// arena. That is one loop over the arena's observers, ours first (registered first): the destructor may return
// between the two, so the second gets a moment (at most 5 s, a starved process) to be let go. Many rounds, since
// the old order left a worker behind only in some of them.
TEST_CASE("when numa_arenas is gone TBB has freed its arenas, every thread told of its exit") {
  const std::vector<int> cpus = two_cpus();
  if (cpus.empty()) return;
  struct counting_observer final : tbb::task_scheduler_observer {
    explicit counting_observer(tbb::task_arena& a) : tbb::task_scheduler_observer(a) { observe(true); }
    ~counting_observer() override { observe(false); }
    void on_scheduler_entry(bool) override { inside.fetch_add(1); }
    void on_scheduler_exit(bool) override { inside.fetch_sub(1); }
    std::atomic<int> inside{0};
  };
  int rounds_left_observing = 0;
  int threads_left_inside = 0;
  int rounds_released_after_return = 0;  // TBB was still going through the arena's observers: expected now and then
  double slowest_destructor = 0;         // seconds
  for (int round = 0; round < 50; ++round) {
    // Odd rounds as the test above that LeakSanitizer failed: one thread per arena, the caller inside.
    const bool one_each = round % 2 == 1;
    auto arenas = std::make_unique<numa_arenas>(two_nodes(cpus), one_each ? plan_of({1, 1}) : plan_of({2, 2}));
    std::vector<std::unique_ptr<counting_observer>> watchers;
    for (std::size_t a = 0; a < arenas->size(); ++a) {
      watchers.push_back(std::make_unique<counting_observer>(arenas->arena(a)));
    }
    std::atomic<int> ran{0};
    const auto work = [&](std::size_t) {
      tbb::parallel_for(tbb::blocked_range<int>(0, 64, 1), [&](const tbb::blocked_range<int>&) {
        ran.fetch_add(1);
        std::this_thread::yield();
      });
    };
    if (one_each) {
      for (std::size_t a = 0; a < arenas->size(); ++a) arenas->execute(a, [&] { work(a); });
    } else {
      arenas->run_on_all(work);
    }
    REQUIRE(ran.load() == 128);
    const auto destroying = std::chrono::steady_clock::now();
    arenas.reset();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - destroying;
    slowest_destructor = std::max(slowest_destructor, took.count());
    for (const auto& w : watchers) threads_left_inside += w->inside.load();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (const auto& w : watchers) {
      if (w->is_observing()) ++rounds_released_after_return;
      while (w->is_observing() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      if (w->is_observing()) ++rounds_left_observing;
    }
  }
  // A failure says whether the destructor gave up waiting (the slowest near its bound) or returned early.
  CAPTURE(slowest_destructor, rounds_released_after_return);
  CHECK(threads_left_inside == 0);
  CHECK(rounds_left_observing == 0);
}

// The protocol numa_arenas' destructor falls back on when TBB does not free an arena in time, step by step: close() waits for the thread inside to leave (and
// be restored), and a thread entering after close() began is not pinned, since no exit would restore it.
TEST_CASE("a closing pinning observer waits for the thread inside and pins none that enter later") {
  const std::vector<int> cpus = two_cpus();
  if (cpus.empty()) return;
  tbb::task_arena arena(1, 0);
  arena.initialize();
  cputrain::detail::node_pinning_observer observer(arena, numa_node{1, {cpus[1]}, 1, 0});

  std::atomic<bool> entered{false};
  std::atomic<bool> release{false};
  std::vector<int> mask_inside;
  std::vector<int> mask_after;
  int node_inside = -2;
  std::thread inside([&] {
    arena.execute([&] {
      mask_inside = affinity_of_this_thread();
      node_inside = this_thread_numa_node();
      entered = true;
      wait_until([&] { return release.load(); });
    });
    mask_after = affinity_of_this_thread();
  });
  REQUIRE(wait_until([&] { return entered.load(); }));
  CHECK(observer.inside() == 1);
  std::atomic<bool> closed{false};
  std::thread closer([&] { closed = observer.close(std::chrono::steady_clock::now() + std::chrono::seconds(20)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(closed.load());  // still waiting for the thread inside
  release = true;
  closer.join();
  inside.join();
  CHECK(closed.load());
  CHECK(mask_inside == std::vector<int>{cpus[1]});
  CHECK(node_inside == 1);
  CHECK(mask_after == initial_affinity);

  std::vector<int> mask_late;
  int node_late = -2;
  std::thread late([&] {
    arena.execute([&] {
      mask_late = affinity_of_this_thread();
      node_late = this_thread_numa_node();
    });
  });
  late.join();
  CHECK(mask_late == initial_affinity);
  CHECK(node_late == -1);
  CHECK(observer.inside() == 0);
  CHECK(observer.failures() == 0);
}

// Run by tests/machine/CMakeLists.txt with HWLOC_SYNTHETIC="package:1 numa:2 core:1 pu:1" HWLOC_THISSYSTEM=1; the
// two CPUs are the first two of this process's mask (support/two_simulated_nodes.hpp).
TEST_CASE("arenas and numa_local on a machine hwloc simulates with two NUMA nodes", "[.hwloc-synthetic]") {
#if CPUTRAIN_HAVE_HWLOC
  const cputrain::test::two_simulated_nodes machine;
  const std::vector<int>& cpus = machine.cpus();
  if (cpus.empty()) return;  // reported skipped
  INFO("simulated CPUs " << cpus[0] << " and " << cpus[1]);
  const topology topo = topology::detect();
  REQUIRE(topo.nodes().size() == 2);
  numa_arenas arenas(topo, cputrain::plan_threads(topo));
  REQUIRE(arenas.size() == 2);
  observed seen[2];
  arenas.run_on_all([&](std::size_t a) { tbb::parallel_for(0, 200, [&](int) { seen[a].record(); }); });
  CHECK(seen[0].cpus == std::set<int>{cpus[0]});
  CHECK(seen[0].nodes == std::set<int>{0});
  CHECK(seen[1].cpus == std::set<int>{cpus[1]});
  CHECK(seen[1].nodes == std::set<int>{1});

  using cputrain::alloc::numa_local;
  using cputrain::alloc::placement;
  constexpr std::size_t mib = 1 << 20;
  // Binding is real: memory can be bound to node 1 only where the kernel has a node 1 this process may use (a
  // two-node machine); on a one-node machine it is left to first touch.
  const bool kernel_has_node_1 = memory_nodes_allowed().count(1) != 0;
  INFO("the kernel " << (kernel_has_node_1 ? "has" : "has no") << " NUMA node 1 for this process");
  placement how = placement::heap;
  void* on_1 = numa_local::allocate_bytes_on(mib, 1, &how);
  CHECK(how == (kernel_has_node_1 ? placement::bound : placement::first_touch));
  void* on_0 = numa_local::allocate_bytes_on(mib, 0, &how);
  CHECK(how == placement::bound);

  // allocate_bytes places by the arena it is called in.
  hwloc_topology_t hw = nullptr;
  REQUIRE(hwloc_topology_init(&hw) == 0);
  REQUIRE(hwloc_topology_load(hw) == 0);
  hwloc_bitmap_t nodeset = hwloc_bitmap_alloc();
  const auto policy_of = [&](void* p) {
    hwloc_membind_policy_t policy{};
    REQUIRE(hwloc_get_area_membind(hw, p, mib, nodeset, &policy, HWLOC_MEMBIND_BYNODESET) == 0);
    return policy;
  };
  void* from_arena_0 = arenas.execute(0, [] { return numa_local::allocate_bytes(mib); });
  CHECK(policy_of(from_arena_0) == HWLOC_MEMBIND_BIND);
  CHECK(hwloc_bitmap_first(nodeset) == 0);
  CHECK(hwloc_bitmap_weight(nodeset) == 1);
  CHECK(policy_of(on_0) == HWLOC_MEMBIND_BIND);
  if (kernel_has_node_1) {
    CHECK(policy_of(on_1) == HWLOC_MEMBIND_BIND);
    CHECK(hwloc_bitmap_first(nodeset) == 1);
  } else {
    CHECK(policy_of(on_1) != HWLOC_MEMBIND_BIND);
  }
  hwloc_bitmap_free(nodeset);
  hwloc_topology_destroy(hw);
  for (void* p : {on_0, on_1, from_arena_0}) {
    static_cast<char*>(p)[mib - 1] = 1;
    numa_local::deallocate_bytes(p, mib);
  }
#else
  CPUTRAIN_SKIP("cputrain was built without hwloc, which simulates the two NUMA nodes");
#endif
}

}  // namespace arenas_test
