// cputrain::train::training_args — the command line of run_qa: Hugging Face's TrainingArguments and run_qa.py's
// ModelArguments and DataTrainingArguments as one struct, with their names, meanings and defaults, so that the
// command of Hugging Face's CPU-training guide works with our program in front of it.
//
//   parse_training_args(argc, argv)   the command line, or a single args.json as run_qa.py accepts; validated
//   read_training_args_json(path)     HfArgumentParser.parse_json_file's form (keys are field names); validated
//   to_json(args) / from_json(json)   every field, for training_args.json in checkpoints; from_json checks types only
//
// Flags behave as HfArgumentParser's: a boolean alone means true and also takes yes/no, true/false, t/f, y/n, 1/0 in
// any case; a boolean whose default is true also has --no_<name>; --do-train is --do_train; a flag given twice
// keeps the last value. Unlike argparse, a flag cannot be abbreviated (--learning_rat is an error, not a guess).
// Flags that users of Hugging Face's CPU guide type but that mean nothing here (--use_ipex, --ddp_backend ccl, ...)
// are accepted with a one-line notice in training_args::notices for the program to print; --dataset_name is
// refused, since cputrain downloads nothing. Every mistake is a usage_error naming the flag, the value and the rule.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <ios>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <variant>
#include <vector>

#include <boost/program_options/errors.hpp>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/core/json_nesting.hpp"
#include "cputrain/optim/lr_schedule.hpp"

namespace cputrain::train {

/// Everything run_qa is told, under Hugging Face's field names. Default-constructed, it holds Hugging Face's
/// defaults; only validate() (called by the parsers) says whether a set of values can run.
struct training_args {
  // ---- run_qa.py's ModelArguments. Local paths only: cputrain downloads nothing from the Hub.
  std::optional<std::string> model_name_or_path;  ///< directory of a saved model (config.json, weights, vocab.txt)
  std::optional<std::string> config_name;         ///< config.json if not the model's; alone: random weights
  std::optional<std::string> tokenizer_name;      ///< vocabulary if not the model's

  // ---- run_qa.py's DataTrainingArguments
  std::optional<std::string> train_file;       ///< SQuAD JSON for --do_train
  std::optional<std::string> validation_file;  ///< SQuAD JSON for --do_eval
  std::optional<std::string> test_file;        ///< SQuAD JSON for --do_predict
  int max_seq_length = 384;
  bool pad_to_max_length = true;  ///< run_qa.py's default; false pads each batch to its longest window
  int doc_stride = 128;           ///< tokens shared by consecutive windows of a long context
  std::optional<int> max_train_samples;
  std::optional<int> max_eval_samples;
  std::optional<int> max_predict_samples;
  bool version_2_with_negative = false;
  double null_score_diff_threshold = 0.0;
  int n_best_size = 20;
  int max_answer_length = 30;
  bool overwrite_cache = false;                   ///< accepted, changes nothing: cputrain keeps no dataset cache
  std::optional<int> preprocessing_num_workers;  ///< accepted, changes nothing: features use the process's threads

  // ---- TrainingArguments
  std::string output_dir;  ///< required
  bool overwrite_output_dir = false;
  bool do_train = false;
  bool do_eval = false;
  bool do_predict = false;
  std::string eval_strategy = "no";  ///< "no" or "epoch" (which also sets do_eval, as Hugging Face does)
  int per_device_train_batch_size = 8;
  int per_device_eval_batch_size = 8;
  int gradient_accumulation_steps = 1;
  double learning_rate = 5e-5;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_epsilon = 1e-8;
  double max_grad_norm = 1.0;      ///< 0 disables clipping
  double num_train_epochs = 3.0;   ///< a double, as in Hugging Face: 2.5 epochs is a valid request
  int max_steps = -1;              ///< > 0 overrides num_train_epochs
  std::string lr_scheduler_type = "linear";
  double warmup_ratio = 0.0;
  int warmup_steps = 0;            ///< > 0 overrides warmup_ratio
  int logging_steps = 500;
  std::string save_strategy = "steps";  ///< "steps", "epoch" or "no"
  int save_steps = 500;
  std::optional<int> save_total_limit;
  int seed = 42;
  bool bf16 = false;
  bool use_cpu = false;  ///< accepted; cputrain always runs on the CPU
  bool dataloader_drop_last = false;
  bool group_by_length = false;  ///< batches of windows of similar length (train/sampler.hpp)
  std::optional<std::string> resume_from_checkpoint;
  bool disable_tqdm = false;
  std::optional<int> threads;  ///< cputrain's own: compute threads per process; unset, the thread plan decides
  /// cputrain's own: seconds a SIGTERM leaves to write a checkpoint (Kubernetes' default grace); 0: none
  double termination_grace_period = 30.0;
  /// cputrain's own: with several processes, average the word-embedding gradient by sending only the rows the
  /// step's tokens used (distributed/sparse_row_reducer.hpp); false sends the whole table (for comparison)
  bool sparse_embedding_gradients = true;

  /// One line per accepted flag that changes nothing here, for the program to print. Not an argument: to_json
  /// leaves it out.
  std::vector<std::string> notices;

