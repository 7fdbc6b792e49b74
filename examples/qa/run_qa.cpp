// run_qa: Hugging Face's examples/pytorch/question-answering/run_qa.py, in C++, on the CPU. The same flags:
//
//   run_qa --model_name_or_path ./bert-base-uncased --train_file train.json --validation_file dev.json
//     --do_train --do_eval --per_device_train_batch_size 12 --learning_rate 3e-5 --num_train_epochs 2
//     --max_seq_length 384 --doc_stride 128 --output_dir /tmp/debug_squad/ --bf16 --use_cpu
//
// This file is the whole program and meant to be copied and adapted: it reads the arguments, loads the model and
// the SQuAD files, makes features, trains (resuming from the output directory's last checkpoint as run_qa.py
// does), evaluates, and writes what run_qa.py writes. The work itself is the library's (cputrain/train/...).
// Exit status: 0; 2 for a usage error (a bad flag, a missing file), reported before any work; 1 for anything
// else (a broken file, a diverged run), with a message naming the file or step.
//
// One binary for every scenario: started alone it is a world of one process; under mpirun (OpenMPI, MPICH,
// Intel MPI) its ranks train one model together (parallel::multi_node), each finding its NUMA node and threads
// by itself. Rank 0 prints the layout and the log and writes every file; a rank that fails ends the whole job.
#include <cputrain/cli.hpp>
#include <cputrain/cputrain.hpp>
#include <cputrain/mpi.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

namespace ct = cputrain;
namespace fs = std::filesystem;

