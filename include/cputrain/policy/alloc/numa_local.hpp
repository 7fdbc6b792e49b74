// cputrain::alloc::numa_local — an allocator policy that puts memory on the NUMA node of the arena allocating it
// (this_thread_numa_node()), so each node's weights, activations and gradients sit next to the cores that use them.
// Large blocks are fresh anonymous mappings bound to the node with hwloc when it is available; where binding is
// impossible (no hwloc, a simulated node) they are left to first touch, which works because arena threads are
// pinned. Small blocks come from the C++ heap: placing a few bytes is not worth a system call.
#pragma once

#include "cputrain/machine/current_node.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <limits>
#include <memory>
#include <new>
#include <string_view>

#include "cputrain/machine/topology.hpp"
#include "cputrain/policy/alloc/allocator_policy.hpp"

namespace cputrain::alloc {

/// Where an allocation's memory will come from.
enum class placement {
  /// bound to the node: its pages come from that node, whichever thread touches them first
  bound,
  /// fresh pages, each placed on the node of the thread that first writes it
  first_touch,
  /// below numa_local::mmap_threshold: the C++ heap's memory, wherever that lies
  heap,
};

namespace detail::numa_local_impl {

inline std::size_t page_size() noexcept {
  static const std::size_t size = [] {
    const long bytes = sysconf(_SC_PAGESIZE);
    return bytes > 0 ? static_cast<std::size_t>(bytes) : std::size_t{4096};
  }();
  return size;
}

/// `bytes` rounded up to whole pages; 0 when that does not fit in a size_t.
inline std::size_t mapping_length(std::size_t bytes) noexcept {
  const std::size_t page = page_size();
  if (bytes > std::numeric_limits<std::size_t>::max() - (page - 1)) return 0;
  return (bytes + page - 1) / page * page;
}

#if CPUTRAIN_HAVE_HWLOC
/// The process's hwloc topology for memory binding, loaded once on first use and destroyed at exit; nullptr when
/// hwloc cannot load one (then memory is left to first touch).
inline hwloc_topology_t membind_topology() noexcept {
  static const std::unique_ptr<cputrain::detail::topo::hwloc_topology_owner> owner =
      []() -> std::unique_ptr<cputrain::detail::topo::hwloc_topology_owner> {
    try {
      return std::make_unique<cputrain::detail::topo::hwloc_topology_owner>();
    } catch (...) {
      return nullptr;
    }
  }();
  return owner ? owner->get() : nullptr;
}

inline bool bind_to_node(void* p, std::size_t length, int node_os_index) noexcept {
  const hwloc_topology_t topology = membind_topology();
  if (topology == nullptr) return false;
  hwloc_bitmap_t nodeset = hwloc_bitmap_alloc();
  if (nodeset == nullptr) return false;
  hwloc_bitmap_only(nodeset, static_cast<unsigned>(node_os_index));
  // BIND without HWLOC_MEMBIND_STRICT is Linux's MPOL_PREFERRED: pages go to the node while it has room and
  // spill to another node when it is full, rather than failing the page fault (MPOL_BIND would OOM-kill).
  const int status = hwloc_set_area_membind(topology, p, length, nodeset, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET);
  hwloc_bitmap_free(nodeset);
  return status == 0;
}
#endif

}  // namespace detail::numa_local_impl

struct numa_local {
  static constexpr std::string_view name = "numa_local";
  static constexpr std::size_t alignment = 64;
  /// From this size on, allocations are page-aligned anonymous mappings that can be placed; below it, heap memory.
  /// deallocate_bytes tells the two apart by the same rule, from the size alone.
  static constexpr std::size_t mmap_threshold = 64 * 1024;

  /// On the node of this_thread_numa_node(), or left to first touch outside the arenas.
  static void* allocate_bytes(std::size_t bytes) { return allocate_bytes_on(bytes, this_thread_numa_node()); }

  /// `bytes` placed on NUMA node `node_os_index` (first touch when negative). Never fails because the node cannot
  /// be bound to (no hwloc, a node the kernel does not have): the memory is then left to first touch, and `how`
  /// says which happened. nullptr for 0 bytes.
  /// @throws std::bad_alloc when memory runs out.
  static void* allocate_bytes_on(std::size_t bytes, [[maybe_unused]] int node_os_index, placement* how = nullptr) {
    if (bytes < mmap_threshold) {
      if (how != nullptr) *how = placement::heap;
      if (bytes == 0) return nullptr;
      return ::operator new(bytes, std::align_val_t{alignment});
    }
    const std::size_t length = detail::numa_local_impl::mapping_length(bytes);
    if (length == 0) throw std::bad_alloc();
    // Untouched pages: none is placed until written, so binding (or the writer's node) decides where it goes.
    void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    placement got = placement::first_touch;
#if CPUTRAIN_HAVE_HWLOC
    if (node_os_index >= 0 && detail::numa_local_impl::bind_to_node(p, length, node_os_index)) got = placement::bound;
#endif
    if (how != nullptr) *how = got;
    return p;
  }

  static void deallocate_bytes(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    if (bytes < mmap_threshold) {
      // Unsized: clang declares the sized aligned form only with -fsized-deallocation.
      ::operator delete(p, std::align_val_t{alignment});
    } else {
      munmap(p, detail::numa_local_impl::mapping_length(bytes));
    }
  }
};
static_assert(allocator_policy<numa_local>);

}  // namespace cputrain::alloc
