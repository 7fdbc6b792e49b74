// cputrain::topology — the NUMA nodes this process may run on, their CPUs, physical cores and memory: what decides
// how many arenas (machine/arenas.hpp) and threads (machine/thread_plan.hpp) a rank gets. Read by hwloc when cputrain
// was built with it (so HWLOC_XMLFILE / HWLOC_SYNTHETIC with HWLOC_THISSYSTEM=1 can simulate a machine), else from
// Linux's /sys; also parse_cpulist/format_cpulist for the kernel's "0-3,8" lists and process_allowed_cpus().
#pragma once

#include <pthread.h>
#include <sched.h>
#include <sys/sysinfo.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#if CPUTRAIN_HAVE_HWLOC
#include <hwloc.h>
#if HWLOC_API_VERSION < 0x00020000
#error "cputrain needs hwloc >= 2.0"
#endif
#endif

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/machine/current_node.hpp"

namespace cputrain {

/// One NUMA node as this process sees it.
struct numa_node {
  /// the kernel's node number (/sys/devices/system/node/nodeN, mbind)
  int os_index = 0;
  /// logical CPUs (OS indices) of the node, sorted; detect() keeps the allowed ones
  std::vector<int> cpus;
  /// physical cores among those cpus (SMT siblings counted once)
  int cores = 0;
  /// 0 when unknown
  std::uint64_t memory_bytes = 0;

  friend bool operator==(const numa_node&, const numa_node&) = default;
};

namespace detail::topo {

// Far above any kernel's NR_CPUS (8192 today), low enough that a corrupt list cannot ask for gigabytes.
inline constexpr int max_cpu_index = 65535;

inline std::string_view trim(std::string_view text) {
  constexpr std::string_view space = " \t\r\n";
  const auto first = text.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

inline std::string errno_text(int err) { return std::generic_category().message(err); }

struct cpu_set_deleter {
  void operator()(cpu_set_t* set) const noexcept { CPU_FREE(set); }
};
using cpu_set_ptr = std::unique_ptr<cpu_set_t, cpu_set_deleter>;

/// The calling thread's affinity mask. Returns the errno of sched_getaffinity (0 on success); ENOMEM when the
/// mask cannot be allocated. The mask is sized up until the kernel accepts it, for machines beyond 1024 CPUs.
inline int read_thread_affinity(std::vector<int>& cpus) noexcept {
  for (int capacity = 1024; capacity <= 4 * (max_cpu_index + 1); capacity *= 2) {
    cpu_set_ptr set(CPU_ALLOC(static_cast<std::size_t>(capacity)));
    if (!set) return ENOMEM;
    const std::size_t bytes = CPU_ALLOC_SIZE(static_cast<std::size_t>(capacity));
    CPU_ZERO_S(bytes, set.get());
    if (sched_getaffinity(0, bytes, set.get()) != 0) {
      if (errno == EINVAL) continue;
      return errno;
    }
    try {
      cpus.clear();
      for (int cpu = 0; cpu < capacity; ++cpu) {
        if (CPU_ISSET_S(static_cast<std::size_t>(cpu), bytes, set.get())) cpus.push_back(cpu);
      }
    } catch (const std::bad_alloc&) {
      return ENOMEM;
    }
    return 0;
  }
  return EINVAL;
}

/// Pins the calling thread to `cpus`. Returns the error number of pthread_setaffinity_np (0 on success).
inline int pin_this_thread(std::span<const int> cpus) noexcept {
  const int highest = cpus.empty() ? 0 : *std::max_element(cpus.begin(), cpus.end());
  const auto capacity = static_cast<std::size_t>(highest) + 1;
  cpu_set_ptr set(CPU_ALLOC(capacity));
  if (!set) return ENOMEM;
  const std::size_t bytes = CPU_ALLOC_SIZE(capacity);
  CPU_ZERO_S(bytes, set.get());
  for (const int cpu : cpus) CPU_SET_S(static_cast<std::size_t>(cpu), bytes, set.get());
  return pthread_setaffinity_np(pthread_self(), bytes, set.get());
}

/// Contents of a text file; nullopt when it does not exist; topology_error when it exists but cannot be read.
inline std::optional<std::string> read_optional_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::ifstream in(path);
  if (!in) throw topology_error("cputrain: cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw topology_error("cputrain: cannot read " + path.string());
  return std::move(text).str();
}

inline std::string read_required_file(const std::filesystem::path& path) {
  auto text = read_optional_file(path);
  if (!text) throw topology_error("cputrain: " + path.string() + " is missing");
  return std::move(*text);
}

inline long long parse_nonnegative(std::string_view text, const std::filesystem::path& file) {
  const std::string_view digits = trim(text);
  long long value = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value < 0) {
    throw topology_error("cputrain: " + file.string() + " holds \"" + std::string(digits) +
                         "\", not a non-negative integer");
  }
  return value;
}

}  // namespace detail::topo

/// Parses the kernel's CPU list format ("0-3,8,10-11\n" -> {0,1,2,3,8,10,11}); the result is sorted and unique.
/// An empty (or all-blank) list is valid and gives {}: memory-only NUMA nodes have one.
/// @param what names where the text came from (a file path, a flag) for the error message.
/// @throws topology_error naming `what` and quoting the text when it is malformed.
CPUTRAIN_DECL std::vector<int> parse_cpulist(std::string_view text, std::string_view what);

/// The inverse of parse_cpulist: {0,1,2,3,8,10,11} -> "0-3,8,10-11" (sorts a copy first).
CPUTRAIN_DECL std::string format_cpulist(std::span<const int> cpus);

/// The CPUs this process may run on, sorted: the calling thread's affinity mask (sched_getaffinity) as it was
/// before cputrain pinned it to a node. Linux keeps a mask per thread; every thread inherits the launcher's
/// (taskset, numactl, mpirun --bind-to), so this is the process's unless a caller re-pinned its own threads.
/// @throws system_error when the kernel refuses.
CPUTRAIN_DECL std::vector<int> process_allowed_cpus();

/// The NUMA nodes of a machine (or of the part of it this process may use), sorted by os_index.
class topology {
 public:
  /// No node and no source: only a placeholder to assign to (a member of an aggregate filled in later).
  /// Every factory below returns at least one node.
  topology() = default;