namespace {

using parallel = ct::parallel::multi_node;
using communicator = parallel::communicator;

int this_rank = 0;  // only rank 0 speaks and writes

void say(const std::string& line) {
  if (this_rank != 0) return;
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
}

// The most this process has held (getrusage: the kernel's count of resident pages).
double peak_resident_bytes() {
  ::rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

ct::data::squad_dataset load(const std::optional<std::string>& file, std::optional<int> max_samples, const char* flag) {
  auto data = ct::data::read_squad(*file);
  // A well-formed file without questions would fail later, in the trainer or the metric, without its name.
  if (data.examples.empty()) throw ct::data::data_error(std::string(flag) + " " + *file + ": holds no questions");
  if (max_samples && static_cast<std::size_t>(*max_samples) < data.examples.size())
    data.examples.resize(static_cast<std::size_t>(*max_samples));
  say(std::string(flag) + " " + *file + ": " + std::to_string(data.examples.size()) + " questions over " +
      std::to_string(data.contexts.size()) + " contexts");
  return data;
}

ct::data::qa_features featurize(const ct::data::squad_dataset& data, const ct::text::tokenizer& tokenizer,
                                const ct::cli::training_args& args, std::size_t max_seq_length, bool labels,
                                std::optional<int> max_samples) {
  ct::data::qa_feature_options options;
  options.max_seq_length = max_seq_length;
  options.doc_stride = static_cast<std::size_t>(args.doc_stride);
  options.labels = labels;
  auto features = ct::data::make_qa_features(data, tokenizer, options);
  for (const auto& problem : features.report().problems) say("skipped " + problem);
  if (max_samples && static_cast<std::size_t>(*max_samples) < features.size())
    features.truncate(static_cast<std::size_t>(*max_samples));  // run_qa.py selects features a second time
  return features;
}

// Post-processing, the prediction files and the metrics of one split ("eval" or "predict").
template <class Trainer>
nlohmann::json evaluate(Trainer& trainer, const ct::data::squad_dataset& data, const ct::data::qa_features& features,
                        const ct::cli::training_args& args, const std::string& split) {
  const auto logits = trainer.predict(features);  // collective: rank 0 gets every feature's logits
  if (!trainer.is_main_process()) return {};
  ct::data::qa_postprocess_options post;
  post.n_best_size = static_cast<std::size_t>(args.n_best_size);
  post.max_answer_length = static_cast<std::size_t>(args.max_answer_length);
  post.version_2_with_negative = args.version_2_with_negative;
  post.null_score_diff_threshold = args.null_score_diff_threshold;
  const auto answers = ct::data::postprocess_qa_predictions(data, features, logits.start, logits.end, logits.row_length, post);
  ct::data::write_qa_predictions(answers, args.output_dir, split);
  const auto scores = args.version_2_with_negative ? nlohmann::json(ct::data::to_json(ct::data::evaluate_squad_v2(data, answers.as_map())))
                                                   : nlohmann::json(ct::data::to_json(ct::data::evaluate_squad_v1(data, answers.as_map())));
  nlohmann::json metrics;
  for (const auto& [key, value] : scores.items()) metrics[split + "_" + key] = value;
  metrics[split + "_samples"] = features.size();
  return metrics;
}

// Everything the run will allocate from here on: the model, AdamW's moments when training, the activations of
// the larger batch it runs. Required against what the process may take before any of it is allocated.
ct::memory_bill run_memory(const ct::cli::training_args& args, const ct::nn::bert_config& config,
                           std::size_t max_seq_length) {
  const std::size_t gemm_bytes = args.bf16 ? 2 : 4;
  const auto options = ct::cli::to_training_options(args);
  const bool evaluates = args.do_eval || args.do_predict;
  if (args.do_train) return ct::train::training_memory(config, options, gemm_bytes, max_seq_length, evaluates, "--");
  ct::memory_bill bill = ct::nn::model_memory(config, gemm_bytes);
  bill.add(ct::train::batch_memory(config, options, gemm_bytes, max_seq_length, evaluates, "--"));
  return bill;
}

// Refuses a bill that cannot fit, naming config.json and the fields and flags that make it big; with `header`,
// prints it. Returns the estimated peak.
double require_run_memory(const ct::memory_bill& bill, const fs::path& config, std::size_t ranks_here, bool header,
                          std::size_t feature_bytes = 0) {
  const auto allowance = ct::read_memory_allowance().shared_by(ranks_here);
  ct::require_memory(bill, allowance, config.string());
  const double peak = ct::peak_bytes(bill, allowance);
  if (header) {
    say("memory: about " + ct::format_bytes(peak) + " at the peak = " +
        ct::format_bytes(static_cast<double>(allowance.resident)) + " held now (the program, the tokenizer" +
        (feature_bytes > 0 ? ", " + ct::format_bytes(static_cast<double>(feature_bytes)) + " of features" : "") +
        ") + " + bill.breakdown() + "; this machine allows " + ct::format_bytes(static_cast<double>(allowance.total())) +
        " (" + allowance.source + ")");
  }
  return peak;
}

// The published weights of --model_name_or_path, or a new model from its config; says which.
template <class Model>
void load_pretrained(Model& model, const ct::train::model_files& files) {
  if (!files.weights) {
    say("training a new model from " + files.config.string());
    return;
  }
  const auto report = ct::io::load_weights(model, *files.weights, ct::io::weight_loading::pretrained);
  for (const auto& line : ct::train::weight_load_messages(report, *files.weights)) say(line);
}

// --do_train: the header, the training, and (rank 0) the model and the files run_qa.py writes. Returns the epoch
// reached.
template <class Trainer, class Model>
double train_and_save(Trainer& trainer, const Model& model, const ct::cli::training_args& args,
                      const ct::text::tokenizer& tokenizer, const ct::data::squad_dataset& data,
                      const ct::data::qa_features& features, const std::optional<fs::path>& resume,
                      communicator& comm) {
  const auto plan = trainer.plan_for(features.size());
  say("***** Running training *****");
  say("  Num examples = " + std::to_string(features.size()) + " features of " + std::to_string(data.examples.size()) + " questions");
  const int world = comm.size();
  say("  Num Epochs = " + std::to_string(plan.epochs) + ", total optimization steps = " + std::to_string(plan.max_steps) +
      ", precision = " + (args.bf16 ? "bf16" : "fp32"));
  say("  Total batch size = " +
      std::to_string(args.per_device_train_batch_size * world * args.gradient_accumulation_steps) + " (" +
      std::to_string(args.per_device_train_batch_size) + " per process x " + std::to_string(world) + " process" +
      (world == 1 ? "" : "es") + " x " + std::to_string(args.gradient_accumulation_steps) + " accumulation steps)");
  if (resume) say("  Resuming from " + resume->string());
  const auto result = trainer.train(features, resume);
  if (trainer.is_main_process()) {
    ct::train::save_pretrained(args.output_dir, model, tokenizer);
    ct::io::write_file_atomically(fs::path(args.output_dir) / "training_args.json", ct::cli::to_json(args).dump(2) + "\n");
    trainer.state().write(fs::path(args.output_dir) / "trainer_state.json");
    nlohmann::json metrics = result.to_json();
    metrics["train_samples"] = features.size();
    ct::train::log_metrics("train", metrics);
    ct::train::save_metrics(args.output_dir, "train", metrics);
  }
  return result.epoch;
}

template <class Policy>
int run(const ct::cli::training_args& args, const ct::train::model_files& files, const ct::nn::bert_config& config,
        const ct::text::tokenizer& tokenizer, std::size_t max_seq_length,
        const std::optional<fs::path>& resume, communicator& comm, std::size_t ranks_here) {
  // The training features first: they are part of what the process holds when the model is built on top.
  std::optional<ct::data::squad_dataset> train_data;
  std::optional<ct::data::qa_features> train_features;
  if (args.do_train) {
    train_data = load(args.train_file, args.max_train_samples, "--train_file");
    train_features = featurize(*train_data, tokenizer, args, max_seq_length, true, args.max_train_samples);
  }
  const double estimate = require_run_memory(run_memory(args, config, max_seq_length), files.config, ranks_here, true,
                                             train_features ? train_features->memory_bytes() : 0);
  ct::nn::bert_qa<Policy> model(config, static_cast<std::uint64_t>(args.seed));
  load_pretrained(model, files);
  ct::train::trainer_callbacks callbacks;
  callbacks.save_tokenizer = [&](const fs::path& dir) {
    ct::train::save_tokenizer(tokenizer, config.max_sequence_length(), dir);
  };
  ct::train::qa_trainer<Policy> trainer(model, ct::cli::to_training_options(args), comm, callbacks);
  const bool writer = trainer.is_main_process();
  std::optional<double> epoch;

  if (args.do_train) epoch = train_and_save(trainer, model, args, tokenizer, *train_data, *train_features, resume, comm);
  if (args.do_eval) {
    const auto data = load(args.validation_file, args.max_eval_samples, "--validation_file");
    const auto features = featurize(data, tokenizer, args, max_seq_length, false, args.max_eval_samples);
    say("***** Running evaluation *****  " + std::to_string(features.size()) + " features");
    auto metrics = evaluate(trainer, data, features, args, "eval");
    if (writer) {
      if (epoch) metrics["epoch"] = *epoch;
      ct::train::log_metrics("eval", metrics);
      ct::train::save_metrics(args.output_dir, "eval", metrics);
    }
  }
  if (args.do_predict) {
    const auto data = load(args.test_file, args.max_predict_samples, "--test_file");
    const auto features = featurize(data, tokenizer, args, max_seq_length, false, args.max_predict_samples);
    say("***** Running prediction *****  " + std::to_string(features.size()) + " features");
    const auto metrics = evaluate(trainer, data, features, args, "predict");
    if (writer) {
      ct::train::log_metrics("predict", metrics);
      ct::train::save_metrics(args.output_dir, "predict", metrics);
    }
  }
  say("peak resident memory: " + ct::format_bytes(peak_resident_bytes()) + " (estimated " + ct::format_bytes(estimate) +
      ")");
  comm.barrier();  // the others wait while rank 0 writes
  return 0;
}

int run_qa(const ct::cli::training_args& args, communicator& comm, std::size_t ranks_here) {
  const auto files = ct::train::find_model_files(ct::cli::to_model_sources(args));
  // Checked against the config.json this run uses (maybe --config_name's), naming both files, just below.
  const auto tokenizer = ct::text::load_tokenizer(files.tokenizer, {.check_config_vocab_size = false});
  const auto config = ct::io::read_bert_config(files.config);
  ct::train::check_model_fits_tokenizer(files, config, tokenizer);
  auto max_seq_length = static_cast<std::size_t>(args.max_seq_length);
  if (max_seq_length > static_cast<std::size_t>(config.max_sequence_length())) {
    say("notice: --max_seq_length " + std::to_string(max_seq_length) + " is longer than the model's " +
        std::to_string(config.max_sequence_length()) + " positions; using " +
        std::to_string(config.max_sequence_length()) + " (as run_qa.py does)");
    max_seq_length = static_cast<std::size_t>(config.max_sequence_length());
  }
  if (static_cast<std::size_t>(args.doc_stride) >= max_seq_length)
    throw ct::usage_error("--doc_stride " + std::to_string(args.doc_stride) + " must be smaller than the sequence length " +
                          std::to_string(max_seq_length));
  if (args.do_eval || args.do_predict) {  // the v1 metric cannot score unanswerable questions: say so before training
    for (const auto& [flag, file] : {std::pair{"--validation_file", args.do_eval ? args.validation_file : std::nullopt},
                                     std::pair{"--test_file", args.do_predict ? args.test_file : std::nullopt}}) {
      if (!file || args.version_2_with_negative) continue;
      if (ct::data::read_squad(*file).has_unanswerable())
        throw ct::usage_error(std::string(flag) + " " + *file +
                              " has unanswerable questions (SQuAD v2): add --version_2_with_negative");
    }
  }
  // Before anything large is built or read: a config or batch that cannot fit costs a second, not the machine.
  (void)require_run_memory(run_memory(args, config, max_seq_length), files.config, ranks_here, false);
  // Rank 0 owns the output directory: it takes the lock, applies run_qa.py's rule (resume from the last
  // checkpoint, refuse, or overwrite) and tells the others where to resume from.
  std::optional<ct::train::output_dir_lock> lock;
  std::optional<fs::path> resume;
  std::string resume_text;
  if (comm.rank() == 0) {
    ct::train::create_output_dir(args.output_dir);
    lock.emplace(args.output_dir);
    resume = ct::train::prepare_output_dir(ct::cli::to_output_dir_options(args));
    resume_text = resume ? resume->string() : "";
  }
  if (comm.size() > 1) {
    comm.broadcast_bytes(resume_text, 0);
    if (!resume_text.empty()) resume = fs::path(resume_text);
  }
  // Parameters, gradients and activations on the NUMA node of the arena the rank computes in.
  using fp32 = ct::policy<ct::precision::fp32, parallel, ct::alloc::numa_local>;
  using bf16 = ct::policy<ct::precision::bf16_mixed, parallel, ct::alloc::numa_local>;
  say("matrix products (" + std::string(args.bf16 ? "bf16" : "fp32") +
      "): " + ct::kernels::gemm_path_description(args.bf16));
  if (args.bf16) return run<bf16>(args, files, config, tokenizer, max_seq_length, resume, comm, ranks_here);
  return run<fp32>(args, files, config, tokenizer, max_seq_length, resume, comm, ranks_here);
}

}  // namespace

int main(int argc, char** argv) {
  // Before any code built with the build's instruction set runs: a clear message, not SIGILL, on an older CPU.
  try {
    ct::check_cpu_supports_build();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run_qa: %s\n", e.what());
    return 1;
  }
  // MPI first (it may take its own arguments out of argv); alone, this is a world of one.
  std::unique_ptr<ct::dist::mpi_environment> mpi;
  try {
    mpi = std::make_unique<ct::dist::mpi_environment>(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run_qa: %s\n", e.what());
    return 1;
  }
  int world = 1;
  // A failing rank says why, naming itself in a job of several, and ends the whole job: the others would wait
  // for it in their next collective forever.
  const auto fail = [&](int code, const char* what) {
    if (world > 1) {
      std::fprintf(stderr, "run_qa (rank %d of %d): %s\n", this_rank, world, what);
      std::fflush(stderr);
      ct::dist::mpi_environment::abort(code);
    }
    std::fprintf(stderr, "run_qa: %s\n", what);
    return code;
  };
  try {
    communicator comm;
    world = comm.size();
    this_rank = comm.rank();
    ct::cli::parsed_command_line command;
    try {
      command = ct::cli::parse_training_args(argc, argv);
    } catch (const ct::usage_error& e) {
      // Every rank has the same command line and ends here alike: one message, no abort needed.
      if (this_rank == 0) std::fprintf(stderr, "run_qa: %s\n", e.what());
      return 2;
    }
    if (command.help) {
      if (this_rank == 0) std::cout << command.help_text;
      return 0;
    }
    const auto& args = command.args;
    (void)ct::kernels::current_gemm_backend_choice();  // a bad CPUTRAIN_GEMM_BACKEND is a usage error, before any work
    for (const auto& notice : args.notices) say("notice: " + notice);
    // SIGTERM / Ctrl-C: checkpoint at the next step boundary, then exit; a third Ctrl-C: at once
    ct::train::termination_signal::install("run_qa");
    const auto topo = ct::topology::detect();
    ct::thread_request request;
    request.threads = args.threads;
    if (world == 1) {
      const auto layout = ct::parallel::single::discover(topo, request);
      for (const auto& warning : layout.threads.warnings) say("warning: " + warning);
      const int threads = layout.threads.total();
      say("threads: " + std::to_string(threads) + " (" + layout.threads.reason + ")");
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
      tbb::task_arena arena(threads);
      return arena.execute([&] { return run_qa(args, comm, 1); });
    }
    // One rank per NUMA node: this rank's node, CPUs and threads, printed for every rank by rank 0.
    const auto layout = parallel::discover(comm, topo, request);
    const std::string job = ct::dist::describe_job(comm, layout);
    say("layout: " + std::to_string(world) + " ranks on " + std::to_string(layout.hosts) + " host" +
        (layout.hosts == 1 ? "" : "s") + " (" + std::string(parallel::name) + ")\n" + job.substr(0, job.size() - 1));
    ct::numa_arenas arenas(layout.nodes, layout.threads);
    const auto ranks_here = static_cast<std::size_t>((world + layout.hosts - 1) / std::max(1, layout.hosts));
    return arenas.execute(0, [&] { return run_qa(args, comm, ranks_here); });
  } catch (const ct::train::training_interrupted& e) {
    // Every rank stopped at the same step (they agreed on it): a normal exit, 128 + the signal as a shell reports.
    if (this_rank == 0) std::fprintf(stderr, "run_qa: %s\n", e.what());
    return 128 + e.signal();
  } catch (const ct::usage_error& e) {
    return fail(2, e.what());
  } catch (const ct::error& e) {
    return fail(1, e.what());
  } catch (const std::bad_alloc&) {
    return fail(1, "out of memory");
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
}