  /// usage_error naming the flag, its value and the rule, for the first value that cannot run; also checks that
  /// the files and directories named exist.
  void validate() const;
  /// The part of validate() that concerns the training loop alone (batch sizes, steps, schedule, optimizer,
  /// logging and saving): no paths, no task flags.
  void validate_training() const;

  /// lr_scheduler_type as the schedule it names (usage_error listing the valid names otherwise).
  [[nodiscard]] optim::schedule_kind lr_schedule_kind() const;

  friend bool operator==(const training_args&, const training_args&) = default;
};

/// What parse_training_args found: the arguments, or a request for help (then args is not validated).
struct parsed_command_line {
  training_args args;
  bool help = false;
  std::string help_text;
};

namespace detail {

// ---- the fields, once: names, groups and help for the parser, the help text and the JSON form ----

enum class args_group { model, data, training, compatibility };

using args_member = std::variant<bool training_args::*, int training_args::*, double training_args::*,
                                 std::string training_args::*, std::optional<int> training_args::*,
                                 std::optional<std::string> training_args::*>;

struct args_field {
  const char* name;
  args_group group;
  args_member member;
  const char* help;
};

// In run_qa.py's order (model, data, training), which is also the order of to_json's keys.
inline const args_field args_fields[] = {
    {"model_name_or_path", args_group::model, &training_args::model_name_or_path,
     "Directory of a saved model (config.json, weights, vocab.txt); cputrain downloads nothing from the Hub"},
    {"config_name", args_group::model, &training_args::config_name,
     "config.json (or its directory) if not the model's; without --model_name_or_path the model starts from "
     "random weights"},
    {"tokenizer_name", args_group::model, &training_args::tokenizer_name,
     "vocab.txt (or its directory) if not the model's"},

    {"train_file", args_group::data, &training_args::train_file, "SQuAD JSON file to train on (--do_train)"},
    {"validation_file", args_group::data, &training_args::validation_file,
     "SQuAD JSON file to evaluate on (--do_eval)"},
    {"test_file", args_group::data, &training_args::test_file, "SQuAD JSON file to predict on (--do_predict)"},
    {"max_seq_length", args_group::data, &training_args::max_seq_length,
     "Tokens per window, question and context together; longer contexts are split into windows"},
    {"pad_to_max_length", args_group::data, &training_args::pad_to_max_length,
     "Pad every window to --max_seq_length; --no_pad_to_max_length pads each batch to its longest window"},
    {"doc_stride", args_group::data, &training_args::doc_stride,
     "Tokens shared by consecutive windows of a long context"},
    {"max_train_samples", args_group::data, &training_args::max_train_samples,
     "Train on the first N examples only"},
    {"max_eval_samples", args_group::data, &training_args::max_eval_samples,
     "Evaluate on the first N examples only"},
    {"max_predict_samples", args_group::data, &training_args::max_predict_samples,
     "Predict on the first N examples only"},
    {"version_2_with_negative", args_group::data, &training_args::version_2_with_negative,
     "Some questions have no answer (SQuAD 2.0)"},
    {"null_score_diff_threshold", args_group::data, &training_args::null_score_diff_threshold,
     "Answer \"\" when the best span scores less than the null answer minus this (SQuAD 2.0)"},
    {"n_best_size", args_group::data, &training_args::n_best_size,
     "Candidate start and end positions kept per window when choosing the answer"},
    {"max_answer_length", args_group::data, &training_args::max_answer_length,
     "Longest answer, in tokens, a prediction may have"},
    {"overwrite_cache", args_group::compatibility, &training_args::overwrite_cache,
     "Accepted, changes nothing: cputrain keeps no dataset cache"},
    {"preprocessing_num_workers", args_group::compatibility, &training_args::preprocessing_num_workers,
     "Accepted, changes nothing: features are computed by the process's threads"},

    {"output_dir", args_group::training, &training_args::output_dir,
     "Where checkpoints, the trained model, predictions and metrics are written (required)"},
    {"overwrite_output_dir", args_group::training, &training_args::overwrite_output_dir,
     "Start afresh even if --output_dir holds checkpoints"},
    {"do_train", args_group::training, &training_args::do_train, "Train on --train_file"},
    {"do_eval", args_group::training, &training_args::do_eval, "Evaluate on --validation_file"},
    {"do_predict", args_group::training, &training_args::do_predict, "Predict on --test_file"},
    {"eval_strategy", args_group::training, &training_args::eval_strategy,
     "no: evaluate after training (with --do_eval); epoch: also after every epoch"},
    {"per_device_train_batch_size", args_group::training, &training_args::per_device_train_batch_size,
     "Windows per process in each training batch"},
    {"per_device_eval_batch_size", args_group::training, &training_args::per_device_eval_batch_size,
     "Windows per process in each evaluation batch"},
    {"gradient_accumulation_steps", args_group::training, &training_args::gradient_accumulation_steps,
     "Batches whose gradients are summed before each optimizer step"},
    {"learning_rate", args_group::training, &training_args::learning_rate, "AdamW's initial learning rate"},
    {"weight_decay", args_group::training, &training_args::weight_decay,
     "AdamW's weight decay (biases and LayerNorm weights are not decayed)"},
    {"adam_beta1", args_group::training, &training_args::adam_beta1, "AdamW's beta1"},
    {"adam_beta2", args_group::training, &training_args::adam_beta2, "AdamW's beta2"},
    {"adam_epsilon", args_group::training, &training_args::adam_epsilon, "AdamW's epsilon"},
    {"max_grad_norm", args_group::training, &training_args::max_grad_norm,
     "Clip gradients to this global norm; 0 disables clipping"},
    {"num_train_epochs", args_group::training, &training_args::num_train_epochs,
     "Epochs to train, possibly fractional; --max_steps overrides it"},
    {"max_steps", args_group::training, &training_args::max_steps,
     "Optimizer steps to train; -1 trains for --num_train_epochs"},
    {"lr_scheduler_type", args_group::training, &training_args::lr_scheduler_type,
     "linear, cosine, constant or constant_with_warmup"},
    {"warmup_ratio", args_group::training, &training_args::warmup_ratio,
     "Fraction of the training steps spent warming up the learning rate"},
    {"warmup_steps", args_group::training, &training_args::warmup_steps,
     "Steps spent warming up the learning rate; > 0 overrides --warmup_ratio"},
    {"logging_steps", args_group::training, &training_args::logging_steps, "Log every N optimizer steps"},
    {"save_strategy", args_group::training, &training_args::save_strategy,
     "steps: a checkpoint every --save_steps; epoch: after every epoch; no: none"},
    {"save_steps", args_group::training, &training_args::save_steps,
     "Optimizer steps between checkpoints (--save_strategy steps)"},
    {"save_total_limit", args_group::training, &training_args::save_total_limit,
     "Keep only the N most recent checkpoints"},
    {"seed", args_group::training, &training_args::seed, "Seed of the initialisation, dropout and shuffling"},
    {"bf16", args_group::training, &training_args::bf16,
     "bf16 mixed precision as PyTorch's CPU autocast does it, instead of fp32"},
    {"dataloader_drop_last", args_group::training, &training_args::dataloader_drop_last,
     "Drop the last, incomplete training batch of each epoch"},
    {"group_by_length", args_group::training, &training_args::group_by_length,
     "Batch training windows of similar length together: with --no_pad_to_max_length, much less padding"},
    {"resume_from_checkpoint", args_group::training, &training_args::resume_from_checkpoint,
     "Checkpoint directory to resume training from"},
    {"disable_tqdm", args_group::training, &training_args::disable_tqdm, "No progress bar"},
    {"threads", args_group::training, &training_args::threads,
     "Compute threads per process (cputrain's own; by default the cores of the process's NUMA node minus one, "
     "or OMP_NUM_THREADS)"},
    {"sparse_embedding_gradients", args_group::training, &training_args::sparse_embedding_gradients,
     "With several processes, send only the word-embedding rows the step's tokens used (cputrain's own; the "
     "same result as sending the whole table, in a fraction of the bytes)"},
    {"termination_grace_period", args_group::training, &training_args::termination_grace_period,
     "Seconds between SIGTERM and the kill (cputrain's own; Kubernetes' default 30): on SIGTERM or Ctrl-C, "
     "finish the step and write a checkpoint if that fits in them, then exit; 0 exits without one"},
    {"use_cpu", args_group::compatibility, &training_args::use_cpu,
     "Accepted: cputrain always runs on the CPU"},
};

/// Flags with no field of their own: accepted for compatibility (with a notice), an older name, or refused with a
/// reason. `boolean` ones take a truth value as the fields do.
struct args_extra_flag {
  const char* name;
  args_group group;
  bool boolean;
  const char* help;
};

inline const args_extra_flag args_extra_flags[] = {
    {"dataset_name", args_group::data, false,
     "Refused: cputrain downloads nothing; give --train_file and --validation_file"},
    {"dataset_config_name", args_group::data, false, "Refused, as --dataset_name"},
    {"evaluation_strategy", args_group::training, false, "Hugging Face's older name for --eval_strategy"},
    {"no_cuda", args_group::compatibility, true, "Hugging Face's older name for --use_cpu"},
    {"use_ipex", args_group::compatibility, true, "Accepted, no effect: cputrain's kernels are its own"},
    {"ddp_backend", args_group::compatibility, false,
     "ccl, mpi or gloo accepted: cputrain always reduces gradients over MPI"},
    {"report_to", args_group::compatibility, false,
     "none; all or tensorboard accepted and ignored: cputrain reports to no integration"},
    {"logging_dir", args_group::compatibility, false, "Accepted, no effect: cputrain writes no TensorBoard logs"},
};

/// Shortest text that reads back as the same double (Python's repr), for messages and the help's defaults.
inline std::string args_number_text(double x) {
  char buffer[32];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, written.ptr);
}

inline std::string flag(std::string_view name) { return "--" + std::string(name); }

[[noreturn]] inline void bad_flag_value(std::string_view name, const std::string& value, const std::string& rule) {
  throw usage_error(flag(name) + " " + value + ": " + rule);
}

// ---- command-line text -> values, with HfArgumentParser's rules ----

/// transformers.hf_argparser.string_to_bool.
inline bool bool_from_text(std::string_view name, const std::string& text) {
  std::string lower;
  for (const char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "yes" || lower == "true" || lower == "t" || lower == "y" || lower == "1") return true;
  if (lower == "no" || lower == "false" || lower == "f" || lower == "n" || lower == "0") return false;
  bad_flag_value(name, text, "expected a truth value: yes/no, true/false, t/f, y/n or 1/0 (in any case)");
}

// Python's int() and float() also take "+5"; from_chars does not, so the sign is skipped here.
inline std::string_view without_plus(std::string_view text) {
  return text.size() > 1 && text.front() == '+' && text[1] != '-' ? text.substr(1) : text;
}

inline int int_from_text(std::string_view name, const std::string& text) {
  const std::string_view digits = without_plus(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range) bad_flag_value(name, text, "out of the range of a 32-bit integer");
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    bad_flag_value(name, text, "not an integer");
  }
  return value;
}

