#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cputrain/machine/cpu_quota.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace cpu_quota_test {

namespace fs = std::filesystem;
using cputrain::quota_cores;
using cputrain::read_cpu_quota;

namespace {

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

std::string text_of(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A CPU limit found on this process's cgroup path, and the file that sets it.
struct limit {
  double cpus;
  std::string file;
};

// Every CPU limit set on this process's cgroup path, read here without the library, as the kernel documents the
// files: cgroup v1's cpu controller (cpu.cfs_quota_us / cpu.cfs_period_us, -1 for none) where the process is in
// one, else cgroup v2 (cpu.max, "max <period>" for none). The groups from the process's own up to the mount's
// root; only the root where the process's own group is not visible (a container sees its group as the root).
std::vector<limit> limits_of_this_process() {
  const fs::path root = "/sys/fs/cgroup";
  std::istringstream lines(text_of("/proc/self/cgroup"));
  std::optional<std::pair<fs::path, std::string>> v1, v2;  // (mount, group)
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    REQUIRE(second != std::string::npos);
    const std::string controllers = line.substr(first + 1, second - first - 1), group = line.substr(second + 1);
    if (controllers.empty()) {
      v2 = {root, group};
    } else if (("," + controllers + ",").find(",cpu,") != std::string::npos) {
      for (const char* mount : {"cpu", "cpu,cpuacct", "cpuacct,cpu"}) {
        if (!v1 && fs::is_directory(root / mount)) v1 = {root / mount, group};
      }
    }
  }
  const auto read_limit = [&](const fs::path& dir) -> std::optional<limit> {
    if (v1) {
      std::istringstream quota(text_of(dir / "cpu.cfs_quota_us")), period(text_of(dir / "cpu.cfs_period_us"));
      long long q = 0, p = 0;
      if (!(quota >> q) || !(period >> p) || q <= 0 || p <= 0) return std::nullopt;
      return limit{static_cast<double>(q) / static_cast<double>(p), (dir / "cpu.cfs_quota_us").string()};
    }
    std::istringstream max(text_of(dir / "cpu.max"));
    std::string q;
    long long p = 0;
    if (!(max >> q >> p) || q == "max" || p <= 0) return std::nullopt;
    return limit{std::stod(q) / static_cast<double>(p), (dir / "cpu.max").string()};
  };
  const auto hierarchy = v1 ? v1 : v2;
  if (!hierarchy) return {};
  const auto& [mount, group] = *hierarchy;
  fs::path dir = mount;
  for (const auto& part : fs::path(group).relative_path()) {
    if (!part.empty() && part != "." && part != "..") dir /= part;
  }
  if (!fs::is_directory(dir)) dir = mount;
  std::vector<limit> limits;
  for (;; dir = dir.parent_path()) {
    if (const auto l = read_limit(dir)) limits.push_back(*l);
    if (dir == mount || dir == dir.parent_path()) break;
  }
  return limits;
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
  // The answer is known here without the library, so both outcomes are checked: no limit where no group on the
  // path sets one, else the smallest of them and its file.
  const std::vector<limit> limits = limits_of_this_process();
  const auto quota = read_cpu_quota();
  if (limits.empty()) {
    INFO("no cpu.max or cpu.cfs_quota_us on this process's cgroup path sets a limit");
    CHECK_FALSE(quota);
    return;
  }
  const limit smallest = *std::min_element(limits.begin(), limits.end(),
                                           [](const limit& a, const limit& b) { return a.cpus < b.cpus; });
  INFO("the smallest limit on this process's cgroup path: " << smallest.cpus << " CPUs in " << smallest.file);
  REQUIRE(quota);
  CHECK(quota->cpus > 0);
  CHECK(quota->cpus == Approx(smallest.cpus));
  CHECK(fs::exists(quota->source));
  // The file that sets it (any of them, where two groups on the path set the same limit).
  const bool named = std::any_of(limits.begin(), limits.end(), [&](const limit& l) {
    return l.file == quota->source && l.cpus == Approx(smallest.cpus);
  });
  INFO("read_cpu_quota named " << quota->source);
  CHECK(named);
}

}  // namespace cpu_quota_test
