// cputrain-machine: what the library does on this machine today, in one run.
//
// Finds the NUMA nodes and the thread layout the Hugging Face CPU guide's rule gives, starts one pinned oneTBB
// arena per node, and in each arena stores a weight-sized buffer in bf16 (memory placed on that node by
// alloc::numa_local) and reads it back, reporting the speed and the largest rounding error, which bf16's 8
// significant bits bound by 2^-8 relative (half a unit in the last place).
#include <cputrain/cputrain.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <vector>

#include <boost/program_options.hpp>

namespace po = boost::program_options;
using policy = cputrain::policy<cputrain::precision::bf16_mixed, cputrain::parallel::single,
                                cputrain::alloc::numa_local>;

namespace {

struct arena_result {
  int node = -1;
  int threads = 0;
  double seconds = 0;
  double max_relative_error = 0;
};

arena_result store_and_reload(std::size_t elements, int repeats) {
  // Allocated and first touched inside the arena, so the pages live on its node.
  policy::buffer<float> weights(elements);
  policy::buffer<cputrain::bf16> stored(elements);
  policy::buffer<float> reloaded(elements);
  for (std::size_t i = 0; i < elements; ++i) {
    weights[i] = std::sin(static_cast<float>(i) * 0.001f) * 0.02f;  // the scale of BERT's initial weights
  }
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    cputrain::to_bf16(weights, stored);
    cputrain::to_float(stored, reloaded);
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  arena_result result;
  result.node = cputrain::this_thread_numa_node();
  result.seconds = took.count();
  for (std::size_t i = 0; i < elements; ++i) {
    if (weights[i] != 0.0f) {
      result.max_relative_error =
          std::max(result.max_relative_error, std::abs(static_cast<double>(reloaded[i] - weights[i]) / weights[i]));
    }
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<int> threads;
  std::size_t million_elements = 0;
  int repeats = 0;
  po::options_description options("cputrain-machine options");
  options.add_options()("help,h", "show this help")(
      "threads", po::value<int>(), "threads in all (default: each NUMA node's cores minus one, or OMP_NUM_THREADS)")(
      "melements", po::value<std::size_t>(&million_elements)->default_value(32),
      "millions of float weights per NUMA node (bert-base has 110)")(
      "repeats", po::value<int>(&repeats)->default_value(5), "store-and-reload passes to time");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return 0;
    }
    if (vm.count("threads")) threads = vm["threads"].as<int>();
    if (million_elements == 0 || million_elements > 4096) throw cputrain::usage_error("--melements must be 1..4096");
    if (repeats < 1 || repeats > 1000) throw cputrain::usage_error("--repeats must be 1..1000");
  } catch (const std::exception& e) {
    std::cerr << "cputrain-machine: " << e.what() << "\n" << options << "\n";
    return 2;
  }

  try {
    cputrain::check_cpu_supports_build();
    const auto running = cputrain::cpu_features::detect();
    std::string features;
    for (const auto& f : running.names()) features += " " + f;
    std::printf("cputrain %s, bf16 conversion path: %s; this CPU has:%s\n", cputrain::version_string,
                cputrain::bf16_conversion_isa().data(), features.c_str());
    std::printf("GEMM paths: fp32 %s; bf16 %s\n", cputrain::kernels::gemm_path_description(false).c_str(),
                cputrain::kernels::gemm_path_description(true).c_str());

    const auto topo = cputrain::topology::detect();
    std::printf("topology (%s):\n%s\n", topo.source().c_str(), topo.describe().c_str());
    const auto layout = policy::parallel_policy::discover(topo, cputrain::thread_request{threads, true});
    std::printf("layout: %s", layout.describe().c_str());

    cputrain::numa_arenas arenas(layout.nodes, layout.threads);
    const std::size_t elements = million_elements * 1'000'000;
    std::vector<arena_result> results(arenas.size());
    arenas.run_on_all([&](std::size_t a) {
      results[a] = store_and_reload(elements, repeats);
      results[a].threads = arenas.threads_of(a);
    });

    double worst = 0;
    for (const auto& r : results) {
      // each pass reads 4 + 2 bytes and writes 2 + 4 bytes per element
      const double gbytes = 12.0 * static_cast<double>(elements) * repeats / r.seconds / 1e9;
      std::printf("arena on NUMA node %d, %d thread(s): %zu M weights stored as bf16 and reloaded %d times: "
                  "%.2f s, %.1f GB/s, %.2f G elements/s each way; largest relative error %.3g (bound 2^-8 = %.3g)\n",
                  r.node, r.threads, million_elements, repeats, r.seconds, gbytes,
                  static_cast<double>(elements) * repeats / r.seconds / 1e9, r.max_relative_error,
                  std::ldexp(1.0, -8));
      worst = std::max(worst, r.max_relative_error);
    }
    std::printf("policy: precision %s, parallel %s, allocator %s; bf16 storage halves %zu MB of fp32 weights to "
                "%zu MB per node\n",
                policy::precision_policy::name.data(), policy::parallel_policy::name.data(),
                policy::allocator_policy::name.data(), elements * 4 / 1'000'000, elements * 2 / 1'000'000);
    return worst <= std::ldexp(1.0, -8) ? 0 : 1;
  } catch (const cputrain::usage_error& e) {
    std::cerr << "cputrain-machine: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cputrain-machine: " << e.what() << "\n";
    return 1;
  }
}