  /// The machine this process runs on, restricted to process_allowed_cpus(); nodes left without a CPU are dropped
  /// (under `mpirun --bind-to numa` a rank sees only its node). Uses hwloc when cputrain was built with it, else
  /// from_sysfs("/sys"); a kernel without NUMA support (no /sys/devices/system/node) gives one node 0 holding the
  /// allowed CPUs, source "affinity".
  /// @throws topology_error saying what could not be read, and where.
  static topology detect();

  /// Reads <sys_root>/devices/system/node/node*/{cpulist,meminfo} and, to count physical cores,
  /// <sys_root>/devices/system/cpu/cpuN/topology/. Describes every CPU listed, whatever this process may use.
  /// @throws topology_error naming the file that is missing or malformed.
  static topology from_sysfs(const std::filesystem::path& sys_root);

  /// As from_sysfs(sys_root), keeping only `allowed_cpus` (cores are counted among those) and dropping the nodes
  /// left without a CPU; topology_error when none is left.
  static topology from_sysfs(const std::filesystem::path& sys_root, std::span<const int> allowed_cpus);

  /// What detect() does without hwloc: from_sysfs(sys_root, allowed_cpus), or, when the kernel exposes no NUMA
  /// information (no <sys_root>/devices/system/node), one node 0 of the allowed CPUs with source "affinity".
  static topology detect_from_sysfs(const std::filesystem::path& sys_root, std::span<const int> allowed_cpus);

#if CPUTRAIN_HAVE_HWLOC
  /// What hwloc reports (honouring HWLOC_XMLFILE, HWLOC_SYNTHETIC, HWLOC_THISSYSTEM), keeping only `allowed_cpus`
  /// (cores are counted among those) and dropping the nodes left without a CPU. Only when built with hwloc.
  static topology from_hwloc(std::span<const int> allowed_cpus);
#endif

  /// A topology given by hand (tests, or a user who knows better). Each node's cpus are sorted.
  /// @throws usage_error when there is no node, an os_index is negative or repeated, a node has no CPU or a CPU
  ///         twice, a CPU belongs to two nodes, or cores is not within [1, cpus.size()].
  static topology from_nodes(std::vector<numa_node> nodes, std::string source = "user");

  const std::vector<numa_node>& nodes() const noexcept { return nodes_; }

  int total_cores() const noexcept {
    int sum = 0;
    for (const numa_node& node : nodes_) sum += node.cores;
    return sum;
  }

  /// "hwloc", "sysfs", "affinity", or what from_nodes was given.
  const std::string& source() const noexcept { return source_; }