inline double double_from_text(std::string_view name, const std::string& text) {
  const std::string_view digits = without_plus(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range) bad_flag_value(name, text, "out of the range of a double");
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    bad_flag_value(name, text, "not a number");
  }
  return value;
}

template <class T>
struct args_value {
  using type = T;
};
template <class T>
struct args_value<std::optional<T>> {
  using type = T;
};

template <class T>
T value_from_text(std::string_view name, const std::string& text) {
  if constexpr (std::is_same_v<T, bool>) {
    return bool_from_text(name, text);
  } else if constexpr (std::is_same_v<T, int>) {
    return int_from_text(name, text);
  } else if constexpr (std::is_same_v<T, double>) {
    return double_from_text(name, text);
  } else {
    static_assert(std::is_same_v<T, std::string>);
    return text;
  }
}

// ---- JSON values -> values, with the types Hugging Face's dataclasses declare ----

/// Whether `value` nests arrays or objects more than `levels` deep; recurses at most `levels` times.
inline bool json_nests_deeper_than(const nlohmann::ordered_json& value, int levels) {
  if (!value.is_structured()) return false;
  if (levels == 0) return true;
  for (const auto& child : value) {
    if (json_nests_deeper_than(child, levels - 1)) return true;
  }
  return false;
}

inline std::string json_value_text(const nlohmann::ordered_json& value) {
  // dump() recurses once per level, and from_json takes any caller's JSON: a value nested a million levels deep
  // must not overflow the stack just to be named in a message.
  constexpr int max_shown_nesting = 20;
  if (json_nests_deeper_than(value, max_shown_nesting)) {
    return std::string(value.is_array() ? "a list" : "an object") + " nested more than " +
           std::to_string(max_shown_nesting) + " levels deep";
  }
  std::string s = value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

[[noreturn]] inline void bad_json_value(std::string_view source, std::string_view key,
                                        const nlohmann::ordered_json& value, const char* wanted) {
  throw usage_error(std::string(source) + ": \"" + std::string(key) + "\" is " + json_value_text(value) +
                    ", but must be " + wanted);
}

template <class T>
T value_from_json(std::string_view source, std::string_view key, const nlohmann::ordered_json& value) {
  if constexpr (std::is_same_v<T, bool>) {
    // A string "true" would be truthy to Python and "false" too: only JSON's booleans say what they mean.
    if (!value.is_boolean()) bad_json_value(source, key, value, "true or false");
    return value.get<bool>();
  } else if constexpr (std::is_same_v<T, int>) {
    // 8.0 is a float to Python, and a batch of 8.0 windows fails much later: integers are written as integers.
    if (value.is_number_unsigned()) {
      const auto v = value.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
        bad_json_value(source, key, value, "a 32-bit integer");
      }
      return static_cast<int>(v);
    }
    if (value.is_number_integer()) {
      const auto v = value.get<std::int64_t>();
      if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
        bad_json_value(source, key, value, "a 32-bit integer");
      }
      return static_cast<int>(v);
    }
    bad_json_value(source, key, value, "an integer");
  } else if constexpr (std::is_same_v<T, double>) {
    if (!value.is_number()) bad_json_value(source, key, value, "a number");
    return value.get<double>();
  } else {
    static_assert(std::is_same_v<T, std::string>);
    if (!value.is_string()) bad_json_value(source, key, value, "a string");
    return value.get<std::string>();
  }
}

