// cputrain::numa_arenas — one oneTBB task_arena per NUMA node, every thread that works in an arena pinned to that
// node's CPUs, so a node's data is computed on by the cores next to its memory. execute() runs work in one arena;
// run_on_all() runs a function in every arena at once (a per-node shard of a GEMM, a per-node gradient slice).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/machine/current_node.hpp"
#include "cputrain/machine/thread_plan.hpp"
#include "cputrain/machine/topology.hpp"

namespace cputrain {

namespace detail {

/// Pins every thread that enters its arena to one node's CPUs and sets this_thread_numa_node(); puts both back
/// when the thread leaves, because TBB's workers are shared by all arenas of the process and one leaving ours
/// may next serve an arena that is not tied to a node.
class node_pinning_observer final : public tbb::task_scheduler_observer {
 public:
  node_pinning_observer(tbb::task_arena& arena, const numa_node& node)
      : tbb::task_scheduler_observer(arena), cpus_(node.cpus), node_(node.os_index) {
    observe(true);
  }
  // Stop callbacks before this object's members go, not in the base destructor after they went.
  ~node_pinning_observer() override { observe(false); }
  node_pinning_observer(const node_pinning_observer&) = delete;
  node_pinning_observer& operator=(const node_pinning_observer&) = delete;

  void on_scheduler_entry(bool /*is_worker*/) noexcept override {
    // Counted and closing are one word. Every entry is counted, so close() waits for every thread TBB has told us
    // of to leave (a worker still inside when the process ends would keep TBB's record of this observer alive);
    // one that enters after close() began is not pinned, since its exit may no longer be observed.
    const bool closing = (state_.fetch_add(1, std::memory_order_acq_rel) & closing_bit) != 0;
    try {
      thread_binding_stack.push_back({{}, thread_numa_node, this});
    } catch (...) {  // std::bad_alloc: nothing pushed, so the thread stays as it was and on_scheduler_exit skips it
      failures_.fetch_add(1, std::memory_order_relaxed);
      state_.fetch_sub(1, std::memory_order_release);
      return;
    }
    if (closing) return;
    saved_thread_binding& saved = thread_binding_stack.back();
    try {
      std::vector<int> previous;
      if (topo::read_thread_affinity(previous) == 0 && topo::pin_this_thread(cpus_) == 0) {
        saved.cpus = std::move(previous);
      } else {
        failures_.fetch_add(1, std::memory_order_relaxed);
      }
    } catch (...) {  // std::bad_alloc reading the mask: not pinned, nothing to restore
      failures_.fetch_add(1, std::memory_order_relaxed);
    }
    thread_numa_node = node_;
  }

  void on_scheduler_exit(bool /*is_worker*/) noexcept override {
    // Not ours on top: the entry could not record itself (no memory), so there is nothing to undo.
    if (thread_binding_stack.empty() || thread_binding_stack.back().owner != this) return;
    saved_thread_binding& saved = thread_binding_stack.back();
    if (!saved.cpus.empty() && topo::pin_this_thread(saved.cpus) != 0) {
      failures_.fetch_add(1, std::memory_order_relaxed);
    }
    thread_numa_node = saved.numa_node;
    thread_binding_stack.pop_back();
    state_.fetch_sub(1, std::memory_order_release);
  }

