// run_qa: Hugging Face's examples/pytorch/question-answering/run_qa.py, in C++, on the CPU. The same flags:
//
//   run_qa --model_name_or_path ./bert-base-uncased --train_file train.json --validation_file dev.json
//     --do_train --do_eval --per_device_train_batch_size 12 --learning_rate 3e-5 --num_train_epochs 2
//     --max_seq_length 384 --doc_stride 128 --output_dir /tmp/debug_squad/ --bf16 --use_cpu
//
// This file and common/program.hpp (main, layout, output directory) are the whole program, meant to be copied and
// adapted: it reads the arguments, loads the model and
// the SQuAD files, makes features, trains (resuming from the output directory's last checkpoint as run_qa.py
// does), evaluates, and writes what run_qa.py writes. The work itself is the library's (cputrain/train/...).
// Exit status: 0; 2 for a usage error (a bad flag, a missing file), reported before any work; 1 for anything
// else (a broken file, a diverged run), with a message naming the file or step.
//
// One binary for every scenario: started alone it is a world of one process; under mpirun (OpenMPI, MPICH,
// Intel MPI) its ranks train one model together (parallel::multi_node), each finding its NUMA node and threads
// by itself. Rank 0 prints the layout and the log and writes every file; a rank that fails ends the whole job.
#include "common/program.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace ct = cputrain;
namespace fs = std::filesystem;

namespace {

using ct::examples::communicator;
using ct::examples::parallel;
using ct::examples::say;

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
  const auto started = std::chrono::steady_clock::now();
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
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ct::examples::add_speed_metrics(metrics, split, seconds, features.size(),
                                  static_cast<std::size_t>(args.per_device_eval_batch_size));
  metrics[split + "_samples"] = features.size();
  return metrics;
}

// What the run will allocate, required before any of it is (examples/common/program.hpp).
ct::memory_bill run_memory(const ct::cli::training_args& args, const ct::nn::bert_config& config,
                           std::size_t max_seq_length) {
  return ct::examples::run_memory<ct::nn::qa_head>(args, config, max_seq_length,
                                                  args.do_eval || args.do_predict);
}

// --do_train: the header, the training, and (rank 0) the model and the files run_qa.py writes. Returns the epoch
// reached.
template <class Trainer, class Model>
double train_and_save(Trainer& trainer, const Model& model, const ct::cli::training_args& args,
                      const ct::text::tokenizer& tokenizer, const ct::data::squad_dataset& data,
                      const ct::data::qa_features& features, const std::optional<fs::path>& resume,
                      communicator& comm) {
  ct::examples::say_training_header(trainer.plan_for(features.size()), args,
                                    std::to_string(features.size()) + " features of " +
                                        std::to_string(data.examples.size()) + " questions",
                                    comm.size(), resume);
  const auto result = trainer.train(features, resume);
  ct::examples::save_training_outputs(trainer, model, tokenizer, args, result, features.size());
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
  const double estimate = ct::examples::require_run_memory(run_memory(args, config, max_seq_length), files.config, ranks_here, true,
                                             train_features ? train_features->memory_bytes() : 0);
  ct::nn::bert_qa<Policy> model(config, static_cast<std::uint64_t>(args.seed));
  ct::examples::load_pretrained(model, files);
  // The evaluation set before training: --eval_strategy evaluates on it during training too.
  std::optional<ct::data::squad_dataset> eval_data;
  std::optional<ct::data::qa_features> eval_features;
  if (args.do_eval) {
    eval_data = load(args.validation_file, args.max_eval_samples, "--validation_file");
    eval_features = featurize(*eval_data, tokenizer, args, max_seq_length, false, args.max_eval_samples);
  }
  ct::train::trainer_callbacks callbacks;
  callbacks.save_tokenizer = [&](const fs::path& dir) {
    ct::train::save_tokenizer(tokenizer, config.max_sequence_length(), dir);
  };
  ct::train::qa_trainer<Policy>* trainer_ptr = nullptr;
  callbacks.evaluate = [&] { return ct::examples::as_ordered(evaluate(*trainer_ptr, *eval_data, *eval_features, args, "eval")); };
  ct::train::qa_trainer<Policy> trainer(model, ct::cli::to_training_options(args), comm, callbacks);
  trainer_ptr = &trainer;
  const bool writer = trainer.is_main_process();
  std::optional<double> epoch;

  if (args.do_train) epoch = train_and_save(trainer, model, args, tokenizer, *train_data, *train_features, resume, comm);
  if (args.do_eval) {
    say("***** Running evaluation *****  " + std::to_string(eval_features->size()) + " features");
    auto metrics = evaluate(trainer, *eval_data, *eval_features, args, "eval");
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
  say("peak resident memory: " + ct::format_bytes(ct::examples::peak_resident_bytes()) + " (estimated " + ct::format_bytes(estimate) +
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
  (void)ct::examples::require_run_memory(run_memory(args, config, max_seq_length), files.config, ranks_here, false);
  const auto claim = ct::examples::claim_output_dir(args, comm);
  const auto& resume = claim.resume;
  return ct::examples::run_in_precision(args, [&]<class Policy>() {
    return run<Policy>(args, files, config, tokenizer, max_seq_length, resume, comm, ranks_here);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return ct::examples::program_main(argc, argv, ct::cli::program::qa, run_qa);
}