// ---- the flags without a field ----

/// Applies --<name> <value> for a flag of args_extra_flags (already converted to text).
inline void apply_extra_flag(training_args& args, std::string_view name, const std::string& value) {
  if (name == "dataset_name" || name == "dataset_config_name") {
    bad_flag_value(name, value,
                   "cputrain downloads nothing; download the dataset's SQuAD JSON files and pass them with "
                   "--train_file and --validation_file (e.g. train-v1.1.json and dev-v1.1.json)");
  }
  if (name == "evaluation_strategy") {
    args.eval_strategy = value;
    return;
  }
  if (name == "no_cuda") {
    args.use_cpu = bool_from_text(name, value);
    args.notices.push_back("--no_cuda: Hugging Face's older name for --use_cpu; cputrain always runs on the CPU");
    return;
  }
  if (name == "use_ipex") {
    if (bool_from_text(name, value)) {
      args.notices.push_back(
          "--use_ipex: no effect; cputrain's kernels are its own, not Intel Extension for PyTorch's");
    }
    return;
  }
  if (name == "ddp_backend") {
    if (value == "ccl" || value == "gloo") {
      args.notices.push_back("--ddp_backend " + value + ": no effect; cputrain always reduces gradients over MPI");
    } else if (value != "mpi") {
      bad_flag_value(name, value,
                     "cputrain reduces gradients over MPI on CPUs; accepted values are ccl, mpi and gloo (all "
                     "meaning MPI)");
    }
    return;
  }
  if (name == "report_to") {
    if (value == "all" || value == "tensorboard") {
      args.notices.push_back("--report_to " + value + ": no effect; cputrain reports to no integration");
    } else if (value != "none") {
      bad_flag_value(name, value, "cputrain reports to no integration; accepted values are none, all and tensorboard");
    }
    return;
  }
  if (name == "logging_dir") {
    args.notices.push_back("--logging_dir " + value + ": no effect; cputrain writes no TensorBoard logs");
    return;
  }
  throw usage_error("cputrain::train: no handler for --" + std::string(name));
}