  /// Waits, until `deadline`, for TBB to let go of this observer, which it does when it frees the arena: after
  /// the last thread left it and was told so (on_scheduler_exit), so none stays pinned and TBB keeps no record of
  /// the observer. Returns whether it did.
  bool wait_released(std::chrono::steady_clock::time_point deadline) const noexcept {
    while (is_observing() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return !is_observing();
  }

  /// The way out when TBB did not free the arena in time: pins no thread that enters from now on and waits, until
  /// `deadline`, for those inside to leave (and be restored), since after observe(false) TBB stops calling this
  /// observer, also for threads it has seen enter. Returns whether all left.
  bool close(std::chrono::steady_clock::time_point deadline) noexcept {
    state_.fetch_or(closing_bit, std::memory_order_acq_rel);
    while (inside() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return inside() == 0;
  }

  /// Threads now between entry and exit.
  int inside() const noexcept {
    return static_cast<int>(state_.load(std::memory_order_acquire) & ~closing_bit);
  }
  std::size_t failures() const noexcept { return failures_.load(std::memory_order_relaxed); }

 private:
  static constexpr unsigned closing_bit = 1U << 31;

  std::vector<int> cpus_;
  int node_;
  std::atomic<unsigned> state_{0};  // threads inside, plus closing_bit once close() began
  std::atomic<std::size_t> failures_{0};
};

}  // namespace detail

/// One tbb::task_arena per NUMA node that the plan gives threads, its threads pinned to the node.
///
/// Arenas are made with reserved_for_masters = 0: every slot can be taken by a TBB worker, so work enqueued into an
/// arena of one thread runs even while no external thread enters it (run_on_all relies on that). A thread calling
/// execute() takes a free slot and works in the arena itself; when all slots are busy TBB runs f on a worker of
/// the arena instead, which is pinned all the same.
///
/// No tbb::task_arena::constraints{numa_id}: pinning by our observer is the one mechanism. Constraints need
/// tbbbind (without it TBB silently ignores them) and number nodes as tbbbind's own hwloc sees them, not as our
/// topology (which may come from sysfs or from_nodes) does; with both, two observers would set each thread's
/// affinity in an order nobody chose.
class numa_arenas {
 public:
  /// @throws usage_error when the plan does not match the topology (size, a negative count, no thread at all).
  /// @throws topology_error when a node given threads lists CPUs outside process_allowed_cpus(), so pinning
  ///         cannot fail later inside TBB's callbacks.
  numa_arenas(const topology& topo, const thread_plan& plan);

  /// Drops each arena and waits (briefly) until TBB has freed it, so no thread stays pinned or inside.
  ///
  /// The order matters. Removing an observer (observe(false)) while a TBB worker is still in its arena, or on its
  /// way in or out, lets that worker keep TBB's record of the observer until it leaves the arena, which may be after
  /// the process ended (LeakSanitizer then reports the record as leaked; see docs/sanitizers.md). TBB frees an
  /// arena once nobody references it and its last thread has left, every exit reported to the observer, and only
  /// then unregisters the observer itself. So: terminate, wait for that, and only after a timeout remove by hand.
  /// The wait ends as soon as TBB lets go (microseconds when the process gets the CPU); its bound is generous
  /// because a process starved by a loaded machine can take seconds to get there (docs/sanitizers.md).
  ~numa_arenas();

  numa_arenas(const numa_arenas&) = delete;
  numa_arenas& operator=(const numa_arenas&) = delete;

  /// Number of arenas: the nodes the plan gives at least one thread, in topology order.
  std::size_t size() const noexcept { return slots_.size(); }
  /// os_index of the node of arena `i`.
  int node_of(std::size_t i) const { return at(i).node; }
  /// Threads (max_concurrency) of arena `i`.
  int threads_of(std::size_t i) const { return at(i).threads; }
  tbb::task_arena& arena(std::size_t i) { return *at(i).arena; }
  /// Threads that could not be pinned (or restored) since construction; 0 unless the CPUs went away.
  std::size_t pinning_failures() const noexcept {
    std::size_t sum = 0;
    for (const slot& s : slots_) sum += s.observer->failures();
    return sum;
  }

  /// Runs f() in arena `i` and returns what it returns; the thread running it is pinned to the node and sees
  /// this_thread_numa_node() == node_of(i), both restored afterwards. Exceptions from f propagate.
  /// @throws usage_error when `i` is out of range.
  template <class F>
  decltype(auto) execute(std::size_t i, F&& f) {
    tbb::task_arena& target = *at(i).arena;
    using result = std::invoke_result_t<F&>;
    if constexpr (std::is_reference_v<result>) {
      // task_arena::execute stores the result in a buffer, which cannot hold a reference: carry a pointer.
      auto* p = target.execute([&f] {
        auto&& r = f();
        return std::addressof(r);
      });
      return static_cast<result>(*p);
    } else {
      return target.execute(std::forward<F>(f));
    }
  }

