// What every example trainer (run_qa, run_glue, ...) does the same way around its task: main() with MPI, the
// thread layout and NUMA arenas, SIGTERM handling and exit codes (program_main); printing on rank 0 only (say);
// the memory bill checked before allocating (require_run_memory); loading the pretrained weights; and the
// files written after training. A program copied out of examples/ takes this header with it.
#pragma once

#include <cputrain/cli.hpp>
#include <cputrain/cputrain.hpp>
#include <cputrain/mpi.hpp>

#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <algorithm>
#include <optional>
#include <string>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

namespace cputrain::examples {

using parallel = cputrain::parallel::multi_node;
using communicator = parallel::communicator;

inline int this_rank = 0;  // only rank 0 speaks and writes

inline void say(const std::string& line) {
  if (this_rank != 0) return;
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
}

/// The most this process has held (getrusage: the kernel's count of resident pages).
inline double peak_resident_bytes() {
  ::rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

/// Refuses a bill that cannot fit, naming config.json and the fields and flags that make it big; with `header`,
/// prints it. Returns the estimated peak.
inline double require_run_memory(const memory_bill& bill, const std::filesystem::path& config, std::size_t ranks_here,
                                 bool header, std::size_t feature_bytes = 0) {
  const auto allowance = read_memory_allowance().shared_by(ranks_here);
  require_memory(bill, allowance, config.string());
  const double peak = peak_bytes(bill, allowance);
  if (header) {
    say("memory: about " + format_bytes(peak) + " at the peak = " +
        format_bytes(static_cast<double>(allowance.resident)) + " held now (the program, the tokenizer" +
        (feature_bytes > 0 ? ", " + format_bytes(static_cast<double>(feature_bytes)) + " of features" : "") + ") + " +
        bill.breakdown() + "; this machine allows " + format_bytes(static_cast<double>(allowance.total())) + " (" +
        allowance.source + ")");
  }
  return peak;
}

/// The published weights of --model_name_or_path, or a new model from its config; says which.
template <class Model>
void load_pretrained(Model& model, const train::model_files& files) {
  if (!files.weights) {
    say("training a new model from " + files.config.string());
    return;
  }
  const auto report = io::load_weights(model, *files.weights, io::weight_loading::pretrained);
  for (const auto& line : train::weight_load_messages(report, *files.weights)) say(line);
}

/// A data file as a table (run_glue's, run_ner's), cut to `max_samples` rows; refused when it holds none.
inline data::dataset_table read_data_table(const std::string& file, std::optional<int> max_samples,
                                           const std::string& flag) {
  auto table = data::read_dataset_table(file);
  if (table.size() == 0) throw data::data_error(flag + " " + file + ": holds no examples");
  if (max_samples && static_cast<std::size_t>(*max_samples) < table.size()) {
    const auto n = static_cast<std::size_t>(*max_samples);
    for (auto& column : table.columns) column.resize(n);
    table.row_lines.resize(n);
  }
  say(flag + " " + file + ": " + std::to_string(table.size()) + " examples");
  return table;
}

/// --max_seq_length, at most the model's positions (a notice says when it is cut); 0 (run_ner's and run_mlm's
/// unset) is the positions, up to `unset_limit` (run_mlm's 1024).
inline std::size_t sequence_length(const cli::training_args& args, const nn::bert_config& config,
                                   std::size_t unset_limit = std::numeric_limits<std::size_t>::max()) {
  const auto positions = static_cast<std::size_t>(config.max_sequence_length());
  const auto asked = static_cast<std::size_t>(args.max_seq_length);
  if (asked == 0) {
    if (positions > unset_limit)
      say("notice: the model has " + std::to_string(positions) + " positions; using " + std::to_string(unset_limit) +
          " (--max_seq_length)");
    return std::min(positions, unset_limit);
  }
  if (asked <= positions) return asked;
  say("notice: --max_seq_length " + std::to_string(asked) + " is longer than the model's " + std::to_string(positions) +
      " positions; using " + std::to_string(positions));
  return positions;
}

/// Everything a run of `Head`'s model will allocate from here on: the model, AdamW's moments when training, the
/// activations of the larger batch it runs (`evaluates`: an evaluation batch too). Required against what the
/// process may take before any of it is allocated.
template <class Head>
memory_bill run_memory(const cli::training_args& args, const nn::bert_config& config, std::size_t max_seq_length,
                       bool evaluates) {
  const std::size_t gemm_bytes = args.bf16 ? 2 : 4;
  const auto options = cli::to_training_options(args);
  if (args.do_train) return train::training_memory<Head>(config, options, gemm_bytes, max_seq_length, evaluates, "--");
  memory_bill bill = nn::model_memory<Head>(config, gemm_bytes);
  bill.add(train::batch_memory<Head>(config, options, gemm_bytes, max_seq_length, evaluates, "--"));
  return bill;
}

/// run.template operator()<Policy>() under the precision --bf16 asks for, with parameters, gradients and
/// activations on the NUMA node of the arena the rank computes in; says which matrix products run.
template <class Run>
int run_in_precision(const cli::training_args& args, Run&& run) {
  using fp32 = policy<precision::fp32, parallel, alloc::numa_local>;
  using bf16 = policy<precision::bf16_mixed, parallel, alloc::numa_local>;
  say("matrix products (" + std::string(args.bf16 ? "bf16" : "fp32") + "): " + kernels::gemm_path_description(args.bf16));
  if (args.bf16) return run.template operator()<bf16>();
  return run.template operator()<fp32>();
}

/// The training header: `examples` says what is trained on ("900 features of 800 questions").
template <class Plan>
void say_training_header(const Plan& plan, const cli::training_args& args, const std::string& examples, int world,
                         const std::optional<std::filesystem::path>& resume) {
  say("***** Running training *****");
  say("  Num examples = " + examples);
  say("  Num Epochs = " + std::to_string(plan.epochs) + ", total optimization steps = " + std::to_string(plan.max_steps) +
      ", precision = " + (args.bf16 ? "bf16" : "fp32"));
  say("  Total batch size = " +
      std::to_string(args.per_device_train_batch_size * world * args.gradient_accumulation_steps) + " (" +
      std::to_string(args.per_device_train_batch_size) + " per process x " + std::to_string(world) + " process" +
      (world == 1 ? "" : "es") + " x " + std::to_string(args.gradient_accumulation_steps) + " accumulation steps)");
  if (resume) say("  Resuming from " + resume->string());
}

/// After training, on rank 0: the model and tokenizer, training_args.json, trainer_state.json and the train
/// metrics, as the scripts' trainer.save_model(), save_state() and save_metrics("train") write them.
template <class Trainer, class Model>
void save_training_outputs(const Trainer& trainer, const Model& model, const text::tokenizer& tokenizer,
                           const cli::training_args& args, const train::train_result& result, std::size_t samples) {
  if (!trainer.is_main_process()) return;
  train::save_pretrained(args.output_dir, model, tokenizer);
  io::write_file_atomically(std::filesystem::path(args.output_dir) / "training_args.json", cli::to_json(args).dump(2) + "\n");
  trainer.state().write(std::filesystem::path(args.output_dir) / "trainer_state.json");
  nlohmann::json metrics = result.to_json();
  metrics["train_samples"] = samples;
  train::log_metrics("train", metrics);
  train::save_metrics(args.output_dir, "train", metrics);
}

/// Metrics (sorted, as transformers writes them) as the log history's entries hold them.
inline nlohmann::ordered_json as_ordered(const nlohmann::json& metrics) {
  return nlohmann::ordered_json::parse(metrics.dump());
}

/// `split`_runtime, _samples_per_second and _steps_per_second, as the Trainer adds them to every evaluation.
inline void add_speed_metrics(nlohmann::json& metrics, const std::string& split, double seconds, std::size_t samples,
                              std::size_t batch_size) {
  metrics[split + "_runtime"] = seconds;
  metrics[split + "_samples_per_second"] = seconds > 0 ? static_cast<double>(samples) / seconds : 0.0;
  const double steps = std::ceil(static_cast<double>(samples) / static_cast<double>(batch_size));
  metrics[split + "_steps_per_second"] = seconds > 0 ? steps / seconds : 0.0;
}

/// The output directory, owned by rank 0 for the run: the lock, and the checkpoint to resume from.
struct output_claim {
  std::unique_ptr<train::output_dir_lock> lock;  // a lock does not move; its owner does
  std::optional<std::filesystem::path> resume;
};

/// A refusal every rank of the job received from the one that made it, so that all of them stop alike: rank 0
/// prints it and every rank returns `code` from main(). No MPI_Abort: under MPICH's launcher an aborting job can
/// lose the aborting rank's last lines, and this message is the one the user needs (docs/distributed.md).
class refused_by_job : public error {
 public:
  refused_by_job(int code, const std::string& what) : error(what), code_(code) {}
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

/// Rank 0 takes the output directory's lock, applies the scripts' rule (resume from the last checkpoint, refuse,
/// or overwrite) and tells the others where to resume from, or that it refused (refused_by_job on every rank).
inline output_claim claim_output_dir(const cli::training_args& args, communicator& comm) {
  output_claim claim;
  std::string outcome;  // "R<path>" resume from path (empty: afresh), "2<message>" / "1<message>" refused
  if (comm.rank() == 0) {
    try {
      train::create_output_dir(args.output_dir);
      claim.lock = std::make_unique<train::output_dir_lock>(args.output_dir);
      claim.resume = train::prepare_output_dir(cli::to_output_dir_options(args));
      outcome = "R" + (claim.resume ? claim.resume->string() : std::string());
    } catch (const usage_error& e) {
      outcome = std::string("2") + e.what();
    } catch (const error& e) {
      outcome = std::string("1") + e.what();
    }
  }
  if (comm.size() > 1) comm.broadcast_bytes(outcome, 0);
  if (outcome.empty()) throw error("output directory: rank 0 sent no outcome");
  if (outcome.front() != 'R') throw refused_by_job(outcome.front() - '0', outcome.substr(1));
  if (outcome.size() > 1) claim.resume = std::filesystem::path(outcome.substr(1));
  return claim;
}

namespace detail {

/// One rank per NUMA node, or the whole machine for one process: the layout printed, the arena entered, `run`
/// called with the ranks on this host.
template <class Run>
int run_in_layout(const cli::training_args& args, communicator& comm, Run& run) {
  const int world = comm.size();
  const auto topo = topology::detect();
  thread_request request;
  request.threads = args.threads;
  if (world == 1) {
    const auto layout = cputrain::parallel::single::discover(topo, request);
    for (const auto& warning : layout.threads.warnings) say("warning: " + warning);
    const int threads = layout.threads.total();
    say("threads: " + std::to_string(threads) + " (" + layout.threads.reason + ")");
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    tbb::task_arena arena(threads);
    return arena.execute([&] { return run(args, comm, std::size_t{1}); });
  }
  const auto layout = parallel::discover(comm, topo, request);
  const std::string job = dist::describe_job(comm, layout);
  say("layout: " + std::to_string(world) + " ranks on " + std::to_string(layout.hosts) + " host" +
      (layout.hosts == 1 ? "" : "s") + " (" + std::string(parallel::name) + ")\n" + job.substr(0, job.size() - 1));
  numa_arenas arenas(layout.nodes, layout.threads);
  const auto ranks_here = static_cast<std::size_t>((world + layout.hosts - 1) / std::max(1, layout.hosts));
  return arenas.execute(0, [&] { return run(args, comm, ranks_here); });
}

}  // namespace detail

/// main() of a program: checks the CPU, starts MPI, parses program `p`'s command line, prints notices, installs
/// the SIGTERM handler, lays out threads, and calls run(args, comm, ranks_here). Exit status: run's; 2 for a usage
/// error (before any work), 1 for anything else, 128 + the signal when a signal stopped training. A failing rank
/// of several says which it is and ends the whole job: the others would wait for it forever.
template <class Run>
int program_main(int argc, char** argv, cli::program p, Run run) {
  const std::string name = cli::program_name(p);
  try {
    check_cpu_supports_build();  // before any code built with the build's instruction set: a message, not SIGILL
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 1;
  }
  std::unique_ptr<dist::mpi_environment> mpi;  // first: it may take its own arguments out of argv
  try {
    mpi = std::make_unique<dist::mpi_environment>(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 1;
  }
  int world = 1;
  const auto fail = [&](int code, const char* what) {
    if (world > 1) {
      std::fprintf(stderr, "%s (rank %d of %d): %s\n", name.c_str(), this_rank, world, what);
      std::fflush(stderr);
      dist::mpi_environment::abort(code);
    }
    std::fprintf(stderr, "%s: %s\n", name.c_str(), what);
    return code;
  };
  try {
    communicator comm;
    world = comm.size();
    this_rank = comm.rank();
    cli::parsed_command_line command;
    try {
      command = cli::parse_training_args(argc, argv, p);
    } catch (const usage_error& e) {
      // Every rank has the same command line and ends here alike: one message, no abort needed.
      if (this_rank == 0) std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
      return 2;
    }
    if (command.help) {
      if (this_rank == 0) std::cout << command.help_text;
      return 0;
    }
    (void)kernels::current_gemm_backend_choice();  // a bad CPUTRAIN_GEMM_BACKEND is a usage error, before any work
    for (const auto& notice : command.args.notices) say("notice: " + notice);
    train::termination_signal::install(name.c_str());  // SIGTERM / Ctrl-C: checkpoint at the next step, then exit
    return detail::run_in_layout(command.args, comm, run);
  } catch (const refused_by_job& e) {
    if (this_rank == 0 && world > 1)
      std::fprintf(stderr, "%s (rank 0 of %d): %s\n", name.c_str(), world, e.what());
    else if (this_rank == 0)
      std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return e.code();
  } catch (const train::training_interrupted& e) {
    // Every rank stopped at the same step (they agreed on it): a normal exit, 128 + the signal as a shell reports.
    if (this_rank == 0) std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    return 128 + e.signal();
  } catch (const usage_error& e) {
    return fail(2, e.what());
  } catch (const error& e) {
    return fail(1, e.what());
  } catch (const std::bad_alloc&) {
    return fail(1, "out of memory");
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
}

}  // namespace cputrain::examples