inline const args_field* find_field(std::string_view name) {
  for (const args_field& f : args_fields) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

inline const args_extra_flag* find_extra_flag(std::string_view name) {
  for (const args_extra_flag& f : args_extra_flags) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

/// What TrainingArguments.__post_init__ derives: an evaluation strategy other than "no" turns --do_eval on.
inline void apply_post_init(training_args& args) {
  if (args.eval_strategy != "no") args.do_eval = true;
}

// ---- validation ----

enum class path_kind { file, directory, either };

/// usage_error unless `path` exists as the kind wanted; `hint` is appended when it does not exist at all.
inline void check_path(std::string_view name, const std::string& path, path_kind kind, const std::string& hint = "") {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    const char* what = kind == path_kind::file        ? "no such file"
                       : kind == path_kind::directory ? "no such directory"
                                                      : "no such file or directory";
    bad_flag_value(name, path, what + hint);
  }
  if (kind == path_kind::file && !std::filesystem::is_regular_file(status)) {
    bad_flag_value(name, path, "not a regular file");
  }
  if (kind == path_kind::directory && !std::filesystem::is_directory(status)) {
    bad_flag_value(name, path, "not a directory");
  }
}

inline void check_at_least(std::string_view name, int value, int least) {
  if (value < least) bad_flag_value(name, std::to_string(value), "must be >= " + std::to_string(least));
}

inline void check_at_least(std::string_view name, const std::optional<int>& value, int least) {
  if (value) check_at_least(name, *value, least);
}

inline void check_not_negative(std::string_view name, double value) {
  if (!(value >= 0 && std::isfinite(value))) bad_flag_value(name, args_number_text(value), "must be >= 0 and finite");
}

inline void check_one_of(std::string_view name, const std::string& value, std::initializer_list<const char*> valid,
                         const std::string& why) {
  for (const char* v : valid) {
    if (value == v) return;
  }
  bad_flag_value(name, value, why);
}

}  // namespace detail

inline optim::schedule_kind training_args::lr_schedule_kind() const {
  try {
    return optim::parse_schedule(lr_scheduler_type);
  } catch (const usage_error& e) {
    // parse_schedule's message names itself; the user needs only the names it lists.
    const std::string_view what = e.what();
    const std::size_t valid = what.find("valid names:");
    detail::bad_flag_value("lr_scheduler_type", lr_scheduler_type,
                           valid == std::string_view::npos ? std::string(what)
                                                           : "unknown schedule; " + std::string(what.substr(valid)));
  }
}

/// The values the training loop itself divides by, counts with or steps through: what qa_trainer checks for a
/// library user who fills training_args by hand (run_qa's parser checks them through validate()).
inline void training_args::validate_training() const {
  using detail::bad_flag_value;
  using detail::check_at_least;
  using detail::check_not_negative;

  detail::check_one_of("eval_strategy", eval_strategy, {"no", "epoch"},
                       "cputrain evaluates after training (no) or also after every epoch (epoch)");
  check_at_least("per_device_train_batch_size", per_device_train_batch_size, 1);
  check_at_least("per_device_eval_batch_size", per_device_eval_batch_size, 1);
  check_at_least("gradient_accumulation_steps", gradient_accumulation_steps, 1);
  check_not_negative("learning_rate", learning_rate);
  check_not_negative("weight_decay", weight_decay);
  if (!(adam_beta1 >= 0 && adam_beta1 < 1)) {
    bad_flag_value("adam_beta1", detail::args_number_text(adam_beta1), "must lie in [0, 1)");
  }
  if (!(adam_beta2 >= 0 && adam_beta2 < 1)) {
    bad_flag_value("adam_beta2", detail::args_number_text(adam_beta2), "must lie in [0, 1)");
  }
  check_not_negative("adam_epsilon", adam_epsilon);
  check_not_negative("max_grad_norm", max_grad_norm);
  // Hugging Face reads any max_steps <= 0 as "train for num_train_epochs"; only -1 says so on purpose, and a 0
  // meant as "no training" would silently train three epochs.
  if (max_steps == 0 || max_steps < -1) {
    bad_flag_value("max_steps", std::to_string(max_steps),
                   "must be a positive number of optimizer steps, or -1 to train for --num_train_epochs");
  }
  check_not_negative("num_train_epochs", num_train_epochs);
  if (max_steps < 0 && !(num_train_epochs > 0)) {
    bad_flag_value("num_train_epochs", detail::args_number_text(num_train_epochs),
                   "must be > 0 unless --max_steps is set");
  }
  (void)lr_schedule_kind();
  if (!(warmup_ratio >= 0 && warmup_ratio <= 1)) {
    bad_flag_value("warmup_ratio", detail::args_number_text(warmup_ratio), "must lie in [0, 1]");
  }
  check_at_least("warmup_steps", warmup_steps, 0);
  check_at_least("logging_steps", logging_steps, 1);
  detail::check_one_of("save_strategy", save_strategy, {"steps", "epoch", "no"},
                       "cputrain saves every --save_steps (steps), after every epoch (epoch) or never (no)");
  check_at_least("save_steps", save_steps, 1);
  check_at_least("save_total_limit", save_total_limit, 1);
  check_at_least("seed", seed, 0);  // numpy's and torch's seeds are unsigned
  check_at_least("threads", threads, 1);
  check_not_negative("termination_grace_period", termination_grace_period);
}