  /// Calls f(i) for every arena i, all at the same time, each on a thread of its arena, and waits for all.
  /// f must be callable concurrently. After all returned, rethrows the exception of the lowest-numbered arena
  /// whose call threw. Must not be called from inside one of the arenas: the caller blocks.
  template <class F>
  void run_on_all(F&& f) {
    if (this_thread_numa_node() >= 0) {
      throw usage_error("cputrain::numa_arenas::run_on_all: called from inside the arena of node " +
                        std::to_string(this_thread_numa_node()) + "; it blocks its caller, call it from outside");
    }
    std::mutex mutex;
    std::condition_variable all_done;
    std::size_t pending = slots_.size();
    std::vector<std::exception_ptr> errors(slots_.size());
    const auto finish_one = [&] {
      const std::lock_guard lock(mutex);
      if (--pending == 0) all_done.notify_all();  // under the lock: the waiter cannot return and free it first
    };
    std::exception_ptr enqueue_error;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      try {
        slots_[i].arena->enqueue([&, i] {
          try {
            f(i);
          } catch (...) {
            errors[i] = std::current_exception();
          }
          finish_one();
        });
      } catch (...) {  // the tasks already enqueued use this frame: wait for them before leaving
        enqueue_error = std::current_exception();
        const std::lock_guard lock(mutex);
        pending -= slots_.size() - i;
        break;
      }
    }
    std::unique_lock lock(mutex);
    all_done.wait(lock, [&] { return pending == 0; });
    if (enqueue_error) std::rethrow_exception(enqueue_error);
    for (const std::exception_ptr& error : errors) {
      if (error) std::rethrow_exception(error);
    }
  }

 private:
  struct slot {
    int node = 0;
    int threads = 0;
    std::unique_ptr<tbb::task_arena> arena;
    std::unique_ptr<detail::node_pinning_observer> observer;
  };

  const slot& at(std::size_t i) const {
    if (i >= slots_.size()) {
      throw usage_error("cputrain::numa_arenas: no arena " + std::to_string(i) + " (there are " +
                        std::to_string(slots_.size()) + ")");
    }
    return slots_[i];
  }

  /// How long ~numa_arenas waits for TBB to free its arenas before it unregisters the observers itself.
  static constexpr std::chrono::seconds release_timeout{30};

  std::unique_ptr<tbb::global_control> parallelism_;
  std::vector<slot> slots_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS

CPUTRAIN_DECL numa_arenas::numa_arenas(const topology& topo, const thread_plan& plan) {
  const std::vector<numa_node>& nodes = topo.nodes();
  if (plan.threads_per_node.size() != nodes.size()) {
    throw usage_error("cputrain::numa_arenas: the thread plan has " + std::to_string(plan.threads_per_node.size()) +
                      " entries for a topology of " + std::to_string(nodes.size()) + " NUMA nodes");
  }
  const std::vector<int> allowed = process_allowed_cpus();
  int total = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const int threads = plan.threads_per_node[i];
    if (threads < 0) {
      throw usage_error("cputrain::numa_arenas: the thread plan gives node " + std::to_string(nodes[i].os_index) +
                        " " + std::to_string(threads) + " threads");
    }
    if (threads == 0) continue;
    std::vector<int> foreign;
    for (const int cpu : nodes[i].cpus) {
      if (!std::binary_search(allowed.begin(), allowed.end(), cpu)) foreign.push_back(cpu);
    }
    if (!foreign.empty()) {
      throw topology_error("cputrain::numa_arenas: CPUs " + format_cpulist(foreign) + " of node " +
                           std::to_string(nodes[i].os_index) + " are not in this process's affinity mask (" +
                           format_cpulist(allowed) + ")");
    }
    total += threads;
  }
  if (total == 0) throw usage_error("cputrain::numa_arenas: the thread plan gives no node a thread");

  // Workers are shared by all arenas; by default TBB keeps (hardware threads - 1) of them, fewer than the
  // arenas need at once when a plan oversubscribes or a node's arena must run while another's is busy.
  // Each arena can ask for `threads` workers, and the limit counts one external thread.
  const auto wanted = static_cast<std::size_t>(total) + 1;
  const std::size_t active = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  parallelism_ =
      std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, std::max(wanted, active));

  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (plan.threads_per_node[i] == 0) continue;
    slot s;
    s.node = nodes[i].os_index;
    s.threads = plan.threads_per_node[i];
    s.arena = std::make_unique<tbb::task_arena>(s.threads, /*reserved_for_masters=*/0);
    s.arena->initialize();
    s.observer = std::make_unique<detail::node_pinning_observer>(*s.arena, nodes[i]);
    slots_.push_back(std::move(s));
  }
}

CPUTRAIN_DECL numa_arenas::~numa_arenas() {
  for (slot& s : slots_) s.arena->terminate();
  const auto deadline = std::chrono::steady_clock::now() + release_timeout;
  for (slot& s : slots_) {
    if (!s.observer->wait_released(deadline)) s.observer->close(deadline + std::chrono::seconds(5));
  }
  for (slot& s : slots_) {
    s.observer.reset();
    s.arena.reset();
  }
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain
