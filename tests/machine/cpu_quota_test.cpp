#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "cputrain/machine/cpu_quota.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using cputrain::quota_cores;
using cputrain::read_cpu_quota;

namespace {

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

}  // namespace

TEST_CASE("cgroup v2: cpu.max of the process's group is the limit") {
  cputrain::test::temp_dir dir;
  const fs::path root = dir.path() / "cgroup";
  write(dir.path() / "self", "0::/kubepods/pod1/ctr\n");
  write(root / "kubepods/pod1/ctr/cpu.max", "250000 100000\n");
  const auto quota = read_cpu_quota(root, dir.path() / "self");
  REQUIRE(quota);
  CHECK(quota->cpus == Approx(2.5));
  CHECK(quota->source == (root / "kubepods/pod1/ctr/cpu.max").string());
}

TEST_CASE("cgroup v2: the smallest limit on the way to the root wins, and max means none") {
  cputrain::test::temp_dir dir;
  const fs::path root = dir.path() / "cgroup";
  write(dir.path() / "self", "0::/kubepods/pod1/ctr\n");
  write(root / "cpu.max", "max 100000\n");
  write(root / "kubepods/cpu.max", "6400000 100000\n");
  write(root / "kubepods/pod1/cpu.max", "1600000 100000\n");
  write(root / "kubepods/pod1/ctr/cpu.max", "max 100000\n");
  const auto quota = read_cpu_quota(root, dir.path() / "self");
  REQUIRE(quota);
  CHECK(quota->cpus == Approx(16.0));
  CHECK(quota->source == (root / "kubepods/pod1/cpu.max").string());

  write(root / "kubepods/cpu.max", "max 100000\n");
  write(root / "kubepods/pod1/cpu.max", "max 100000\n");
  CHECK_FALSE(read_cpu_quota(root, dir.path() / "self"));
}

TEST_CASE("cgroup v2: a group path that is not under the mount falls back to the mount's own limit") {
  // Inside a container without its own cgroup namespace the path names the host's hierarchy, while the mount
  // shows the container's group as its root.
  cputrain::test::temp_dir dir;
  const fs::path root = dir.path() / "cgroup";
  write(dir.path() / "self", "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-abc.scope\n");
  write(root / "cpu.max", "400000 100000\n");
  const auto quota = read_cpu_quota(root, dir.path() / "self");
  REQUIRE(quota);
  CHECK(quota->cpus == Approx(4.0));
}

TEST_CASE("cgroup v1: cfs quota over period of the cpu hierarchy, -1 meaning no limit") {
  cputrain::test::temp_dir dir;
  const fs::path root = dir.path() / "cgroup";
  write(dir.path() / "self", "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n");
  write(root / "cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  write(root / "cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  write(root / "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000\n");
  write(root / "cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  const auto quota = read_cpu_quota(root, dir.path() / "self");
  REQUIRE(quota);
  CHECK(quota->cpus == Approx(3.0));
  CHECK(quota->source == (root / "cpu,cpuacct/docker/abc/cpu.cfs_quota_us").string());

  write(root / "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
  CHECK_FALSE(read_cpu_quota(root, dir.path() / "self"));
}

TEST_CASE("no membership file, no cpu files, or malformed ones: no limit known") {
  cputrain::test::temp_dir dir;
  const fs::path root = dir.path() / "cgroup";
  CHECK_FALSE(read_cpu_quota(root, dir.path() / "missing"));
  write(dir.path() / "self", "0::/\n");
  CHECK_FALSE(read_cpu_quota(root, dir.path() / "self"));
  for (const char* bad : {"", "abc 100000", "200000", "200000 0", "-5 100000", "200000 100000 7", "2e5 100000"}) {
    write(root / "cpu.max", bad);
    INFO("cpu.max: \"" << bad << "\"");
    CHECK_FALSE(read_cpu_quota(root, dir.path() / "self"));
  }
  write(root / "cpu.max", "150000 100000");  // no newline
  REQUIRE(read_cpu_quota(root, dir.path() / "self"));
  CHECK(read_cpu_quota(root, dir.path() / "self")->cpus == Approx(1.5));
}

TEST_CASE("a fraction of a CPU keeps one more thread busy") {
  CHECK(quota_cores(0.5) == 1);
  CHECK(quota_cores(1.0) == 1);
  CHECK(quota_cores(2.0) == 2);
  CHECK(quota_cores(2.5) == 3);
  CHECK(quota_cores(16.0) == 16);
}

TEST_CASE("this machine's limit, if any, is positive and names its file") {
  const auto quota = read_cpu_quota();
  if (quota) {
    CHECK(quota->cpus > 0);
    CHECK(fs::exists(quota->source));
  } else {
    SUCCEED("no CPU limit on this machine's control group");
  }
}
