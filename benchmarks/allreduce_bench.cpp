// cputrain-bench-allreduce: what averaging gradients over MPI costs, and how much of it the gradient reducer hides
// behind backward. Run it under mpirun:
//   mpirun -n 2 cputrain-bench-allreduce [--sizes 4,25,100,bert] [--repeats 5] [--bucket-mb 25] [--compute-ratio 1]
//                                        [--json FILE]
// The buffer of each size is the last N MB of BERT-base's (uncased, question answering: 108.9 M parameters,
// 435.6 MB) gradient buffer, with its real tensor boundaries (the first tensor cut to fit); "bert" is all of it.
// For each size, side by side in one run:
//   raw          one MPI_Allreduce of the whole buffer (MPI_IN_PLACE, MPI_SUM), no averaging
//   pieces       mpi_communicator::all_reduce_sum of the whole buffer: MPI_Allreduce in 8 MiB pieces, no averaging
//   overlap      gradient_reducer, overlap on: every bucket made ready at once (ready_from(0)), then finish()
//   no-overlap   gradient_reducer, overlap off: finish() reduces bucket by bucket on the calling thread
// and then a simulated backward: compute of (compute ratio x the no-overlap time), spread over the buckets in
// proportion to their size, with ready_from after each bucket's share; the compute is a busy loop on the main
// thread ("spin", which competes with the communication thread for a core) or a sleep ("sleep": the core is free,
// as when a rank keeps a core for communication). Against the same compute with overlap off (compute, then
// finish()), it reports the communication time, the part finish() still waited for (exposed), the fraction
// hidden (1 - exposed / communication) and the step's speed-up (sizes of one bucket have nothing to overlap).
// Every time is the median over repeats of the slowest rank's time (ranks start each repeat together).
// --json FILE: rank 0 also writes both tables' figures (seconds, unrounded) to FILE, for the plots
// (benchmarks/plots/collect.sh).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/program_options.hpp>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/mpi/gradient_reducer.hpp"
#include "cputrain/mpi/communicator.hpp"
#include "cputrain/mpi/environment.hpp"

namespace po = boost::program_options;
namespace ct = cputrain;
namespace dist = cputrain::dist;

