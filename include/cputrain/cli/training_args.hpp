// cputrain::cli::training_args — run_qa's whole command line: Hugging Face's TrainingArguments and run_qa.py's
// ModelArguments and DataTrainingArguments as one struct, with their names, meanings and defaults. The training
// loop's part converts to train::training_options (cli/trainer_options.hpp); parse_args.hpp reads it from argv.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cputrain::cli {

/// Everything run_qa is told, under Hugging Face's field names. Default-constructed, it holds Hugging Face's
/// defaults; only validate() (cli/validate_args.hpp, called by the parsers) says whether a set of values can run.
struct training_args {
  // ---- run_qa.py's ModelArguments. Local paths only: cputrain downloads nothing from the Hub.
  /// Directory of a saved model (config.json, weights, vocab.txt).
  std::optional<std::string> model_name_or_path;
  /// config.json if not the model's; alone: random weights.
  std::optional<std::string> config_name;
  /// Vocabulary if not the model's.
  std::optional<std::string> tokenizer_name;

  // ---- run_qa.py's DataTrainingArguments
  /// SQuAD JSON for --do_train.
  std::optional<std::string> train_file;
  /// SQuAD JSON for --do_eval.
  std::optional<std::string> validation_file;
  /// SQuAD JSON for --do_predict.
  std::optional<std::string> test_file;
  int max_seq_length = 384;
  /// run_qa.py's default; false pads each batch to its longest window.
  bool pad_to_max_length = true;
  /// Tokens shared by consecutive windows of a long context.
  int doc_stride = 128;
  std::optional<int> max_train_samples;
  std::optional<int> max_eval_samples;
  std::optional<int> max_predict_samples;
  bool version_2_with_negative = false;
  double null_score_diff_threshold = 0.0;
  int n_best_size = 20;
  int max_answer_length = 30;
  /// Accepted, changes nothing: cputrain keeps no dataset cache.
  bool overwrite_cache = false;
  /// Accepted, changes nothing: features use the process's threads.
  std::optional<int> preprocessing_num_workers;

  // ---- TrainingArguments
  /// Required.
  std::string output_dir;
  bool overwrite_output_dir = false;
  bool do_train = false;
  bool do_eval = false;
  bool do_predict = false;
  /// "no" or "epoch" (which also sets do_eval, as Hugging Face does).
  std::string eval_strategy = "no";
  int per_device_train_batch_size = 8;
  int per_device_eval_batch_size = 8;
  int gradient_accumulation_steps = 1;
  double learning_rate = 5e-5;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_epsilon = 1e-8;
  /// 0 disables clipping.
  double max_grad_norm = 1.0;
  /// A double, as in Hugging Face: 2.5 epochs is a valid request.
  double num_train_epochs = 3.0;
  /// > 0 overrides num_train_epochs.
  int max_steps = -1;
  std::string lr_scheduler_type = "linear";
  double warmup_ratio = 0.0;
  /// > 0 overrides warmup_ratio.
  int warmup_steps = 0;
  int logging_steps = 500;
  /// "steps", "epoch" or "no".
  std::string save_strategy = "steps";
  int save_steps = 500;
  std::optional<int> save_total_limit;
  int seed = 42;
  /// The program's choice of precision policy (run_qa: bf16_mixed instead of fp32); the trainer follows the model.
  bool bf16 = false;
  /// Accepted; cputrain always runs on the CPU.
  bool use_cpu = false;
  bool dataloader_drop_last = false;
  /// Batches of windows of similar length (train/sampler.hpp).
  bool group_by_length = false;
  std::optional<std::string> resume_from_checkpoint;
  bool disable_tqdm = false;
  /// cputrain's own: compute threads per process; unset, the thread plan decides.
  std::optional<int> threads;
  /// cputrain's own: seconds a SIGTERM leaves to write a checkpoint (Kubernetes' default grace); 0: none.
  double termination_grace_period = 30.0;
  /// cputrain's own: with several processes, average the word-embedding gradient by sending only the rows the
  /// step's tokens used (distributed/sparse_row_reducer.hpp); false sends the whole table (for comparison).
  bool sparse_embedding_gradients = true;
  /// cputrain's own: "fp32" or "bf16", what gradients travel as between processes (train::training_options).
  std::string ddp_communication_dtype = "fp32";
  /// Hugging Face's: MiB a gradient bucket grows to; unset, DDP's 25.
  std::optional<int> ddp_bucket_cap_mb;

  /// One line per accepted flag that changes nothing here, for the program to print. Not an argument: to_json
  /// leaves it out.
  std::vector<std::string> notices;

  friend bool operator==(const training_args&, const training_args&) = default;
};

namespace detail {

/// What TrainingArguments.__post_init__ derives: an evaluation strategy other than "no" turns --do_eval on.
inline void apply_post_init(training_args& args) {
  if (args.eval_strategy != "no") args.do_eval = true;
}

}  // namespace detail

}  // namespace cputrain::cli