inline void training_args::validate() const {
  using detail::bad_flag_value;
  using detail::check_at_least;
  using detail::check_not_negative;

  // What to do, and with which model.
  if (output_dir.empty()) {
    throw usage_error("--output_dir is required: the directory for checkpoints, the trained model and the results");
  }
  if (!do_train && !do_eval && !do_predict) {
    throw usage_error("nothing to do: give --do_train, --do_eval or --do_predict");
  }
  if (!model_name_or_path && !config_name) {
    throw usage_error(
        "--model_name_or_path is required (the directory of a saved model), or --config_name to train a model "
        "from random weights");
  }
  if (!model_name_or_path && !tokenizer_name) {
    throw usage_error("--config_name " + *config_name +
                      " without --model_name_or_path needs --tokenizer_name: the vocabulary comes from one of them");
  }

  // Data.
  if (max_seq_length < 8 || max_seq_length > 4096) {
    bad_flag_value("max_seq_length", std::to_string(max_seq_length), "must lie in [8, 4096]");
  }
  check_at_least("doc_stride", doc_stride, 0);
  if (doc_stride >= max_seq_length) {
    bad_flag_value("doc_stride", std::to_string(doc_stride),
                   "must be less than --max_seq_length " + std::to_string(max_seq_length) +
                       ", since consecutive windows share --doc_stride tokens");
  }
  check_at_least("max_train_samples", max_train_samples, 1);
  check_at_least("max_eval_samples", max_eval_samples, 1);
  check_at_least("max_predict_samples", max_predict_samples, 1);
  if (!std::isfinite(null_score_diff_threshold)) {
    bad_flag_value("null_score_diff_threshold", detail::args_number_text(null_score_diff_threshold),
                   "must be finite");
  }
  check_at_least("n_best_size", n_best_size, 1);
  check_at_least("max_answer_length", max_answer_length, 1);
  check_at_least("preprocessing_num_workers", preprocessing_num_workers, 1);

  validate_training();

  // Which files each task needs, then that every path given exists.
  if (do_train && !train_file) throw usage_error("--do_train needs --train_file (a local SQuAD JSON file)");
  if (do_eval && !validation_file) {
    throw usage_error(std::string(eval_strategy == "no" ? "--do_eval" : "--eval_strategy " + eval_strategy) +
                      " needs --validation_file (a local SQuAD JSON file)");
  }
  if (do_predict && !test_file) throw usage_error("--do_predict needs --test_file (a local SQuAD JSON file)");

  const std::string not_downloaded =
      " (cputrain downloads nothing from the Hugging Face Hub: download the model first, e.g. with "
      "`huggingface-cli download <name> --local-dir <dir>`, and pass the directory)";
  if (model_name_or_path) {
    detail::check_path("model_name_or_path", *model_name_or_path, detail::path_kind::directory, not_downloaded);
  }
  if (config_name) detail::check_path("config_name", *config_name, detail::path_kind::either, not_downloaded);
  if (tokenizer_name) {
    detail::check_path("tokenizer_name", *tokenizer_name, detail::path_kind::either, not_downloaded);
  }
  if (train_file) detail::check_path("train_file", *train_file, detail::path_kind::file);
  if (validation_file) detail::check_path("validation_file", *validation_file, detail::path_kind::file);
  if (test_file) detail::check_path("test_file", *test_file, detail::path_kind::file);
  if (resume_from_checkpoint) {
    detail::check_path("resume_from_checkpoint", *resume_from_checkpoint, detail::path_kind::directory);
  }
  std::error_code ec;
  const auto out = std::filesystem::status(output_dir, ec);
  if (std::filesystem::exists(out) && !std::filesystem::is_directory(out)) {
    bad_flag_value("output_dir", output_dir, "exists and is not a directory");
  }
}

/// Every field (not the notices), in run_qa.py's order, as training_args.json in a checkpoint holds them; an
/// unset optional is null, as Python's None.
[[nodiscard]] inline nlohmann::ordered_json to_json(const training_args& args) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const detail::args_field& f : detail::args_fields) {
    std::visit(
        [&]<class F>(F training_args::*member) {
          const F& value = args.*member;
          if constexpr (std::is_same_v<F, std::optional<int>> || std::is_same_v<F, std::optional<std::string>>) {
            json[f.name] = value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
          } else {
            json[f.name] = value;
          }
        },
        f.member);
  }
  return json;
}