  /// One line per node, "node 0: cpus 0-15 (16 cores), 62.8 GiB", joined by '\n'.
  std::string describe() const;

 private:
  topology(std::vector<numa_node> nodes, std::string source) : nodes_(std::move(nodes)), source_(std::move(source)) {}

  static void prepare(std::vector<numa_node>& nodes) {
    for (numa_node& node : nodes) std::sort(node.cpus.begin(), node.cpus.end());
    std::sort(nodes.begin(), nodes.end(),
              [](const numa_node& a, const numa_node& b) { return a.os_index < b.os_index; });
  }

  // Empty when the (prepared) nodes make a topology, else the reason they do not.
  static std::string validate(const std::vector<numa_node>& nodes) {
    if (nodes.empty()) return "no NUMA node";
    std::map<int, int> owner;  // cpu -> node os_index
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const numa_node& node = nodes[i];
      const std::string name = "node " + std::to_string(node.os_index);
      if (node.os_index < 0) return name + " has a negative os_index";
      if (i > 0 && nodes[i - 1].os_index == node.os_index) return name + " is listed twice";
      if (node.cpus.empty()) return name + " has no CPU";
      for (std::size_t c = 0; c < node.cpus.size(); ++c) {
        const int cpu = node.cpus[c];
        if (cpu < 0 || cpu > detail::topo::max_cpu_index) return name + " lists CPU " + std::to_string(cpu);
        if (c > 0 && node.cpus[c - 1] == cpu) return name + " lists CPU " + std::to_string(cpu) + " twice";
        if (const auto [it, fresh] = owner.emplace(cpu, node.os_index); !fresh) {
          return "CPU " + std::to_string(cpu) + " is in node " + std::to_string(it->second) + " and " + name;
        }
      }
      if (node.cores < 1 || static_cast<std::size_t>(node.cores) > node.cpus.size()) {
        return name + " has " + std::to_string(node.cores) + " cores for " + std::to_string(node.cpus.size()) + " CPUs";
      }
    }
    return {};
  }

  // For topologies read from the machine: a contradiction there is the machine's (or the file's) fault.
  static topology checked(std::vector<numa_node> nodes, std::string source, const std::string& where) {
    prepare(nodes);
    if (const std::string problem = validate(nodes); !problem.empty()) {
      throw topology_error("cputrain: the topology read from " + where + " makes no sense: " + problem);
    }
    return topology(std::move(nodes), std::move(source));
  }

  static std::string no_cpu_left(const std::string& where, std::span<const int> allowed) {
    return "cputrain: none of the CPUs this process may use (" + format_cpulist(allowed) + ") is in a NUMA node of " +
           where;
  }

  // Identifies the physical core of `cpu`. The sibling lists name the core's CPUs directly, so they come first;
  // core_id is only unique within a package (and die), so it is qualified by them.
  static std::string core_key(const std::filesystem::path& cpu_root, int cpu) {
    const std::filesystem::path dir = cpu_root / ("cpu" + std::to_string(cpu)) / "topology";
    for (const char* name : {"core_cpus_list", "thread_siblings_list"}) {
      if (auto text = detail::topo::read_optional_file(dir / name)) {
        const std::vector<int> siblings = parse_cpulist(*text, (dir / name).string());
        if (!siblings.empty()) return "siblings " + std::to_string(siblings.front());
      }
    }
    if (auto core = detail::topo::read_optional_file(dir / "core_id")) {
      std::string key = "core " + std::to_string(detail::topo::parse_nonnegative(*core, dir / "core_id"));
      for (const char* name : {"physical_package_id", "die_id"}) {
        if (auto id = detail::topo::read_optional_file(dir / name)) {
          key += std::string(" ") + name + " " + std::to_string(detail::topo::parse_nonnegative(*id, dir / name));
        }
      }
      return key;
    }
    return "cpu " + std::to_string(cpu);  // no topology directory (an old or odd kernel): count it as a core
  }

  static int count_cores(const std::filesystem::path& cpu_root, std::span<const int> cpus) {
    std::set<std::string> cores;
    for (const int cpu : cpus) cores.insert(core_key(cpu_root, cpu));
    return static_cast<int>(cores.size());
  }

