// cputrain::this_thread_numa_node() — which NUMA node's arena the calling thread is working in, so code deep in a
// kernel or an allocator (alloc::numa_local) can place memory on the node that will use it without passing the
// node down every call chain. numa_arenas (machine/arenas.hpp) sets it for every thread that enters one of its arenas.
#pragma once

#include <vector>

namespace cputrain {

namespace detail {

/// What a thread looked like before cputrain pinned it to a node, so leaving the arena can put it back.
struct saved_thread_binding {
  std::vector<int> cpus;  // the thread's affinity mask before pinning; empty when it could not be pinned
  int numa_node;          // this_thread_numa_node() before pinning
  const void* owner;      // what pushed it: only its owner pops it, so a failed push cannot unbalance the stack
};

// A stack, not a single value: a thread inside one arena may call another arena's execute(), and TBB notifies
// the inner arena's entry and exit in between those of the outer one.
inline thread_local std::vector<saved_thread_binding> thread_binding_stack;
inline thread_local int thread_numa_node = -1;

}  // namespace detail

/// The os_index of the NUMA node whose numa_arenas arena the calling thread is working in; -1 outside them.
inline int this_thread_numa_node() noexcept { return detail::thread_numa_node; }

}  // namespace cputrain