namespace detail {

inline training_args args_from_json(const nlohmann::ordered_json& json, std::string_view source) {
  if (!json.is_object()) {
    throw usage_error(std::string(source) + ": the top level is " + std::string(json.type_name()) +
                      ", not a JSON object of arguments");
  }
  training_args args;
  // Named references rather than a structured binding: Clang before 16 cannot capture bindings in lambdas.
  for (auto it = json.begin(); it != json.end(); ++it) {
    const std::string& key = it.key();
    const nlohmann::ordered_json& value = it.value();
    if (const args_field* f = find_field(key)) {
      std::visit(
          [&]<class F>(F training_args::*member) {
            using T = typename args_value<F>::type;
            if constexpr (!std::is_same_v<T, F>) {
              if (value.is_null()) {
                args.*member = std::nullopt;
                return;
              }
            }
            args.*member = value_from_json<T>(source, key, value);
          },
          f->member);
    } else if (const args_extra_flag* x = find_extra_flag(key)) {
      if (value.is_null()) continue;  // None: the flag was not given
      // Hugging Face's own training_args.json writes report_to as a list.
      std::vector<std::string> texts;
      if (key == "report_to" && value.is_array()) {
        for (const auto& item : value) texts.push_back(value_from_json<std::string>(source, key, item));
      } else if (x->boolean) {
        texts.emplace_back(value_from_json<bool>(source, key, value) ? "true" : "false");
      } else {
        texts.push_back(value_from_json<std::string>(source, key, value));
      }
      try {
        for (const std::string& text : texts) apply_extra_flag(args, key, text);
      } catch (const usage_error& e) {
        throw usage_error(std::string(source) + ": " + e.what());
      }
    } else {
      throw usage_error(std::string(source) + ": unknown key \"" + key +
                        "\"; the keys are the names of run_qa's flags without the leading --");
    }
  }
  apply_post_init(args);
  return args;
}

/// The text of a JSON file, or usage_error naming it: the file is the user's argument.
inline std::string read_args_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw usage_error(path.string() + ": no such file");
  if (!std::filesystem::is_regular_file(status)) throw usage_error(path.string() + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error(path.string() + ": cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw usage_error(path.string() + ": cannot read");
  return text;
}

}  // namespace detail

/// The fields of a JSON object as to_json writes it (or as HfArgumentParser.parse_json_file reads it: missing keys
/// keep their defaults). usage_error for an unknown key or a value of the wrong type, naming the key. Types only:
/// the values are not validated, so that a checkpoint's arguments read on another machine need not find its files.
[[nodiscard]] inline training_args from_json(const nlohmann::ordered_json& json) {
  return detail::args_from_json(json, "training arguments JSON");
}

/// run_qa's arguments from a JSON file (run_qa args.json), validated. usage_error naming the file, then the key
/// or the flag.
[[nodiscard]] inline training_args read_training_args_json(const std::filesystem::path& path) {
  const std::string text = detail::read_args_file(path);
  // nlohmann would stop at a NUL byte as if the input ended there; JSON text cannot contain one.
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    throw usage_error(path.string() + ": not valid JSON: a NUL byte at offset " + std::to_string(nul));
  }
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(text, json_nesting_limit<nlohmann::ordered_json>([&] {
      throw usage_error(path.string() + ": not an arguments file: the JSON nests deeper than " +
                        std::to_string(json_max_nesting) + " levels");
    }));
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(path.string() + ": not valid JSON: " + e.what());
  }
  training_args args = detail::args_from_json(json, path.string());
  try {
    args.validate();
  } catch (const usage_error& e) {
    throw usage_error(path.string() + ": " + e.what());
  }
  return args;
}