  static topology read_sysfs(const std::filesystem::path& sys_root, const std::set<int>* allowed) {
    const std::filesystem::path node_root = sys_root / "devices" / "system" / "node";
    const std::filesystem::path cpu_root = sys_root / "devices" / "system" / "cpu";
    std::error_code ec;
    if (!std::filesystem::is_directory(node_root, ec)) {
      throw topology_error("cputrain: " + node_root.string() + " does not exist (a kernel without NUMA support?)");
    }
    std::vector<numa_node> nodes;
    bool any_node = false;
    for (const auto& entry : std::filesystem::directory_iterator(node_root, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.size() <= 4 || name.compare(0, 4, "node") != 0 ||
          name.find_first_not_of("0123456789", 4) != std::string::npos) {
        continue;
      }
      any_node = true;
      numa_node node;
      node.os_index = static_cast<int>(detail::topo::parse_nonnegative(name.substr(4), entry.path()));
      const std::filesystem::path cpulist = entry.path() / "cpulist";
      node.cpus = parse_cpulist(detail::topo::read_required_file(cpulist), cpulist.string());
      if (allowed != nullptr) std::erase_if(node.cpus, [&](int cpu) { return allowed->count(cpu) == 0; });
      if (node.cpus.empty()) continue;  // memory-only, or none of its CPUs is ours
      node.cores = count_cores(cpu_root, node.cpus);
      node.memory_bytes = read_node_memory(entry.path() / "meminfo");
      nodes.push_back(std::move(node));
    }
    if (ec) throw topology_error("cputrain: cannot list " + node_root.string() + ": " + ec.message());
    if (!any_node) throw topology_error("cputrain: " + node_root.string() + " lists no node");
    if (nodes.empty()) {
      if (allowed != nullptr) {
        throw topology_error(no_cpu_left(node_root.string(), std::vector<int>(allowed->begin(), allowed->end())));
      }
      throw topology_error("cputrain: no node in " + node_root.string() + " has a CPU");
    }
    return checked(std::move(nodes), "sysfs", node_root.string());
  }

  // "Node 0 MemTotal:       65799884 kB"; 0 when the file is absent.
  static std::uint64_t read_node_memory(const std::filesystem::path& meminfo) {
    const auto text = detail::topo::read_optional_file(meminfo);
    if (!text) return 0;
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);) {
      const std::size_t label = line.find("MemTotal:");
      if (label == std::string::npos) continue;
      std::string_view value = detail::topo::trim(std::string_view(line).substr(label + 9));
      if (value.size() >= 2 && value.substr(value.size() - 2) == "kB") {
        value = detail::topo::trim(value.substr(0, value.size() - 2));
      }
      return static_cast<std::uint64_t>(detail::topo::parse_nonnegative(value, meminfo)) * 1024;
    }
    throw topology_error("cputrain: " + meminfo.string() + " has no MemTotal line");
  }

  std::vector<numa_node> nodes_;
  std::string source_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS

CPUTRAIN_DECL std::vector<int> parse_cpulist(std::string_view text, std::string_view what) {
  const std::string_view list = detail::topo::trim(text);
  std::vector<int> cpus;
  if (list.empty()) return cpus;
  const auto fail = [&](std::string_view reason) -> topology_error {
    return topology_error("cputrain: bad CPU list \"" + std::string(list) + "\" in " + std::string(what) + ": " +
                          std::string(reason));
  };
  const auto number = [&](std::string_view digits) {
    int value = -1;
    if (digits.empty() || digits.front() < '0' || digits.front() > '9') throw fail("expected a CPU number");
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && value > detail::topo::max_cpu_index)) {
      throw fail("CPU number above " + std::to_string(detail::topo::max_cpu_index));
    }
    if (ec != std::errc() || end != digits.data() + digits.size()) throw fail("expected a CPU number");
    return value;
  };
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string_view item = list.substr(start, comma == std::string_view::npos ? list.npos : comma - start);
    const std::size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      cpus.push_back(number(item));
    } else {
      const int first = number(item.substr(0, dash));
      const int last = number(item.substr(dash + 1));
      if (last < first) throw fail("range " + std::string(item) + " runs backwards");
      for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

CPUTRAIN_DECL std::string format_cpulist(std::span<const int> cpus) {
  std::vector<int> sorted(cpus.begin(), cpus.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string text;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(sorted[i]);
    if (j > i) text += '-' + std::to_string(sorted[j]);
    i = j + 1;
  }
  return text;
}

CPUTRAIN_DECL std::vector<int> process_allowed_cpus() {
  if (!detail::thread_binding_stack.empty() && !detail::thread_binding_stack.front().cpus.empty()) {
    return detail::thread_binding_stack.front().cpus;
  }
  std::vector<int> cpus;
  if (const int err = detail::topo::read_thread_affinity(cpus); err != 0) {
    throw system_error("cputrain: sched_getaffinity failed: " + detail::topo::errno_text(err));
  }
  return cpus;
}

CPUTRAIN_DECL topology topology::detect() {
  const std::vector<int> allowed = process_allowed_cpus();
#if CPUTRAIN_HAVE_HWLOC
  return from_hwloc(allowed);
#else
  return detect_from_sysfs("/sys", allowed);
#endif
}

CPUTRAIN_DECL topology topology::from_sysfs(const std::filesystem::path& sys_root) {
  return read_sysfs(sys_root, nullptr);
}

CPUTRAIN_DECL topology topology::from_sysfs(const std::filesystem::path& sys_root, std::span<const int> allowed_cpus) {
  const std::set<int> allowed(allowed_cpus.begin(), allowed_cpus.end());
  return read_sysfs(sys_root, &allowed);
}

CPUTRAIN_DECL topology topology::detect_from_sysfs(const std::filesystem::path& sys_root,
                                                  std::span<const int> allowed_cpus) {
  std::error_code ec;
  if (std::filesystem::is_directory(sys_root / "devices" / "system" / "node", ec)) {
    return from_sysfs(sys_root, allowed_cpus);
  }
  numa_node node;
  node.os_index = 0;
  node.cpus.assign(allowed_cpus.begin(), allowed_cpus.end());
  node.cores = count_cores(sys_root / "devices" / "system" / "cpu", node.cpus);
  struct sysinfo info {};
  if (sysinfo(&info) == 0) node.memory_bytes = std::uint64_t{info.totalram} * info.mem_unit;
  return checked({std::move(node)}, "affinity", "the process's CPU affinity");
}

CPUTRAIN_DECL topology topology::from_nodes(std::vector<numa_node> nodes, std::string source) {
  prepare(nodes);
  if (const std::string problem = validate(nodes); !problem.empty()) {
    throw usage_error("cputrain::topology::from_nodes: " + problem);
  }
  return topology(std::move(nodes), std::move(source));
}

CPUTRAIN_DECL std::string topology::describe() const {
  std::string text;
  for (const numa_node& node : nodes_) {
    if (!text.empty()) text += '\n';
    text += "node " + std::to_string(node.os_index) + ": cpus " + format_cpulist(node.cpus) + " (" +
            std::to_string(node.cores) + (node.cores == 1 ? " core), " : " cores), ");
    if (node.memory_bytes == 0) {
      text += "memory unknown";
    } else {
      char gib[32];
      std::snprintf(gib, sizeof gib, "%.1f GiB", static_cast<double>(node.memory_bytes) / (1024.0 * 1024 * 1024));
      text += gib;
    }
  }
  return text;
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

#if CPUTRAIN_HAVE_HWLOC

namespace detail::topo {

/// Where hwloc was told to look, for error messages.
inline std::string hwloc_input() {
  std::string where = "this machine";
  for (const char* name : {"HWLOC_XMLFILE", "HWLOC_SYNTHETIC", "HWLOC_FSROOT"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
      where = std::string(name) + "=\"" + value + "\"";
    }
  }
  return where;
}

/// An hwloc topology, loaded, freed on destruction.
class hwloc_topology_owner {
 public:
  hwloc_topology_owner();
  ~hwloc_topology_owner() { hwloc_topology_destroy(topology_); }
  hwloc_topology_owner(const hwloc_topology_owner&) = delete;
  hwloc_topology_owner& operator=(const hwloc_topology_owner&) = delete;

  hwloc_topology_t get() const noexcept { return topology_; }

 private:
  std::string ignored_simulation() const {
    const char* xml = std::getenv("HWLOC_XMLFILE");
    if (xml != nullptr && *xml != '\0') {
      if (!std::ifstream(xml)) return std::string("HWLOC_XMLFILE=\"") + xml + "\" cannot be opened";
      return {};
    }
    const char* synthetic = std::getenv("HWLOC_SYNTHETIC");
    if (synthetic != nullptr && *synthetic != '\0') {
      const char* backend = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topology_), "Backend");
      if (backend == nullptr || std::string_view(backend) != "Synthetic") {
        return std::string("hwloc could not use HWLOC_SYNTHETIC=\"") + synthetic + "\" (not a valid description?)";
      }
    }
    return {};
  }

  hwloc_topology_t topology_ = nullptr;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL hwloc_topology_owner::hwloc_topology_owner() {
  // A library built against one hwloc ABI and run with another misreads every structure.
  if ((hwloc_get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) {
    throw topology_error("cputrain: built with hwloc API " + std::to_string(HWLOC_API_VERSION >> 16) +
                         ".x but running with " + std::to_string(hwloc_get_api_version() >> 16) + ".x");
  }
  if (hwloc_topology_init(&topology_) != 0) {
    throw topology_error("cputrain: hwloc_topology_init failed: " + errno_text(errno));
  }
  // Only NUMA nodes, cores and PUs are used; skipping caches makes loading cheaper.
  hwloc_topology_set_cache_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_icache_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_NONE);
  if (hwloc_topology_load(topology_) != 0) {
    const int err = errno;
    hwloc_topology_destroy(topology_);
    throw topology_error("cputrain: hwloc could not read the topology of " + hwloc_input() + ": " + errno_text(err));
  }
  // hwloc falls back to the real machine, silently, when the simulation it was asked for cannot be read; a run
  // meant to be tested on that simulation must not go on without it.
  if (const std::string problem = ignored_simulation(); !problem.empty()) {
    hwloc_topology_destroy(topology_);
    throw topology_error("cputrain: " + problem);
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// An hwloc bitmap, freed on destruction.
class hwloc_bitmap_owner {
 public:
  hwloc_bitmap_owner() : bitmap_(hwloc_bitmap_alloc()) {
    if (bitmap_ == nullptr) throw std::bad_alloc();
  }
  ~hwloc_bitmap_owner() { hwloc_bitmap_free(bitmap_); }
  hwloc_bitmap_owner(const hwloc_bitmap_owner&) = delete;
  hwloc_bitmap_owner& operator=(const hwloc_bitmap_owner&) = delete;

  hwloc_bitmap_t get() const noexcept { return bitmap_; }

 private:
  hwloc_bitmap_t bitmap_;
};

inline std::vector<int> hwloc_bitmap_indices(hwloc_const_bitmap_t bitmap) {
  std::vector<int> indices;
  for (int i = hwloc_bitmap_first(bitmap); i >= 0; i = hwloc_bitmap_next(bitmap, i)) indices.push_back(i);
  return indices;
}

}  // namespace detail::topo

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL topology topology::from_hwloc(std::span<const int> allowed_cpus) {
  const detail::topo::hwloc_topology_owner hwloc;
  const hwloc_topology_t topo = hwloc.get();
  const std::string where = "hwloc (" + detail::topo::hwloc_input() + ")";

  const detail::topo::hwloc_bitmap_owner allowed;
  for (const int cpu : allowed_cpus) hwloc_bitmap_set(allowed.get(), static_cast<unsigned>(cpu));
  const bool has_cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0;

  std::vector<numa_node> nodes;
  const detail::topo::hwloc_bitmap_owner usable;
  for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, nullptr); obj != nullptr;
       obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, obj)) {
    if (obj->cpuset == nullptr) continue;
    if (obj->os_index == HWLOC_UNKNOWN_INDEX) {
      throw topology_error("cputrain: " + where + " reports a NUMA node without an OS index");
    }
    hwloc_bitmap_and(usable.get(), obj->cpuset, allowed.get());
    if (hwloc_bitmap_iszero(usable.get())) continue;
    numa_node node;
    node.os_index = static_cast<int>(obj->os_index);
    node.cpus = detail::topo::hwloc_bitmap_indices(usable.get());
    if (has_cores) {
      for (hwloc_obj_t core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, nullptr); core != nullptr;
           core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core)) {
        if (hwloc_bitmap_intersects(core->cpuset, usable.get())) ++node.cores;
      }
    } else {
      node.cores = static_cast<int>(node.cpus.size());  // hwloc found no cores (some VMs): a PU is a core
    }
    node.memory_bytes = obj->attr != nullptr ? obj->attr->numanode.local_memory : 0;
    nodes.push_back(std::move(node));
  }
  if (nodes.empty()) throw topology_error(no_cpu_left(where, allowed_cpus));
  return checked(std::move(nodes), "hwloc", where);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

#endif  // CPUTRAIN_HAVE_HWLOC

}  // namespace cputrain