namespace {

using clock_type = std::chrono::steady_clock;

// BERT-base-uncased for question answering, parameter tensors in forward order, sizes in floats.
std::vector<std::size_t> bert_base_tensor_sizes() {
  constexpr std::size_t hidden = 768;
  constexpr std::size_t intermediate = 3072;
  std::vector<std::size_t> sizes = {30522 * hidden, 512 * hidden, 2 * hidden, hidden, hidden};  // embeddings + LN
  for (int layer = 0; layer < 12; ++layer) {
    for (int qkv = 0; qkv < 3; ++qkv) sizes.insert(sizes.end(), {hidden * hidden, hidden});
    sizes.insert(sizes.end(), {hidden * hidden, hidden, hidden, hidden});                    // attention output, LN
    sizes.insert(sizes.end(), {intermediate * hidden, intermediate});                          // intermediate
    sizes.insert(sizes.end(), {hidden * intermediate, hidden, hidden, hidden});                // output, LN
  }
  sizes.insert(sizes.end(), {2 * hidden, 2});  // qa_outputs
  return sizes;
}

struct layout {
  std::size_t floats = 0;
  std::vector<std::size_t> offsets;
};

// The last `floats` of BERT-base's gradient buffer (all of it if floats is 0 or larger).
layout tail_of_bert(std::size_t floats) {
  const auto sizes = bert_base_tensor_sizes();
  std::size_t total = 0;
  for (const std::size_t s : sizes) total += s;
  if (floats == 0 || floats > total) floats = total;
  layout l;
  l.floats = floats;
  const std::size_t cut = total - floats;  // offsets in the full buffer below this are dropped
  std::size_t at = 0;
  l.offsets.push_back(0);
  for (const std::size_t s : sizes) {
    if (at > cut) l.offsets.push_back(at - cut);
    at += s;
  }
  return l;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The slowest rank's value (seconds, to the nanosecond).
double slowest(dist::mpi_communicator& comm, double seconds) {
  return static_cast<double>(comm.all_reduce_max(static_cast<std::int64_t>(seconds * 1e9))) * 1e-9;
}

void spin_for(double seconds) {
  const auto end = clock_type::now() + std::chrono::duration<double>(seconds);
  volatile double sink = 1.0;
  while (clock_type::now() < end) {
    for (int i = 0; i < 64; ++i) sink = sink * 1.0000001 + 1e-9;
  }
}

void compute_for(double seconds, bool spin) {
  if (seconds <= 0) return;
  if (spin) {
    spin_for(seconds);
  } else {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
}

struct settings {
  std::string sizes = "4,25,100,bert";
  int repeats = 5;
  double bucket_mb = 25;
  double compute_ratio = 1.0;
  std::string json;  // file for the figures as JSON (rank 0); empty: none
};

struct simulated {
  double step = 0;           // whole step: compute + what finish() waited for
  double communication = 0;  // time in the collectives
  double exposed = 0;        // finish()'s time
};

std::string fmt(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace

// Errors are caught here, inside the MPI environment's lifetime: an exception unwinding through mpi_environment
// aborts the whole job.
int run(dist::mpi_environment& mpi, int argc, char** argv) {
  settings s;
  po::options_description options("cputrain-bench-allreduce options (run under mpirun)");
  options.add_options()("help,h", "show this help")(
      "sizes", po::value(&s.sizes)->default_value(s.sizes),
      "comma-separated buffer sizes in MB (10^6 bytes), the tail of BERT-base's gradients; \"bert\" = all of it")(
      "repeats", po::value(&s.repeats)->default_value(s.repeats), "timed repeats of each case (median kept)")(
      "bucket-mb", po::value(&s.bucket_mb)->default_value(s.bucket_mb), "reducer bucket size in MiB")(
      "compute-ratio", po::value(&s.compute_ratio)->default_value(s.compute_ratio),
      "simulated backward compute, as a multiple of the reducer's time without overlap")(
      "json", po::value(&s.json), "also write the figures as JSON to this file (rank 0)");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
    dist::mpi_communicator comm;
    const bool root = comm.rank() == 0;
    if (vm.count("help")) {
      if (root) std::cout << options << "\n";
      return 0;
    }
    if (s.repeats < 1) throw ct::usage_error("--repeats must be at least 1");
    if (s.bucket_mb < 0) throw ct::usage_error("--bucket-mb must be >= 0");
    if (s.compute_ratio < 0) throw ct::usage_error("--compute-ratio must be >= 0");
    std::vector<std::size_t> sizes;  // floats; 0 = all of BERT-base
    {
      std::istringstream list(s.sizes);
      std::string item;
      while (std::getline(list, item, ',')) {
        if (item == "bert") {
          sizes.push_back(0);
        } else {
          std::size_t used = 0;
          const double mb = std::stod(item, &used);
          if (used != item.size() || mb <= 0) throw ct::usage_error("--sizes: \"" + item + "\" is not a size in MB");
          sizes.push_back(static_cast<std::size_t>(mb * 1e6 / sizeof(float)));
        }
      }
    }
    const dist::reducer_options overlap_on{.bucket_bytes = static_cast<std::size_t>(s.bucket_mb * (1 << 20)),
                                           .overlap = true};
    dist::reducer_options overlap_off = overlap_on;
    overlap_off.overlap = false;

    if (root) {
      std::printf("%d ranks (%d on this machine), MPI thread level %s, %d repeats, buckets of %.0f MiB, "
                  "compute = %.2f x the reducer's time without overlap\n\n",
                  comm.size(), comm.local_size(), dist::mpi_thread_level_name(mpi.provided_level()).c_str(),
                  s.repeats, s.bucket_mb, s.compute_ratio);
    }
    std::ostringstream table;
    std::ostringstream overlap_table;
    table << "| MB | tensors | buckets | raw MPI_Allreduce ms (GB/s) | all_reduce_sum, 8 MiB pieces ms (GB/s) | "
             "vs raw | reducer, overlap ms (GB/s) | vs raw | reducer, no overlap ms (GB/s) | vs raw |\n"
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    nlohmann::ordered_json json_sizes = nlohmann::ordered_json::array();
    nlohmann::ordered_json json_simulated = nlohmann::ordered_json::array();
    overlap_table << "| MB | compute | compute ms | communication ms | exposed ms | hidden | step ms | "
                     "no-overlap step ms | speed-up |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";

    for (const std::size_t requested : sizes) {
      const layout l = tail_of_bert(requested);
      const double megabytes = static_cast<double>(l.floats * sizeof(float)) / 1e6;
      std::vector<float> grads(l.floats);
      const auto refill = [&] { std::fill(grads.begin(), grads.end(), 1e-3f * static_cast<float>(comm.rank() + 1)); };
      dist::gradient_reducer with(comm, grads, l.offsets, overlap_on);
      dist::gradient_reducer without(comm, grads, l.offsets, overlap_off);

      // One untimed round of each first: page faults, MPI's connection set-up and buffers.
      refill();
      comm.all_reduce_sum(grads);
      MPI_Allreduce(MPI_IN_PLACE, grads.data(), static_cast<int>(grads.size()), MPI_FLOAT, MPI_SUM,
                    comm.native_handle());
      with.ready_from(0);
      with.finish();
      without.finish();

      std::vector<double> raw, pieces, on, off;
      for (int r = 0; r < s.repeats; ++r) {
        refill();
        comm.barrier();
        auto start = clock_type::now();
        if (MPI_Allreduce(MPI_IN_PLACE, grads.data(), static_cast<int>(grads.size()), MPI_FLOAT, MPI_SUM,
                          comm.native_handle()) != MPI_SUCCESS) {
          throw ct::error("MPI_Allreduce failed");
        }
        raw.push_back(slowest(comm, std::chrono::duration<double>(clock_type::now() - start).count()));

        refill();
        comm.barrier();
        start = clock_type::now();
        comm.all_reduce_sum(grads);
        pieces.push_back(slowest(comm, std::chrono::duration<double>(clock_type::now() - start).count()));

        refill();
        comm.barrier();
        start = clock_type::now();
        with.ready_from(0);
        with.finish();
        on.push_back(slowest(comm, std::chrono::duration<double>(clock_type::now() - start).count()));

        refill();
        comm.barrier();
        start = clock_type::now();
        without.finish();
        off.push_back(slowest(comm, std::chrono::duration<double>(clock_type::now() - start).count()));
      }
      const double t_raw = median(raw), t_pieces = median(pieces), t_on = median(on), t_off = median(off);
      const double bytes = static_cast<double>(l.floats * sizeof(float));
      table << "| " << fmt(megabytes, 1) << " | " << l.offsets.size() << " | " << with.bucket_count() << " | "
            << fmt(t_raw * 1e3, 1) << " (" << fmt(bytes / t_raw / 1e9, 2) << ") | " << fmt(t_pieces * 1e3, 1)
            << " (" << fmt(bytes / t_pieces / 1e9, 2) << ") | " << fmt(t_pieces / t_raw, 2) << "x | "
            << fmt(t_on * 1e3, 1) << " ("
            << fmt(bytes / t_on / 1e9, 2) << ") | " << fmt(t_on / t_raw, 2) << "x | " << fmt(t_off * 1e3, 1) << " ("
            << fmt(bytes / t_off / 1e9, 2) << ") | " << fmt(t_off / t_raw, 2) << "x |\n";
      json_sizes.push_back({{"megabytes", megabytes},
                            {"tensors", l.offsets.size()},
                            {"buckets", with.bucket_count()},
                            {"raw_seconds", t_raw},
                            {"all_reduce_sum_seconds", t_pieces},
                            {"reducer_overlap_seconds", t_on},
                            {"reducer_no_overlap_seconds", t_off}});

      // Simulated backward. Each bucket's share of the compute comes before its ready_from.
      const double compute = s.compute_ratio * t_off;
      const auto buckets = with.buckets();
      const auto backward = [&](dist::gradient_reducer& reducer, bool spin) {
        refill();
        comm.barrier();
        const auto start = clock_type::now();
        for (const auto& [begin, end] : buckets) {
          compute_for(compute * static_cast<double>(end - begin) / static_cast<double>(l.floats), spin);
          reducer.ready_from(begin);
        }
        reducer.finish();
        simulated out;
        out.step = slowest(comm, std::chrono::duration<double>(clock_type::now() - start).count());
        out.communication = slowest(comm, reducer.last_step().communication_seconds);
        out.exposed = slowest(comm, reducer.last_step().exposed_seconds);
        return out;
      };
      // One bucket is ready only when backward ends: there is nothing to overlap.
      for (const bool spin : {true, false}) {
        if (buckets.size() < 2) break;
        std::vector<double> step, comm_s, exposed, hidden, baseline;
        for (int r = 0; r < s.repeats; ++r) {
          const simulated a = backward(with, spin);
          const simulated b = backward(without, spin);
          step.push_back(a.step);
          comm_s.push_back(a.communication);
          exposed.push_back(a.exposed);
          hidden.push_back(a.communication > 0 ? 1 - a.exposed / a.communication : 0);
          baseline.push_back(b.step);
        }
        overlap_table << "| " << fmt(megabytes, 1) << " | " << (spin ? "spin" : "sleep") << " | "
                      << fmt(compute * 1e3, 1) << " | " << fmt(median(comm_s) * 1e3, 1) << " | "
                      << fmt(median(exposed) * 1e3, 1) << " | " << fmt(median(hidden) * 100, 0) << " % | "
                      << fmt(median(step) * 1e3, 1) << " | " << fmt(median(baseline) * 1e3, 1) << " | "
                      << fmt(median(baseline) / median(step), 2) << "x |\n";
        json_simulated.push_back({{"megabytes", megabytes},
                                  {"compute", spin ? "spin" : "sleep"},
                                  {"compute_seconds", compute},
                                  {"communication_seconds", median(comm_s)},
                                  {"exposed_seconds", median(exposed)},
                                  {"hidden", median(hidden)},
                                  {"step_seconds", median(step)},
                                  {"no_overlap_step_seconds", median(baseline)}});
      }
      if (root) std::fprintf(stderr, "done: %.1f MB\n", megabytes);
    }
    if (root) {
      std::cout << "Gradient averaging (all buckets ready at once):\n\n" << table.str() << "\n"
                << "Simulated backward (compute spread over the buckets, ready_from after each):\n\n"
                << overlap_table.str() << std::flush;
      if (!s.json.empty()) {
        const nlohmann::ordered_json out = {
            {"ranks", comm.size()},
            {"ranks_on_this_machine", comm.local_size()},
            {"mpi_thread_level", dist::mpi_thread_level_name(mpi.provided_level())},
            {"repeats", s.repeats},
            {"bucket_mib", s.bucket_mb},
            {"compute_ratio", s.compute_ratio},
            {"sizes", json_sizes},
            {"simulated_backward", json_simulated}};
        std::ofstream file(s.json);
        file << out.dump(2) << "\n";
        if (!file) throw ct::error("cannot write " + s.json);
      }
    }
    return 0;
  } catch (const ct::usage_error& e) {
    std::cerr << "cputrain-bench-allreduce: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-allreduce: " << e.what() << "\n";
    return 1;
  }
}

int main(int argc, char** argv) {
  try {
    dist::mpi_environment mpi(argc, argv);
    return run(mpi, argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-allreduce: " << e.what() << "\n";
    return 1;
  }
}