namespace detail {

namespace po = boost::program_options;

inline std::string default_text(const training_args& defaults, const args_member& member) {
  return std::visit(
      [&]<class F>(F training_args::*m) -> std::string {
        const F& value = defaults.*m;
        if constexpr (std::is_same_v<F, bool>) {
          return value ? "true" : "false";
        } else if constexpr (std::is_same_v<F, int>) {
          return std::to_string(value);
        } else if constexpr (std::is_same_v<F, double>) {
          return args_number_text(value);
        } else if constexpr (std::is_same_v<F, std::string>) {
          return value;
        } else {
          return "";  // optional: unset
        }
      },
      member);
}

inline const char* value_name(const args_member& member) {
  return std::visit(
      []<class F>(F training_args::*) -> const char* {
        using T = typename args_value<F>::type;
        if constexpr (std::is_same_v<T, int>) {
          return "int";
        } else if constexpr (std::is_same_v<T, double>) {
          return "float";
        } else {
          return "str";
        }
      },
      member);
}

inline bool is_bool(const args_member& member) { return std::holds_alternative<bool training_args::*>(member); }

inline po::typed_value<std::string>* bool_value() {
  return po::value<std::string>()->value_name("bool")->implicit_value("true");
}

/// The options, grouped as --help shows them. Values stay text: converting them here gives messages that name the
/// flag and the rule, and leaves repeated flags to the last one, as argparse does.
inline po::options_description args_options(const std::string& caption) {
  po::options_description model("Model", 80, 40), data("Data", 80, 40), training("Training", 80, 40),
      compat("Compatibility (accepted, no effect)", 80, 40);
  const auto group = [&](args_group g) -> po::options_description& {
    switch (g) {
      case args_group::model:
        return model;
      case args_group::data:
        return data;
      case args_group::training:
        return training;
      case args_group::compatibility:
        break;
    }
    return compat;
  };
  const training_args defaults;
  for (const args_field& f : args_fields) {
    std::string help = f.help;
    if (const std::string d = default_text(defaults, f.member); !d.empty()) help += " (default: " + d + ")";
    if (is_bool(f.member)) {
      group(f.group).add_options()(f.name, bool_value(), help.c_str());
      if (defaults.*std::get<bool training_args::*>(f.member)) {
        const std::string no = std::string("no_") + f.name;
        group(f.group).add_options()(no.c_str(), po::value<std::string>()->zero_tokens(),
                                     ("Set --" + std::string(f.name) + " false").c_str());
      }
    } else {
      group(f.group).add_options()(f.name, po::value<std::string>()->value_name(value_name(f.member)),
                                   help.c_str());
    }
  }
  for (const args_extra_flag& x : args_extra_flags) {
    if (x.boolean) {
      group(x.group).add_options()(x.name, bool_value(), x.help);
    } else {
      group(x.group).add_options()(x.name, po::value<std::string>()->value_name("str"), x.help);
    }
  }
  po::options_description all(caption, 80, 40);
  all.add_options()("help,h", "Print this help and exit");
  all.add(model).add(data).add(training).add(compat);
  return all;
}

/// "--do-train" is "--do_train", as HfArgumentParser registers both spellings of every flag.
inline std::string underscored(const std::string& token) {
  if (token.size() < 3 || token.compare(0, 2, "--") != 0) return token;
  std::string out = token;
  const std::size_t end = std::min(out.find('='), out.size());
  std::replace(out.begin() + 2, out.begin() + static_cast<std::ptrdiff_t>(end), '-', '_');
  return out;
}

inline void apply_option(training_args& args, const po::option& option) {
  const std::string& name = option.string_key;
  if (name.empty()) {
    throw usage_error("unexpected argument \"" + option.value.front() +
                      "\": every value follows its --flag (run_qa --help lists them)");
  }
  const std::string text = option.value.empty() ? "true" : option.value.front();
  if (const args_field* f = find_field(name)) {
    std::visit(
        [&]<class F>(F training_args::*member) {
          args.*member = value_from_text<typename args_value<F>::type>(name, text);
        },
        f->member);
  } else if (name.rfind("no_", 0) == 0 && find_field(name.substr(3))) {
    args.*std::get<bool training_args::*>(find_field(name.substr(3))->member) = false;
  } else if (find_extra_flag(name)) {
    apply_extra_flag(args, name, text);
  } else {
    throw usage_error("cputrain::train: no handler for --" + name);
  }
}

}  // namespace detail

/// run_qa's command line, as run_qa.py reads it: flags (see the header comment), or a single argument ending in
/// ".json" naming a file of them. --help or -h anywhere returns the help text instead. The arguments are validated;
/// every mistake is a usage_error naming the flag.
[[nodiscard]] inline parsed_command_line parse_training_args(int argc, const char* const* argv) {
  namespace po = boost::program_options;
  const std::string program =
      argc > 0 && argv[0] != nullptr ? std::filesystem::path(argv[0]).filename().string() : std::string("run_qa");
  std::vector<std::string> tokens;
  for (int i = 1; i < argc; ++i) tokens.push_back(detail::underscored(argv[i]));

  parsed_command_line result;
  // argparse acts on -h as soon as it meets it, whatever else is wrong with the line.
  if (std::find_if(tokens.begin(), tokens.end(), [](const std::string& t) { return t == "-h" || t == "--help"; }) !=
      tokens.end()) {
    std::ostringstream text;
    text << "Usage: " << program << " [options]\n       " << program
         << " args.json    (the same options as one JSON object)\n\n"
         << detail::args_options("Options");
    result.help = true;
    result.help_text = text.str();
    return result;
  }
  // run_qa.py's rule, except that "--train_file=x.json" alone is a flag (its missing companions are the error).
  if (argc == 2 && std::string_view(argv[1]).ends_with(".json") && !std::string_view(argv[1]).starts_with("-")) {
    result.args = read_training_args_json(argv[1]);
    return result;
  }

  const po::options_description options = detail::args_options(program);
  po::parsed_options parsed(&options);
  try {
    // No abbreviations: a typo must not silently become another flag.
    parsed = po::command_line_parser(tokens)
                 .options(options)
                 .style(po::command_line_style::unix_style & ~po::command_line_style::allow_guessing)
                 .run();
  } catch (const po::unknown_option& e) {
    throw usage_error(std::string(e.what()) + " (" + program + " --help lists the flags cputrain accepts)");
  } catch (const po::error& e) {
    throw usage_error(e.what());
  }
  for (const po::option& option : parsed.options) detail::apply_option(result.args, option);
  detail::apply_post_init(result.args);
  result.args.validate();
  return result;
}

}  // namespace cputrain::train
