// cputrain::read_cpu_quota — how many CPUs' worth of time this process's control group may use (a container's
// CPU limit: cgroup v2 cpu.max or v1 cfs quota, the smallest on the path to the root). The thread plan caps its
// automatic choice at it; missing or malformed files mean "no limit known".
#pragma once

#include <cmath>
#include <fstream>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"

namespace cputrain {

/// A CPU limit and where it was read.
struct cpu_quota {
  /// CPUs' worth of time per period, e.g. 2.5
  double cpus = 0;
  /// the file that set it, e.g. "/sys/fs/cgroup/cpu.max"
  std::string source;
};

namespace detail::quota {

inline std::optional<std::string> read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::optional<long long> parse_integer(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const long long value = std::stoll(std::string(text), &used);
    if (used != text.size()) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// "200000 100000" -> 2.0; "max 100000" and anything malformed -> nothing.
inline std::optional<double> parse_cpu_max(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string quota, period, rest;
  if (!(in >> quota >> period) || (in >> rest) || quota == "max") return std::nullopt;
  const auto q = parse_integer(quota), p = parse_integer(period);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

/// cpu.cfs_quota_us and cpu.cfs_period_us of one v1 group; -1 (no limit) and malformed files -> nothing.
inline std::optional<double> read_cfs(const std::filesystem::path& dir) {
  const auto quota = read_text(dir / "cpu.cfs_quota_us");
  const auto period = read_text(dir / "cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;
  const auto q = parse_integer(*quota), p = parse_integer(*period);
  if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

/// One line of a /proc/<pid>/cgroup file, "id:controllers:path"; `controllers` is empty for the v2 hierarchy.
struct cgroup_membership {
  std::string controllers;
  std::string group;
};

inline std::vector<cgroup_membership> parse_cgroup_memberships(const std::string& text) {
  std::vector<cgroup_membership> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    out.push_back({line.substr(first + 1, second - first - 1), line.substr(second + 1)});
  }
  return out;
}

/// The smallest limit on the path from `group` (relative to `mount`) up to `mount`, read by `read_one`.
template <class ReadOne>
std::optional<cpu_quota> smallest_on_path(const std::filesystem::path& mount, std::string_view group,
                                          const std::string& file_name, ReadOne read_one) {
  std::filesystem::path dir = mount;
  std::vector<std::filesystem::path> chain{mount};
  std::string_view rest = group;
  while (!rest.empty()) {
    const std::size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    if (!part.empty() && part != "." && part != "..") {
      dir /= std::string(part);
      chain.push_back(dir);
    }
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  std::error_code ec;
  // The group's own directory is missing when the path names the host's hierarchy from inside a container: only
  // the mount's root (the container's own group) counts then.
  if (!std::filesystem::is_directory(chain.back(), ec)) chain.resize(1);
  std::optional<cpu_quota> best;
  for (const auto& d : chain) {
    if (const auto cpus = read_one(d); cpus && (!best || *cpus < best->cpus)) {
      best = cpu_quota{*cpus, (d / file_name).string()};
    }
  }
  return best;
}

}  // namespace detail::quota

/// The CPU limit of this process's control group, if it has one. `cgroup_root` is where the cgroup file systems
/// are mounted and `self_cgroup` the process's membership file; tests pass their own.
[[nodiscard]] CPUTRAIN_DECL std::optional<cpu_quota> read_cpu_quota(
    const std::filesystem::path& cgroup_root = "/sys/fs/cgroup",
    const std::filesystem::path& self_cgroup = "/proc/self/cgroup");

/// Whole threads a limit of `cpus` keeps busy without throttling: a fraction of a CPU counts as one (2.5 -> 3).
[[nodiscard]] inline int quota_cores(double cpus) {
  return cpus <= 1 ? 1 : static_cast<int>(std::ceil(cpus - 1e-9));
}

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::optional<cpu_quota> read_cpu_quota(const std::filesystem::path& cgroup_root,
                                                     const std::filesystem::path& self_cgroup) {
  namespace q = detail::quota;
  const auto membership = q::read_text(self_cgroup);
  if (!membership) return std::nullopt;
  std::optional<std::string> v2_group;
  for (const auto& [controllers, group] : q::parse_cgroup_memberships(*membership)) {
    if (controllers.empty()) {
      v2_group = group;
      continue;
    }
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');) {
      if (name != "cpu") continue;
      // v1: the cpu controller's hierarchy, mounted under its own name or together with cpuacct.
      for (const char* mount : {"cpu", "cpu,cpuacct", "cpuacct,cpu"}) {
        std::error_code ec;
        if (!std::filesystem::is_directory(cgroup_root / mount, ec)) continue;
        return q::smallest_on_path(cgroup_root / mount, group, "cpu.cfs_quota_us", q::read_cfs);
      }
    }
  }
  if (!v2_group) return std::nullopt;
  return q::smallest_on_path(cgroup_root, *v2_group, "cpu.max", [](const std::filesystem::path& dir) {
    const auto text = q::read_text(dir / "cpu.max");
    return text ? q::parse_cpu_max(*text) : std::nullopt;
  });
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain
