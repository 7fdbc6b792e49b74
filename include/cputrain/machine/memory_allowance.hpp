// cputrain::read_memory_allowance — how much more memory this process may take before something ends it: the
// least of the machine's MemAvailable, its control group's limit less what the group already uses (cgroup v2
// memory.max or v1 memory.limit_in_bytes, the tightest on the path to the root) and its address-space limit
// (ulimit -v) less what it has mapped; with the bytes it holds now and the name of what set the figure.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/machine/cpu_quota.hpp"

namespace cputrain {

/// What a process may still allocate, and what it holds already.
struct memory_allowance {
  static constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();
  /// bytes this process may still take
  std::uint64_t available = unlimited;
  /// bytes it holds now (VmRSS)
  std::uint64_t resident = 0;
  /// what sets `available`, e.g. "MemAvailable (/proc/meminfo)"
  std::string source = "no limit known";

  /// What the whole process may hold: resident + available.
  [[nodiscard]] std::uint64_t total() const noexcept {
    return available > unlimited - resident ? unlimited : resident + available;
  }

  /// This allowance split evenly between `processes` that draw on the same memory (ranks on one host).
  [[nodiscard]] memory_allowance shared_by(std::size_t processes) const;
};

/// Where read_memory_allowance looks; tests pass a tree of their own.
struct memory_files {
  std::filesystem::path proc = "/proc";
  std::filesystem::path cgroup_root = "/sys/fs/cgroup";
};

namespace detail::memory {

/// The value of `key` ("MemAvailable:", "VmRSS:") in a /proc file of "key value kB" lines, in bytes.
inline std::optional<std::uint64_t> proc_kib_field(const std::filesystem::path& file, std::string_view key) {
  const auto text = quota::read_text(file);
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(key)) continue;
    std::istringstream fields(line.substr(key.size()));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

/// Limit less usage for one group directory, from files `limit_file` and `usage_file`; "max" or a v1 "no limit"
/// (a page-rounded 2^63) means none.
inline std::optional<std::uint64_t> group_headroom(const std::filesystem::path& dir, const char* limit_file,
                                                   const char* usage_file) {
  const auto limit_text = quota::read_text(dir / limit_file);
  if (!limit_text) return std::nullopt;
  const auto limit = quota::parse_integer(*limit_text);
  if (!limit || *limit <= 0 || *limit >= (1LL << 62)) return std::nullopt;
  const auto usage_text = quota::read_text(dir / usage_file);
  const auto usage = usage_text ? quota::parse_integer(*usage_text) : std::nullopt;
  const auto used = static_cast<std::uint64_t>(std::max(0LL, usage.value_or(0)));
  const auto lim = static_cast<std::uint64_t>(*limit);
  return lim > used ? lim - used : 0;
}

/// The tightest headroom on the path from the mount down to `group`, and the limit file that sets it.
inline void tightest_group(const std::filesystem::path& mount, std::string_view group, const char* limit_file,
                           const char* usage_file, memory_allowance& out) {
  std::filesystem::path dir = mount;
  std::error_code ec;
  auto consider = [&](const std::filesystem::path& d) {
    if (const auto headroom = group_headroom(d, limit_file, usage_file); headroom && *headroom < out.available) {
      out.available = *headroom;
      out.source = "the control group's " + std::string(limit_file) + " (" + (d / limit_file).string() + ")";
    }
  };
  consider(dir);
  std::istringstream parts{std::string(group)};
  for (std::string part; std::getline(parts, part, '/');) {
    if (part.empty() || part == "." || part == "..") continue;
    dir /= part;
    if (!std::filesystem::is_directory(dir, ec)) return;  // the host's path seen from inside a container
    consider(dir);
  }
}

inline void apply_cgroup(const memory_files& files, memory_allowance& out) {
  const auto membership = quota::read_text(files.proc / "self" / "cgroup");
  if (!membership) return;
  for (const auto& [controllers, group] : quota::parse_cgroup_memberships(*membership)) {
    if (controllers.empty()) {
      tightest_group(files.cgroup_root, group, "memory.max", "memory.current", out);
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      tightest_group(files.cgroup_root / "memory", group, "memory.limit_in_bytes", "memory.usage_in_bytes", out);
    }
  }
}

inline void apply_address_space_limit(const memory_files& files, memory_allowance& out) {
  ::rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  const std::uint64_t mapped = proc_kib_field(files.proc / "self" / "status", "VmSize:").value_or(0);
  const std::uint64_t room = limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0;
  if (room < out.available) {
    out.available = room;
    out.source = "the address-space limit (ulimit -v " + std::to_string(limit.rlim_cur / 1024) + ")";
  }
}

}  // namespace detail::memory

/// What this process may still allocate (see the header comment). Files that are missing or malformed count as
/// "no limit from there"; with none readable, available is memory_allowance::unlimited.
[[nodiscard]] CPUTRAIN_DECL memory_allowance read_memory_allowance(const memory_files& files = {});

#if CPUTRAIN_DEFINE_FUNCTIONS

CPUTRAIN_DECL memory_allowance memory_allowance::shared_by(std::size_t processes) const {
  if (processes <= 1 || available == unlimited) return *this;
  memory_allowance out = *this;
  out.available = available / processes;
  out.source = source + ", shared by the " + std::to_string(processes) + " processes on this host";
  return out;
}

CPUTRAIN_DECL memory_allowance read_memory_allowance(const memory_files& files) {
  namespace m = detail::memory;
  memory_allowance out;
  if (const auto available = m::proc_kib_field(files.proc / "meminfo", "MemAvailable:")) {
    out.available = *available;
    out.source = "MemAvailable (" + (files.proc / "meminfo").string() + ")";
  }
  m::apply_cgroup(files, out);
  m::apply_address_space_limit(files, out);
  out.resident = m::proc_kib_field(files.proc / "self" / "status", "VmRSS:").value_or(0);
  return out;
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain
