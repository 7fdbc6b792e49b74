#include <catch2/catch.hpp>

#include <sched.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cputrain/machine/topology.hpp"
#include "support/skip.hpp"
#include "support/two_simulated_nodes.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace topology_test {

namespace fs = std::filesystem;
using cputrain::numa_node;
using cputrain::parse_cpulist;
using cputrain::topology;

namespace {

// A scratch directory that is removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "cputrain-topology-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// A fake /sys: node0 = CPUs 0-3 where 0/2 and 1/3 are SMT siblings (2 cores), named by thread_siblings_list;
// node1 = CPUs 4-7 named by core_id + physical_package_id: 4 (core 0, package 1), 5 (core 1, package 1),
// 6 and 7 (core 0, package 2) -> 3 cores, of which two share core_id 0 in different packages;
// node2 = memory only (empty cpulist).
void write_two_node_tree(const fs::path& sys) {
  const fs::path node = sys / "devices/system/node";
  write(node / "possible", "0-2\n");
  write(node / "online", "0-2\n");
  write(node / "node0/cpulist", "0-3\n");
  write(node / "node0/meminfo",
        "Node 0 MemTotal:       16303836 kB\nNode 0 MemFree:        1234 kB\nNode 0 MemUsed:        99 kB\n");
  write(node / "node1/cpulist", "4-7\n");
  write(node / "node2/cpulist", "\n");
  write(node / "node2/meminfo", "Node 2 MemTotal:       1048576 kB\n");
  const fs::path cpu = sys / "devices/system/cpu";
  for (const char* siblings : {"0,2", "1,3"}) {
    for (const int c : parse_cpulist(siblings, "test")) {
      write(cpu / ("cpu" + std::to_string(c)) / "topology/thread_siblings_list", std::string(siblings) + "\n");
    }
  }
  const int core[] = {0, 1, 0, 0};
  const int package[] = {1, 1, 2, 2};
  for (int i = 0; i < 4; ++i) {
    const fs::path dir = cpu / ("cpu" + std::to_string(4 + i)) / "topology";
    write(dir / "core_id", std::to_string(core[i]) + "\n");
    write(dir / "physical_package_id", std::to_string(package[i]) + "\n");
  }
}


std::string read_file(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("parse_cpulist reads the kernel's list format") {
  CHECK(parse_cpulist("0-3,8,10-11\n", "f") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
  CHECK(parse_cpulist("5", "f") == std::vector<int>{5});
  CHECK(parse_cpulist("0", "f") == std::vector<int>{0});
  CHECK(parse_cpulist("7-7", "f") == std::vector<int>{7});
  CHECK(parse_cpulist("3,1,1-2", "f") == std::vector<int>{1, 2, 3});
  CHECK(parse_cpulist("", "f").empty());
  CHECK(parse_cpulist("\n", "f").empty());
  CHECK(parse_cpulist("65535", "f") == std::vector<int>{65535});
}

TEST_CASE("parse_cpulist rejects malformed lists, naming where they came from") {
  for (const std::string bad : {"3-1", "a", "1,,2", "-1", "1-", "-", "1,", ",1", "1 2", "1-2-3", "+1", "0x1",
                                "99999999999", "70000", "0-70000", "1-a", "2:1"}) {
    INFO("list: " << bad);
    try {
      parse_cpulist(bad + "\n", "/sys/devices/system/node/node3/cpulist");
      FAIL("accepted");
    } catch (const cputrain::topology_error& e) {
      const std::string what = e.what();
      CHECK_THAT(what, Catch::Contains("/sys/devices/system/node/node3/cpulist"));
      CHECK_THAT(what, Catch::Contains("\"" + bad + "\""));
    }
  }
}

TEST_CASE("format_cpulist is the inverse of parse_cpulist") {
  CHECK(cputrain::format_cpulist(std::vector<int>{0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
  CHECK(cputrain::format_cpulist(std::vector<int>{11, 8, 10, 0}) == "0,8,10-11");
  CHECK(cputrain::format_cpulist(std::vector<int>{}).empty());
  CHECK(parse_cpulist(cputrain::format_cpulist(std::vector<int>{1, 4, 5, 6, 9}), "f") ==
        std::vector<int>{1, 4, 5, 6, 9});
}

TEST_CASE("from_sysfs counts SMT siblings and cores of several packages once") {
  const temp_dir dir;
  write_two_node_tree(dir.path());
  const topology topo = topology::from_sysfs(dir.path());
  CHECK(topo.source() == "sysfs");
  REQUIRE(topo.nodes().size() == 2);  // node2 has no CPU
  CHECK(topo.nodes()[0] == numa_node{0, {0, 1, 2, 3}, 2, std::uint64_t{16303836} * 1024});
  CHECK(topo.nodes()[1] == numa_node{1, {4, 5, 6, 7}, 3, 0});
  CHECK(topo.total_cores() == 5);
  CHECK(topo.describe() == "node 0: cpus 0-3 (2 cores), 15.5 GiB\nnode 1: cpus 4-7 (3 cores), memory unknown");
}

TEST_CASE("from_sysfs prefers core_cpus_list to core_id") {
  const temp_dir dir;
  write(dir.path() / "devices/system/node/node0/cpulist", "0-3");
  for (int c = 0; c < 4; ++c) {
    const fs::path topo_dir = dir.path() / "devices/system/cpu" / ("cpu" + std::to_string(c)) / "topology";
    write(topo_dir / "core_cpus_list", c < 2 ? "0-1\n" : std::to_string(c) + "\n");
    write(topo_dir / "core_id", "0\n");  // would make it 1 core
    write(topo_dir / "physical_package_id", "0\n");
  }
  const topology topo = topology::from_sysfs(dir.path());
  REQUIRE(topo.nodes().size() == 1);
  CHECK(topo.nodes()[0].cores == 3);
}

TEST_CASE("from_sysfs counts a CPU without topology files as its own core") {
  const temp_dir dir;
  write(dir.path() / "devices/system/node/node4/cpulist", "2-3");
  const topology topo = topology::from_sysfs(dir.path());
  REQUIRE(topo.nodes().size() == 1);
  CHECK(topo.nodes()[0] == numa_node{4, {2, 3}, 2, 0});
}

TEST_CASE("from_sysfs restricted to allowed CPUs counts cores among them and drops emptied nodes") {
  const temp_dir dir;
  write_two_node_tree(dir.path());
  const topology both = topology::from_sysfs(dir.path(), std::vector<int>{0, 2, 4});
  REQUIRE(both.nodes().size() == 2);
  CHECK(both.nodes()[0] == numa_node{0, {0, 2}, 1, std::uint64_t{16303836} * 1024});  // siblings: one core
  CHECK(both.nodes()[1] == numa_node{1, {4}, 1, 0});

  const topology second = topology::from_sysfs(dir.path(), std::vector<int>{5, 6, 7});
  REQUIRE(second.nodes().size() == 1);
  CHECK(second.nodes()[0] == numa_node{1, {5, 6, 7}, 2, 0});  // 6 and 7 are one core

  CHECK_THROWS_AS(topology::from_sysfs(dir.path(), std::vector<int>{100}), cputrain::topology_error);
}

TEST_CASE("from_sysfs names the file that is missing or malformed") {
  const temp_dir dir;
  const fs::path node = dir.path() / "devices/system/node";
  const auto error_of = [&] {
    try {
      topology::from_sysfs(dir.path());
    } catch (const cputrain::topology_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };

  SECTION("no node directory") { CHECK_THAT(error_of(), Catch::Contains(node.string())); }
  SECTION("a node without cpulist") {
    write_two_node_tree(dir.path());
    fs::remove(node / "node1/cpulist");
    CHECK_THAT(error_of(), Catch::Contains((node / "node1/cpulist").string()));
  }
  SECTION("a garbage cpulist") {
    write_two_node_tree(dir.path());
    write(node / "node1/cpulist", "4-x\n");
    const std::string what = error_of();
    CHECK_THAT(what, Catch::Contains((node / "node1/cpulist").string()));
    CHECK_THAT(what, Catch::Contains("4-x"));
  }
  SECTION("a garbage core_id") {
    write_two_node_tree(dir.path());
    const fs::path core_id = dir.path() / "devices/system/cpu/cpu5/topology/core_id";
    write(core_id, "one\n");
    const std::string what = error_of();
    CHECK_THAT(what, Catch::Contains(core_id.string()));
    CHECK_THAT(what, Catch::Contains("one"));
  }
  SECTION("a meminfo without MemTotal") {
    write_two_node_tree(dir.path());
    write(node / "node0/meminfo", "Node 0 MemFree: 12 kB\n");
    CHECK_THAT(error_of(), Catch::Contains((node / "node0/meminfo").string()));
  }
  SECTION("a CPU in two nodes") {
    write_two_node_tree(dir.path());
    write(node / "node1/cpulist", "3-7\n");
    CHECK_THAT(error_of(), Catch::Contains("CPU 3 is in node 0 and node 1"));
  }
  SECTION("an empty node directory") {
    fs::create_directories(node);
    CHECK_THAT(error_of(), Catch::Contains("lists no node"));
  }
}

TEST_CASE("detect_from_sysfs falls back to the affinity mask when the kernel has no NUMA information") {
  const temp_dir dir;
  write(dir.path() / "devices/system/cpu/cpu1/topology/core_cpus_list", "1,3\n");
  write(dir.path() / "devices/system/cpu/cpu3/topology/core_cpus_list", "1,3\n");
  const topology topo = topology::detect_from_sysfs(dir.path(), std::vector<int>{1, 3, 6});
  CHECK(topo.source() == "affinity");
  REQUIRE(topo.nodes().size() == 1);
  CHECK(topo.nodes()[0].os_index == 0);
  CHECK(topo.nodes()[0].cpus == std::vector<int>{1, 3, 6});
  CHECK(topo.nodes()[0].cores == 2);
  CHECK(topo.nodes()[0].memory_bytes > 0);  // sysinfo's total

  write_two_node_tree(dir.path());
  CHECK(topology::detect_from_sysfs(dir.path(), std::vector<int>{4}).source() == "sysfs");
}

TEST_CASE("from_nodes validates what it is given") {
  using cputrain::usage_error;
  const auto make = [](std::vector<numa_node> nodes) { return topology::from_nodes(std::move(nodes)); };
  CHECK_THROWS_AS(make({}), usage_error);
  CHECK_THROWS_WITH(make({{-1, {0}, 1, 0}}), Catch::Contains("negative"));
  CHECK_THROWS_WITH(make({{0, {0}, 1, 0}, {0, {1}, 1, 0}}), Catch::Contains("node 0 is listed twice"));
  CHECK_THROWS_WITH(make({{0, {}, 1, 0}}), Catch::Contains("node 0 has no CPU"));
  CHECK_THROWS_WITH(make({{0, {0, 1}, 1, 0}, {1, {1, 2}, 1, 0}}), Catch::Contains("CPU 1 is in node 0 and node 1"));
  CHECK_THROWS_WITH(make({{0, {1, 1}, 1, 0}}), Catch::Contains("twice"));
  CHECK_THROWS_WITH(make({{0, {-3}, 1, 0}}), Catch::Contains("CPU -3"));
  CHECK_THROWS_WITH(make({{0, {0, 1}, 0, 0}}), Catch::Contains("0 cores for 2 CPUs"));
  CHECK_THROWS_WITH(make({{0, {0, 1}, 3, 0}}), Catch::Contains("3 cores for 2 CPUs"));

  const topology topo = topology::from_nodes({{3, {9, 8}, 1, 0}, {1, {2, 0, 1}, 3, 1ull << 30}}, "test");
  CHECK(topo.source() == "test");
  REQUIRE(topo.nodes().size() == 2);
  CHECK(topo.nodes()[0] == numa_node{1, {0, 1, 2}, 3, 1ull << 30});  // sorted by os_index, cpus sorted
  CHECK(topo.nodes()[1] == numa_node{3, {8, 9}, 1, 0});
  CHECK(topo.total_cores() == 4);
  CHECK(topo.describe() == "node 1: cpus 0-2 (3 cores), 1.0 GiB\nnode 3: cpus 8-9 (1 core), memory unknown");
  CHECK(topology::from_nodes({{0, {0}, 1, 0}}).source() == "user");
}

TEST_CASE("process_allowed_cpus is the affinity mask") {
  CHECK(cputrain::process_allowed_cpus() == cputrain::test::affinity_mask());
}

TEST_CASE("detect agrees with /sys/devices/system/node and the affinity mask") {
  for (const char* simulation : {"HWLOC_XMLFILE", "HWLOC_SYNTHETIC", "HWLOC_FSROOT"}) {
    if (std::getenv(simulation) != nullptr) {
      CPUTRAIN_SKIP(simulation << " is set, hwloc does not describe this machine");
    }
  }
  const std::vector<int> allowed = cputrain::test::affinity_mask();
  const std::set<int> allowed_set(allowed.begin(), allowed.end());
  const topology topo = topology::detect();
#if CPUTRAIN_HAVE_HWLOC
  CHECK(topo.source() == "hwloc");
#else
  CHECK(topo.source() == (fs::exists("/sys/devices/system/node") ? "sysfs" : "affinity"));
#endif
  INFO(topo.describe());
  if (!fs::exists("/sys/devices/system/node")) return;

  // The kernel's own view, read here without the library.
  std::vector<numa_node> expected;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/node")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) != 0 || name.size() == 4 || !std::isdigit(static_cast<unsigned char>(name[4]))) {
      continue;
    }
    numa_node node{std::stoi(name.substr(4)), {}, 0, 0};
    for (const int cpu : parse_cpulist(read_file(entry.path() / "cpulist"), "cpulist")) {
      if (allowed_set.count(cpu) != 0) node.cpus.push_back(cpu);
    }
    if (!node.cpus.empty()) expected.push_back(node);
  }
  std::sort(expected.begin(), expected.end(), [](auto& a, auto& b) { return a.os_index < b.os_index; });

  REQUIRE(topo.nodes().size() == expected.size());
  std::vector<int> all_cpus;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(topo.nodes()[i].os_index == expected[i].os_index);
    CHECK(topo.nodes()[i].cpus == expected[i].cpus);
    CHECK(topo.nodes()[i].memory_bytes > 0);
    all_cpus.insert(all_cpus.end(), topo.nodes()[i].cpus.begin(), topo.nodes()[i].cpus.end());
  }
  std::sort(all_cpus.begin(), all_cpus.end());
  CHECK(all_cpus == allowed);

  // hwloc and sysfs count the same cores.
  const topology sysfs = topology::from_sysfs("/sys", allowed);
  REQUIRE(sysfs.nodes().size() == topo.nodes().size());
  for (std::size_t i = 0; i < topo.nodes().size(); ++i) CHECK(sysfs.nodes()[i].cores == topo.nodes()[i].cores);
}

TEST_CASE("detect sees only the CPUs of a thread pinned before it is called") {
  const std::vector<int> allowed = cputrain::test::affinity_mask();
  if (allowed.size() < 2) CPUTRAIN_SKIP("needs 2 CPUs; this process may use only CPU " << allowed.at(0));
  const int last = allowed.back();
  std::vector<numa_node> seen;
  std::thread pinned([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(last, &set);
    if (sched_setaffinity(0, sizeof set, &set) == 0) seen = topology::detect().nodes();
  });
  pinned.join();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].cpus == std::vector<int>{last});
  CHECK(seen[0].cores == 1);
}

#if CPUTRAIN_HAVE_HWLOC
TEST_CASE("detect refuses to go on when the machine hwloc was told to simulate cannot be read") {
  // Sets a variable for one scope, putting back what was there.
  struct scoped_env {
    std::string name;
    std::optional<std::string> old;
    scoped_env(std::string n, const char* value) : name(std::move(n)) {
      if (const char* was = std::getenv(name.c_str())) old = was;
      ::setenv(name.c_str(), value, 1);
    }
    ~scoped_env() { old ? (void)::setenv(name.c_str(), old->c_str(), 1) : (void)::unsetenv(name.c_str()); }
  };
  {
    const scoped_env xml("HWLOC_XMLFILE", "/nonexistent/machine.xml");
    CHECK_THROWS_WITH(topology::detect(), Catch::Contains("HWLOC_XMLFILE=\"/nonexistent/machine.xml\""));
  }
  {
    const scoped_env synthetic("HWLOC_SYNTHETIC", "numa:two");
    CHECK_THROWS_WITH(topology::detect(), Catch::Contains("HWLOC_SYNTHETIC=\"numa:two\""));
  }
  CHECK_NOTHROW(topology::detect());
}
#endif

// Run by tests/machine/CMakeLists.txt with HWLOC_SYNTHETIC="package:1 numa:2 core:1 pu:1" HWLOC_THISSYSTEM=1; the
// two CPUs are the first two of this process's mask (support/two_simulated_nodes.hpp).
TEST_CASE("detect on a machine hwloc simulates with two NUMA nodes", "[.hwloc-synthetic]") {
#if CPUTRAIN_HAVE_HWLOC
  const cputrain::test::two_simulated_nodes machine;
  const std::vector<int>& cpus = machine.cpus();
  if (cpus.empty()) return;  // reported skipped
  INFO("simulated CPUs " << cpus[0] << " and " << cpus[1] << ", this process may use "
                         << cputrain::format_cpulist(cputrain::test::affinity_mask()));
  const topology topo = topology::detect();
  CHECK(topo.source() == "hwloc");
  REQUIRE(topo.nodes().size() == 2);
  CHECK(topo.nodes()[0].os_index == 0);
  CHECK(topo.nodes()[0].cpus == std::vector<int>{cpus[0]});
  CHECK(topo.nodes()[0].cores == 1);
  CHECK(topo.nodes()[1].os_index == 1);
  CHECK(topo.nodes()[1].cpus == std::vector<int>{cpus[1]});
  CHECK(topo.nodes()[1].cores == 1);
  CHECK(topo.nodes()[0].memory_bytes > 0);
#else
  CPUTRAIN_SKIP("cputrain was built without hwloc, which simulates the two NUMA nodes");
#endif
}

}  // namespace topology_test
