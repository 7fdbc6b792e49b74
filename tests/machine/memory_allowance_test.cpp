#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "cputrain/machine/memory_allowance.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace memory_allowance_test {

namespace fs = std::filesystem;
using cputrain::memory_allowance;
using cputrain::memory_files;
using cputrain::read_memory_allowance;

namespace {

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

constexpr std::uint64_t GiB = std::uint64_t{1} << 30;

// A /proc of a machine with 20 GiB available and a process holding 300 MiB.
memory_files fake_proc(const fs::path& dir, const std::string& cgroup_membership) {
  write(dir / "proc/meminfo",
        "MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20971520 kB\n");
  write(dir / "proc/self/status", "Name:\trun_qa\nVmSize:\t  900000 kB\nVmRSS:\t  307200 kB\n");
  write(dir / "proc/self/cgroup", cgroup_membership);
  return memory_files{dir / "proc", dir / "cgroup"};
}

}  // namespace

TEST_CASE("without a control group limit, MemAvailable is the allowance and VmRSS what the process holds") {
  cputrain::test::temp_dir dir;
  const auto files = fake_proc(dir.path(), "0::/\n");
  const auto a = read_memory_allowance(files);
  CHECK(a.available == 20 * GiB);
  CHECK(a.resident == 300 * (std::uint64_t{1} << 20));
  CHECK(a.total() == 20 * GiB + 300 * (std::uint64_t{1} << 20));
  CHECK(a.source == "MemAvailable (" + (files.proc / "meminfo").string() + ")");
}

TEST_CASE("cgroup v2: the tightest memory.max less memory.current on the way to the root wins, max meaning none") {
  cputrain::test::temp_dir dir;
  const auto files = fake_proc(dir.path(), "0::/kubepods/pod1/ctr\n");
  write(files.cgroup_root / "memory.max", "max\n");
  write(files.cgroup_root / "kubepods/memory.max", std::to_string(16 * GiB) + "\n");
  write(files.cgroup_root / "kubepods/memory.current", std::to_string(1 * GiB) + "\n");
  write(files.cgroup_root / "kubepods/pod1/ctr/memory.max", std::to_string(8 * GiB) + "\n");
  write(files.cgroup_root / "kubepods/pod1/ctr/memory.current", std::to_string(3 * GiB) + "\n");
  const auto a = read_memory_allowance(files);
  CHECK(a.available == 5 * GiB);
  const auto limit_file = files.cgroup_root / "kubepods/pod1/ctr/memory.max";
  CHECK(a.source == "the control group's memory.max (" + limit_file.string() + ")");
}

TEST_CASE("cgroup v2: a group that already uses its whole limit allows nothing more") {
  cputrain::test::temp_dir dir;
  const auto files = fake_proc(dir.path(), "0::/job\n");
  write(files.cgroup_root / "job/memory.max", "1073741824\n");
  write(files.cgroup_root / "job/memory.current", "2147483648\n");
  CHECK(read_memory_allowance(files).available == 0);
}

TEST_CASE("cgroup v1: the memory hierarchy's limit_in_bytes less usage_in_bytes, the page-rounded 2^63 meaning none") {
  cputrain::test::temp_dir dir;
  const auto files = fake_proc(dir.path(), "5:cpu,cpuacct:/\n4:memory:/docker/abc\n0::/\n");
  write(files.cgroup_root / "memory/memory.limit_in_bytes", "9223372036854771712\n");
  write(files.cgroup_root / "memory/docker/abc/memory.limit_in_bytes", std::to_string(4 * GiB) + "\n");
  write(files.cgroup_root / "memory/docker/abc/memory.usage_in_bytes", std::to_string(GiB / 2) + "\n");
  const auto a = read_memory_allowance(files);
  CHECK(a.available == 4 * GiB - GiB / 2);
  CHECK(a.source.find("memory.limit_in_bytes") != std::string::npos);
}

TEST_CASE("a limit above what the machine has available does not raise the allowance") {
  cputrain::test::temp_dir dir;
  const auto files = fake_proc(dir.path(), "0::/big\n");
  write(files.cgroup_root / "big/memory.max", std::to_string(64 * GiB) + "\n");
  write(files.cgroup_root / "big/memory.current", "0\n");
  const auto a = read_memory_allowance(files);
  CHECK(a.available == 20 * GiB);
  CHECK(a.source.starts_with("MemAvailable"));
}

TEST_CASE("missing or malformed files mean no limit from there") {
  cputrain::test::temp_dir dir;
  memory_files nothing{dir.path() / "no-proc", dir.path() / "no-cgroup"};
  const auto none = read_memory_allowance(nothing);
  CHECK(none.available == memory_allowance::unlimited);
  CHECK(none.total() == memory_allowance::unlimited);

  const auto files = fake_proc(dir.path(), "0::/bad\n");
  write(files.cgroup_root / "bad/memory.max", "lots\n");
  write(dir.path() / "proc/meminfo", "MemAvailable: many kB\n");
  CHECK(read_memory_allowance(files).available == memory_allowance::unlimited);
}

TEST_CASE("the real machine: some memory is available and the process holds some") {
  const auto a = read_memory_allowance();
  CHECK(a.available > 0);
  CHECK(a.resident > 0);
  CHECK_FALSE(a.source.empty());
}

TEST_CASE("shared_by splits what is available between the ranks of one host, and says so") {
  memory_allowance a;
  a.available = 12 * GiB;
  a.resident = GiB;
  a.source = "MemAvailable";
  const auto shared = a.shared_by(4);
  CHECK(shared.available == 3 * GiB);
  CHECK(shared.resident == GiB);
  CHECK(shared.source == "MemAvailable, shared by the 4 processes on this host");
  CHECK(a.shared_by(1).available == 12 * GiB);
  CHECK(memory_allowance{}.shared_by(4).available == memory_allowance::unlimited);
}

}  // namespace memory_allowance_test
