// cputrain::cli::validate — whether a program's arguments can run: what to do and with which model, the data flags,
// the training loop's values (train::training_options::validate) and that every file and directory named exists.
// The first mistake is a usage_error naming the flag, its value and the rule.
#pragma once

#include "cputrain/cli/trainer_options.hpp"

#include <cmath>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "cputrain/cli/training_args.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/train/option_checks.hpp"

namespace cputrain::cli {

namespace detail {

enum class path_kind { file, directory, either };

/// usage_error unless `path` exists as the kind wanted; `hint` is appended when it does not exist at all.
inline void check_path(std::string_view name, const std::string& path, path_kind kind, const std::string& hint = "") {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    const char* what = kind == path_kind::file        ? "no such file"
                       : kind == path_kind::directory ? "no such directory"
                                                      : "no such file or directory";
    train::checks::bad_flag_value(name, path, what + hint);
  }
  if (kind == path_kind::file && !std::filesystem::is_regular_file(status)) {
    train::checks::bad_flag_value(name, path, "not a regular file");
  }
  if (kind == path_kind::directory && !std::filesystem::is_directory(status)) {
    train::checks::bad_flag_value(name, path, "not a directory");
  }
}

/// What to do, and with which model.
inline void validate_task(const training_args& args) {
  if (args.output_dir.empty()) {
    throw usage_error("--output_dir is required: the directory for checkpoints, the trained model and the results");
  }
  if (!args.do_train && !args.do_eval && !args.do_predict) {
    throw usage_error("nothing to do: give --do_train, --do_eval or --do_predict");
  }
  if (!args.model_name_or_path && !args.config_name) {
    throw usage_error(
        "--model_name_or_path is required (the directory of a saved model), or --config_name to train a model "
        "from random weights");
  }
  if (!args.model_name_or_path && !args.tokenizer_name) {
    throw usage_error("--config_name " + *args.config_name +
                      " without --model_name_or_path needs --tokenizer_name: the vocabulary comes from one of them");
  }
}

/// The data flags: windows, sample limits, post-processing.
inline void validate_data(const training_args& args) {
  using train::checks::bad_flag_value;
  using train::checks::check_at_least;
  const bool model_length = args.max_seq_length == 0 && (args.which == program::ner || args.which == program::mlm);
  if (!model_length && (args.max_seq_length < 8 || args.max_seq_length > 4096)) {
    bad_flag_value("max_seq_length", std::to_string(args.max_seq_length), std::string("must lie in [8, 4096]") + (args.which == program::ner || args.which == program::mlm ? " (or 0: the model's positions)" : ""));
  }
  check_at_least("doc_stride", args.doc_stride, 0);
  if (args.which == program::qa && args.doc_stride >= args.max_seq_length) {
    bad_flag_value("doc_stride", std::to_string(args.doc_stride),
                   "must be less than --max_seq_length " + std::to_string(args.max_seq_length) +
                       ", since consecutive windows share --doc_stride tokens");
  }
  check_at_least("max_train_samples", args.max_train_samples, 1);
  check_at_least("max_eval_samples", args.max_eval_samples, 1);
  check_at_least("max_predict_samples", args.max_predict_samples, 1);
  if (!std::isfinite(args.null_score_diff_threshold)) {
    bad_flag_value("null_score_diff_threshold", train::checks::number_text(args.null_score_diff_threshold),
                   "must be finite");
  }
  check_at_least("n_best_size", args.n_best_size, 1);
  check_at_least("max_answer_length", args.max_answer_length, 1);
  check_at_least("preprocessing_num_workers", args.preprocessing_num_workers, 1);
  if (!(args.mlm_probability > 0 && args.mlm_probability < 1))
    bad_flag_value("mlm_probability", train::checks::number_text(args.mlm_probability), "must lie in (0, 1)");
  if (args.validation_split_percentage < 0 || args.validation_split_percentage > 99)
    bad_flag_value("validation_split_percentage", std::to_string(args.validation_split_percentage), "must lie in [0, 99]");
  if (args.task_name) {
    train::checks::check_one_of("task_name", *args.task_name,
                                {"cola", "sst2", "mrpc", "qqp", "stsb", "mnli", "qnli", "rte", "wnli"},
                                "GLUE's tasks are cola, sst2, mrpc, qqp, stsb, mnli, qnli, rte and wnli");
    if (args.text_column_names)
      bad_flag_value("text_column_names", *args.text_column_names, "--task_name " + *args.task_name + " names the columns");
  }
  for (const auto* column : {&args.text_column_names, &args.label_column_name, &args.text_column_name}) {
    if (*column && column->value().empty()) throw usage_error("an empty column name (--text_column_names, --label_column_name or --text_column_name)");
  }
}

/// The training loop's values (train::training_options::validate), the evaluation strategy and the threads.
inline void validate_training(const training_args& args) {
  loop_options(args).validate();
  train::checks::check_at_least("threads", args.threads, 1);
}

/// What the program's data files are, for messages.
inline const char* data_file_kind(program p) {
  switch (p) {
    case program::qa:
      return "a local SQuAD JSON file";
    case program::glue:
    case program::ner:
      return "a local CSV, JSON or JSON Lines file";
    case program::mlm:
      return "a local text, CSV, JSON or JSON Lines file";
  }
  return "a local file";
}

/// Which files each task needs, then that every path given exists.
inline void validate_files(const training_args& args) {
  const std::string kind = data_file_kind(args.which);
  if (args.do_train && !args.train_file) throw usage_error("--do_train needs --train_file (" + kind + ")");
  // run_mlm evaluates on the first --validation_split_percentage of --train_file when it has no validation file.
  const bool split_from_train = args.which == program::mlm && args.train_file;
  if (args.do_eval && !args.validation_file && !split_from_train) {
    throw usage_error(std::string(args.eval_strategy == "no" ? "--do_eval" : "--eval_strategy " + args.eval_strategy) +
                      " needs --validation_file (" + kind + ")");
  }
  if (args.do_predict && !args.test_file) throw usage_error("--do_predict needs --test_file (" + kind + ")");

  const std::string not_downloaded =
      " (cputrain downloads nothing from the Hugging Face Hub: download the model first, e.g. with "
      "`huggingface-cli download <name> --local-dir <dir>`, and pass the directory)";
  if (args.model_name_or_path) {
    check_path("model_name_or_path", *args.model_name_or_path, path_kind::directory, not_downloaded);
  }
  if (args.config_name) check_path("config_name", *args.config_name, path_kind::either, not_downloaded);
  if (args.tokenizer_name) check_path("tokenizer_name", *args.tokenizer_name, path_kind::either, not_downloaded);
  if (args.train_file) check_path("train_file", *args.train_file, path_kind::file);
  if (args.validation_file) check_path("validation_file", *args.validation_file, path_kind::file);
  if (args.test_file) check_path("test_file", *args.test_file, path_kind::file);
  if (args.validation_mismatched_file) {
    check_path("validation_mismatched_file", *args.validation_mismatched_file, path_kind::file);
    if (args.task_name != "mnli")
      train::checks::bad_flag_value("validation_mismatched_file", *args.validation_mismatched_file,
                                    "is MNLI's second validation split: it needs --task_name mnli");
  }
  if (args.resume_from_checkpoint) {
    check_path("resume_from_checkpoint", *args.resume_from_checkpoint, path_kind::directory);
  }
  std::error_code ec;
  const auto out = std::filesystem::status(args.output_dir, ec);
  if (std::filesystem::exists(out) && !std::filesystem::is_directory(out)) {
    train::checks::bad_flag_value("output_dir", args.output_dir, "exists and is not a directory");
  }
}

}  // namespace detail

/// usage_error naming the flag, its value and the rule, for the first value that cannot run; also checks that
/// the files and directories named exist.
CPUTRAIN_DECL void validate(const training_args& args);

#if CPUTRAIN_DEFINE_FUNCTIONS

CPUTRAIN_DECL void validate(const training_args& args) {
  detail::validate_task(args);
  detail::validate_data(args);
  detail::validate_training(args);
  detail::validate_files(args);
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::cli
