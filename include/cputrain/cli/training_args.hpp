// cputrain::cli::training_args — a program's whole command line (run_qa, run_glue, run_ner, run_mlm): Hugging
// Face's TrainingArguments and the scripts' ModelArguments and DataTrainingArguments as one struct, with their
// names, meanings and defaults; `program` says whose. The training loop's part is its base,
// train::training_options, so a loop option is declared once, there; parse_args.hpp reads it from argv.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cputrain/train/training_options.hpp"

namespace cputrain::cli {

/// Which of Hugging Face's example scripts a command line is for: each takes its own data flags.
enum class program : unsigned { qa = 1, glue = 2, ner = 4, mlm = 8 };

/// "run_qa", "run_glue", ...
[[nodiscard]] constexpr const char* program_name(program p) noexcept {
  switch (p) {
    case program::qa:
      return "run_qa";
    case program::glue:
      return "run_glue";
    case program::ner:
      return "run_ner";
    case program::mlm:
      return "run_mlm";
  }
  return "run_qa";
}

/// Everything run_qa is told, under Hugging Face's field names: the loop's options (the base) and the program's
/// own. Default-constructed, it holds Hugging Face's defaults; only validate() (cli/validate_args.hpp, called by
/// the parsers) says whether a set of values can run. The inherited recorded_arguments is not an argument: it stays
/// unset here, and to_training_options fills it in the loop's copy.
struct training_args : train::training_options {
  /// Whose command line this is (not a flag): it decides the flags taken and some defaults (defaults_for).
  program which = program::qa;

  // ---- run_qa.py's ModelArguments. Local paths only: cputrain downloads nothing from the Hub.
  /// Directory of a saved model (config.json, weights, vocab.txt).
  std::optional<std::string> model_name_or_path;
  /// config.json if not the model's; alone: random weights.
  std::optional<std::string> config_name;
  /// Vocabulary if not the model's.
  std::optional<std::string> tokenizer_name;

  // ---- The scripts' DataTrainingArguments (pad_to_max_length is the loop's: it shapes the batches)
  /// The data file for --do_train (run_qa: SQuAD JSON; run_glue, run_ner: CSV, JSON or JSON Lines).
  std::optional<std::string> train_file;
  /// For --do_eval.
  std::optional<std::string> validation_file;
  /// For --do_predict.
  std::optional<std::string> test_file;
  /// run_qa's 384; run_glue's 128; run_ner's and run_mlm's 0: the model's positions (their scripts' None).
  int max_seq_length = 384;
  /// Tokens shared by consecutive windows of a long context.
  int doc_stride = 128;
  std::optional<int> max_train_samples;
  std::optional<int> max_eval_samples;
  std::optional<int> max_predict_samples;
  bool version_2_with_negative = false;
  double null_score_diff_threshold = 0.0;
  int n_best_size = 20;
  int max_answer_length = 30;
  /// run_glue: a GLUE task (cola, sst2, mrpc, qqp, stsb, mnli, qnli, rte, wnli): its columns and metric.
  std::optional<std::string> task_name;
  /// run_glue --task_name mnli: MNLI's mismatched validation file, evaluated after the matched one (eval_*_mm).
  std::optional<std::string> validation_mismatched_file;
  /// run_glue (run_classification's): the text columns, comma-separated, joined by text_column_delimiter.
  std::optional<std::string> text_column_names;
  std::string text_column_delimiter = " ";
  /// run_glue: the label column (default "label"); run_ner: the tags column (default "ner_tags").
  std::optional<std::string> label_column_name;
  /// run_ner: the words column (default "tokens").
  std::optional<std::string> text_column_name;
  /// run_ner: every piece of a word labelled (B- turned into I-), not only its first.
  bool label_all_tokens = false;
  /// run_ner: per entity type metrics too.
  bool return_entity_level_metrics = false;
  /// run_mlm: each non-empty line one sequence, instead of texts concatenated and cut into blocks.
  bool line_by_line = false;
  /// run_mlm: the share of tokens masked (of them 80% [MASK], 10% a random token, 10% unchanged).
  double mlm_probability = 0.15;
  /// run_mlm without --validation_file: the first N percent of the training texts evaluate instead of training.
  int validation_split_percentage = 5;
  /// Accepted, changes nothing: cputrain keeps no dataset cache.
  bool overwrite_cache = false;
  /// Accepted, changes nothing: features use the process's threads.
  std::optional<int> preprocessing_num_workers;

  // ---- TrainingArguments that the loop does not read
  bool overwrite_output_dir = false;
  bool do_train = false;
  bool do_eval = false;
  bool do_predict = false;
  /// The program's choice of precision policy (run_qa: bf16_mixed instead of fp32); the trainer follows the model.
  bool bf16 = false;
  /// Accepted; cputrain always runs on the CPU.
  bool use_cpu = false;
  std::optional<std::string> resume_from_checkpoint;
  /// cputrain's own: compute threads per process; unset, the thread plan decides.
  std::optional<int> threads;
  /// Hugging Face's: MiB a gradient bucket grows to; unset, DDP's 25. It hides the loop's int of the same name
  /// (which stays 25 here) because unset must stay unset: training_args.json writes null, as Hugging Face's None,
  /// and --help shows no default. detail::loop_options converts it.
  std::optional<int> ddp_bucket_cap_mb;

  /// One line per accepted flag that changes nothing here, for the program to print. Not an argument: to_json
  /// leaves it out.
  std::vector<std::string> notices;

  /// Hides the base's check of the loop's values alone: cli::validate(args) (validate_args.hpp) checks them all.
  void validate() const = delete;

  friend bool operator==(const training_args&, const training_args&) = default;
};

/// A command line's defaults for `p`: Hugging Face's, where the scripts differ (run_glue's max_seq_length 128).
[[nodiscard]] inline training_args defaults_for(program p) {
  training_args args;
  args.which = p;
  if (p == program::glue) args.max_seq_length = 128;
  if (p == program::ner || p == program::mlm) {
    args.max_seq_length = 0;
    args.pad_to_max_length = false;  // DataCollatorForTokenClassification / ForLanguageModeling pad per batch
  }
  return args;
}

namespace detail {

/// What TrainingArguments.__post_init__ derives: an evaluation strategy other than "no" turns --do_eval on.
inline void apply_post_init(training_args& args) {
  if (args.eval_strategy != "no") args.do_eval = true;
}

}  // namespace detail

}  // namespace cputrain::cli
