#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "cputrain/machine/arenas.hpp"
#include "cputrain/policy/alloc/numa_local.hpp"

#if CPUTRAIN_HAVE_HWLOC
#include <hwloc.h>
#endif

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace numa_local_test {

using cputrain::alloc::numa_local;
using cputrain::alloc::placement;

static_assert(cputrain::alloc::allocator_policy<numa_local>);
static_assert(numa_local::name == "numa_local");
static_assert(numa_local::alignment == 64);

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// A node number the kernel does not have.
int missing_node() {
  int node = 7;
  while (std::filesystem::exists("/sys/devices/system/node/node" + std::to_string(node))) ++node;
  return node;
}

#if CPUTRAIN_HAVE_HWLOC
// The memory policy the kernel holds for [p, p + bytes), read back through hwloc.
struct membind {
  hwloc_membind_policy_t policy;
  std::vector<int> nodes;
};

membind membind_of(void* p, std::size_t bytes) {
  hwloc_topology_t topo = nullptr;
  REQUIRE(hwloc_topology_init(&topo) == 0);
  REQUIRE(hwloc_topology_load(topo) == 0);
  hwloc_bitmap_t nodeset = hwloc_bitmap_alloc();
  membind result{};
  const int status = hwloc_get_area_membind(topo, p, bytes, nodeset, &result.policy, HWLOC_MEMBIND_BYNODESET);
  for (int n = hwloc_bitmap_first(nodeset); n >= 0; n = hwloc_bitmap_next(nodeset, n)) result.nodes.push_back(n);
  hwloc_bitmap_free(nodeset);
  hwloc_topology_destroy(topo);
  REQUIRE(status == 0);
  return result;
}
#endif

}  // namespace

TEST_CASE("numa_local gives aligned, writable memory of every size") {
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  for (const std::size_t bytes :
       {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{1000}, numa_local::mmap_threshold - 1,
        numa_local::mmap_threshold, numa_local::mmap_threshold + 1, 3 * std::size_t{4096} + 1, mib}) {
    INFO("bytes: " << bytes);
    auto* p = static_cast<unsigned char*>(numa_local::allocate_bytes(bytes));
    REQUIRE(p != nullptr);
    CHECK(address(p) % numa_local::alignment == 0);
    if (bytes >= numa_local::mmap_threshold) CHECK(address(p) % page == 0);
    std::memset(p, 0xA5, bytes);
    CHECK(p[0] == 0xA5);
    CHECK(p[bytes - 1] == 0xA5);
    numa_local::deallocate_bytes(p, bytes);
  }
}

TEST_CASE("numa_local allocates nothing for zero bytes") {
  CHECK(numa_local::allocate_bytes(0) == nullptr);
  placement how = placement::bound;
  CHECK(numa_local::allocate_bytes_on(0, 0, &how) == nullptr);
  numa_local::deallocate_bytes(nullptr, 0);
  numa_local::deallocate_bytes(nullptr, mib);
}

TEST_CASE("numa_local reports where memory comes from") {
  placement how = placement::bound;
  void* small = numa_local::allocate_bytes_on(256, 0, &how);
  CHECK(how == placement::heap);
  numa_local::deallocate_bytes(small, 256);

  void* nowhere = numa_local::allocate_bytes_on(mib, missing_node(), &how);
  CHECK(how == placement::first_touch);  // binding to a node the kernel lacks cannot work; the memory is still good
  static_cast<char*>(nowhere)[0] = 1;
  numa_local::deallocate_bytes(nowhere, mib);

  void* unplaced = numa_local::allocate_bytes_on(mib, -1, &how);
  CHECK(how == placement::first_touch);
  numa_local::deallocate_bytes(unplaced, mib);

  const int node = cputrain::topology::detect().nodes().front().os_index;
  void* local = numa_local::allocate_bytes_on(mib, node, &how);
#if CPUTRAIN_HAVE_HWLOC
  CHECK(how == placement::bound);
  const membind bound = membind_of(local, mib);
  CHECK(bound.policy == HWLOC_MEMBIND_BIND);
  CHECK(bound.nodes == std::vector<int>{node});
#else
  CHECK(how == placement::first_touch);
#endif
  static_cast<char*>(local)[mib - 1] = 1;
  numa_local::deallocate_bytes(local, mib);
}

TEST_CASE("numa_local::allocate_bytes places memory on the node of the calling arena") {
  const cputrain::topology topo = cputrain::topology::detect();
  cputrain::numa_arenas arenas(topo, cputrain::plan_threads(topo, {1, false}));
  void* inside = arenas.execute(0, [] { return numa_local::allocate_bytes(mib); });
  void* outside = numa_local::allocate_bytes(mib);
#if CPUTRAIN_HAVE_HWLOC
  const membind in_arena = membind_of(inside, mib);
  CHECK(in_arena.policy == HWLOC_MEMBIND_BIND);
  CHECK(in_arena.nodes == std::vector<int>{arenas.node_of(0)});
  CHECK(membind_of(outside, mib).policy != HWLOC_MEMBIND_BIND);
#endif
  numa_local::deallocate_bytes(inside, mib);
  numa_local::deallocate_bytes(outside, mib);
}

TEST_CASE("numa_local throws std::bad_alloc when memory runs out") {
  CHECK_THROWS_AS(numa_local::allocate_bytes(std::numeric_limits<std::size_t>::max() - 16), std::bad_alloc);
  CHECK_THROWS_AS(numa_local::allocate_bytes_on(std::size_t{1} << 62, 0), std::bad_alloc);
}

TEST_CASE("numa_local works inside standard containers") {
  using float_vector = std::vector<float, cputrain::alloc::allocator<float, numa_local>>;
  float_vector weights(mib, 0.5f);  // 4 MiB: mapped
  CHECK(address(weights.data()) % numa_local::alignment == 0);
  CHECK(weights[mib - 1] == 0.5f);

  // Growing from heap-sized to mapped blocks frees each by its own kind (AddressSanitizer would catch a mix-up).
  std::vector<char, cputrain::alloc::allocator<char, numa_local>> bytes;
  for (std::size_t i = 0; i < 4 * numa_local::mmap_threshold; ++i) bytes.push_back(static_cast<char>(i));
  CHECK(bytes.size() == 4 * numa_local::mmap_threshold);
  CHECK(bytes[numa_local::mmap_threshold + 5] == static_cast<char>(numa_local::mmap_threshold + 5));
  float_vector copy = weights;
  CHECK(copy == weights);
}

}  // namespace numa_local_test
