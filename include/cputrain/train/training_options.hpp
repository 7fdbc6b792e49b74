// cputrain::train::training_options — what the training loop (qa_trainer) is told: the fields of Hugging Face's
// TrainingArguments it reads, under their names and with their defaults, and the check that they can run
// (validate: a usage_error naming the field by its flag). training_option_fields names each field once; to_json
// (what a checkpoint's training_args.json holds) is written from it, and the command line's flag table
// (cli/args_fields.hpp) is checked against it. A program's command line holds these options as its base
// (cli/training_args.hpp); a library user fills them in code.
#pragma once

#include "cputrain/optim/lr_schedule.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/train/option_checks.hpp"

namespace cputrain::train {

/// The training loop's options, under Hugging Face's TrainingArguments names. Default-constructed, it holds
/// Hugging Face's defaults.
struct training_options {
  /// Where checkpoints are written (checkpoint-N directories).
  std::string output_dir;
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
  /// "no", "steps" (every eval_steps) or "epoch": when train() evaluates (trainer_callbacks::evaluate).
  std::string eval_strategy = "no";
  /// Steps between evaluations (eval_strategy "steps"); unset, logging_steps, as Hugging Face.
  std::optional<int> eval_steps;
  /// At the end, the weights of the checkpoint with the best metric_for_best_model (train/best_model.hpp).
  bool load_best_model_at_end = false;
  /// The evaluation metric that ranks checkpoints ("eval_" may be left out); unset, "loss" when ranking is asked.
  std::optional<std::string> metric_for_best_model;
  /// Whether a larger metric is better; unset, false for a name ending in "loss", true otherwise.
  std::optional<bool> greater_is_better;
  /// Hugging Face's EarlyStoppingCallback: stop after this many evaluations without improvement.
  std::optional<int> early_stopping_patience;
  /// ... by more than this much.
  double early_stopping_threshold = 0.0;
  int seed = 42;
  /// run_qa.py's default; false pads each batch to its longest window.
  bool pad_to_max_length = true;
  bool dataloader_drop_last = false;
  /// Batches of windows of similar length (train/sampler.hpp).
  bool group_by_length = false;
  bool disable_tqdm = false;
  /// cputrain's own: seconds a SIGTERM leaves to write a checkpoint (Kubernetes' default grace); 0: none.
  double termination_grace_period = 30.0;
  /// cputrain's own: with several processes, average the word-embedding gradient by sending only the rows the
  /// step's tokens used (distributed/sparse_row_reducer.hpp); false sends the whole table (for comparison).
  bool sparse_embedding_gradients = true;
  /// cputrain's own: what gradients travel as between processes: "fp32" (exact) or "bf16" (half the bytes; each
  /// rank's gradients and their sum rounded to bf16, every rank still equal: distributed/bf16_bucket_exchange.hpp).
  std::string ddp_communication_dtype = "fp32";
  /// Hugging Face's: the size (MiB of fp32 gradients) a bucket of the all-reduce grows to; 0: one per tensor.
  int ddp_bucket_cap_mb = 25;
  /// What every checkpoint's training_args.json records: a program's whole arguments (run_qa's command line,
  /// cli::to_json); unset, these options as to_json(training_options) writes them.
  std::optional<nlohmann::ordered_json> recorded_arguments;

  /// usage_error naming the field by its flag, its value and the rule, for the first value the loop cannot run
  /// with (batch sizes, steps, schedule, optimizer, logging and saving).
  void validate() const;

  /// The evaluation and best-model options: strategy, steps, and what ranking and early stopping need.
  void validate_evaluation() const;

  /// The metric that ranks checkpoints, as a key of the evaluation's metrics ("eval_loss"): metric_for_best_model
  /// with "eval_" put in front where missing; "eval_loss" when it is unset.
  [[nodiscard]] std::string best_metric_key() const;
  /// greater_is_better, or what Hugging Face infers from the metric's name.
  [[nodiscard]] bool best_metric_greater() const;
  /// Steps between evaluations under eval_strategy "steps".
  [[nodiscard]] int evaluation_interval() const { return eval_steps.value_or(logging_steps); }

  /// lr_scheduler_type as the schedule it names (usage_error listing the valid names otherwise).
  [[nodiscard]] optim::schedule_kind lr_schedule_kind() const;

  friend bool operator==(const training_options&, const training_options&) = default;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL optim::schedule_kind training_options::lr_schedule_kind() const {
  try {
    return optim::parse_schedule(lr_scheduler_type);
  } catch (const usage_error& e) {
    // parse_schedule's message names itself; the user needs only the names it lists.
    const std::string_view what = e.what();
    const std::size_t valid = what.find("valid names:");
    checks::bad_flag_value("lr_scheduler_type", lr_scheduler_type,
                           valid == std::string_view::npos ? std::string(what)
                                                           : "unknown schedule; " + std::string(what.substr(valid)));
  }
}

CPUTRAIN_DECL void training_options::validate() const {
  using checks::bad_flag_value;
  using checks::check_at_least;
  using checks::check_not_negative;
  using checks::number_text;

  check_at_least("per_device_train_batch_size", per_device_train_batch_size, 1);
  check_at_least("per_device_eval_batch_size", per_device_eval_batch_size, 1);
  check_at_least("gradient_accumulation_steps", gradient_accumulation_steps, 1);
  check_not_negative("learning_rate", learning_rate);
  check_not_negative("weight_decay", weight_decay);
  if (!(adam_beta1 >= 0 && adam_beta1 < 1)) bad_flag_value("adam_beta1", number_text(adam_beta1), "must lie in [0, 1)");
  if (!(adam_beta2 >= 0 && adam_beta2 < 1)) bad_flag_value("adam_beta2", number_text(adam_beta2), "must lie in [0, 1)");
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
    bad_flag_value("num_train_epochs", number_text(num_train_epochs), "must be > 0 unless --max_steps is set");
  }
  (void)lr_schedule_kind();
  if (!(warmup_ratio >= 0 && warmup_ratio <= 1)) {
    bad_flag_value("warmup_ratio", number_text(warmup_ratio), "must lie in [0, 1]");
  }
  check_at_least("warmup_steps", warmup_steps, 0);
  check_at_least("logging_steps", logging_steps, 1);
  checks::check_one_of("save_strategy", save_strategy, {"steps", "epoch", "no"},
                       "cputrain saves every --save_steps (steps), after every epoch (epoch) or never (no)");
  check_at_least("save_steps", save_steps, 1);
  check_at_least("save_total_limit", save_total_limit, 1);
  validate_evaluation();
  checks::check_one_of("ddp_communication_dtype", ddp_communication_dtype, {"fp32", "bf16"},
                       "gradients travel between processes as fp32 (exact) or bf16 (half the bytes)");
  // Beyond 2^20 MiB the byte count would no longer be a bucket size anyone means (and could overflow).
  if (ddp_bucket_cap_mb < 0 || ddp_bucket_cap_mb > (1 << 20)) {
    bad_flag_value("ddp_bucket_cap_mb", std::to_string(ddp_bucket_cap_mb),
                   "must lie in [0, 1048576] MiB (0: every tensor its own bucket)");
  }
  check_at_least("seed", seed, 0);  // numpy's and torch's seeds are unsigned
  check_not_negative("termination_grace_period", termination_grace_period);
}

CPUTRAIN_DECL void training_options::validate_evaluation() const {
  using checks::bad_flag_value;
  checks::check_one_of("eval_strategy", eval_strategy, {"no", "steps", "epoch"},
                       "cputrain evaluates never during training (no), every --eval_steps (steps) or after every "
                       "epoch (epoch)");
  checks::check_at_least("eval_steps", eval_steps, 1);
  checks::check_at_least("early_stopping_patience", early_stopping_patience, 1);
  checks::check_not_negative("early_stopping_threshold", early_stopping_threshold);
  if (metric_for_best_model && metric_for_best_model->empty())
    bad_flag_value("metric_for_best_model", "\"\"", "names a metric of the evaluation, e.g. accuracy or loss");
  if (load_best_model_at_end) {
    if (eval_strategy == "no")
      bad_flag_value("load_best_model_at_end", "true", "needs evaluations to rank: give --eval_strategy steps or epoch");
    if (save_strategy != eval_strategy)
      bad_flag_value("load_best_model_at_end", "true",
                     "needs --save_strategy to match --eval_strategy (" + save_strategy + " vs " + eval_strategy +
                         "): each evaluated step must have its checkpoint");
    if (eval_strategy == "steps" && save_steps % evaluation_interval() != 0)
      bad_flag_value("save_steps", std::to_string(save_steps),
                     "must be a multiple of --eval_steps " + std::to_string(evaluation_interval()) +
                         " with --load_best_model_at_end, so that every checkpoint has an evaluation");
  }
  if (early_stopping_patience && !load_best_model_at_end)
    bad_flag_value("early_stopping_patience", std::to_string(*early_stopping_patience),
                   "needs --load_best_model_at_end (and so --eval_strategy), as Hugging Face's EarlyStoppingCallback");
}

CPUTRAIN_DECL std::string training_options::best_metric_key() const {
  const std::string name = metric_for_best_model.value_or("loss");
  return name.starts_with("eval_") ? name : "eval_" + name;
}

CPUTRAIN_DECL bool training_options::best_metric_greater() const {
  return greater_is_better.value_or(!metric_for_best_model.value_or("loss").ends_with("loss"));
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// A member of training_options, of one of the types its fields have.
using option_member =
    std::variant<bool training_options::*, int training_options::*, double training_options::*,
                 std::string training_options::*, std::optional<int> training_options::*,
                 std::optional<std::string> training_options::*, std::optional<bool> training_options::*>;

/// A field under its Hugging Face name.
struct option_field {
  const char* name;
  option_member member;
};

/// Every field but recorded_arguments (not an option: the record of a program's arguments), in TrainingArguments'
/// order: the keys of to_json. tests/train/training_options_test.cpp counts training_options' fields against it.
inline constexpr option_field training_option_fields[] = {
    {"output_dir", &training_options::output_dir},
    {"per_device_train_batch_size", &training_options::per_device_train_batch_size},
    {"per_device_eval_batch_size", &training_options::per_device_eval_batch_size},
    {"gradient_accumulation_steps", &training_options::gradient_accumulation_steps},
    {"learning_rate", &training_options::learning_rate},
    {"weight_decay", &training_options::weight_decay},
    {"adam_beta1", &training_options::adam_beta1},
    {"adam_beta2", &training_options::adam_beta2},
    {"adam_epsilon", &training_options::adam_epsilon},
    {"max_grad_norm", &training_options::max_grad_norm},
    {"num_train_epochs", &training_options::num_train_epochs},
    {"max_steps", &training_options::max_steps},
    {"lr_scheduler_type", &training_options::lr_scheduler_type},
    {"warmup_ratio", &training_options::warmup_ratio},
    {"warmup_steps", &training_options::warmup_steps},
    {"logging_steps", &training_options::logging_steps},
    {"save_strategy", &training_options::save_strategy},
    {"save_steps", &training_options::save_steps},
    {"save_total_limit", &training_options::save_total_limit},
    {"eval_strategy", &training_options::eval_strategy},
    {"eval_steps", &training_options::eval_steps},
    {"load_best_model_at_end", &training_options::load_best_model_at_end},
    {"metric_for_best_model", &training_options::metric_for_best_model},
    {"greater_is_better", &training_options::greater_is_better},
    {"early_stopping_patience", &training_options::early_stopping_patience},
    {"early_stopping_threshold", &training_options::early_stopping_threshold},
    {"seed", &training_options::seed},
    {"pad_to_max_length", &training_options::pad_to_max_length},
    {"dataloader_drop_last", &training_options::dataloader_drop_last},
    {"group_by_length", &training_options::group_by_length},
    {"disable_tqdm", &training_options::disable_tqdm},
    {"termination_grace_period", &training_options::termination_grace_period},
    {"sparse_embedding_gradients", &training_options::sparse_embedding_gradients},
    {"ddp_communication_dtype", &training_options::ddp_communication_dtype},
    {"ddp_bucket_cap_mb", &training_options::ddp_bucket_cap_mb},
};

/// The options under their Hugging Face names (not recorded_arguments), in training_option_fields' order; an unset
/// save_total_limit is null, as Python's None.
[[nodiscard]] CPUTRAIN_DECL nlohmann::ordered_json to_json(const training_options& o);

/// What a checkpoint's training_args.json holds: recorded_arguments, or else the options themselves.
[[nodiscard]] CPUTRAIN_DECL nlohmann::ordered_json arguments_json(const training_options& o);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL nlohmann::ordered_json to_json(const training_options& o) {
  nlohmann::ordered_json j;
  for (const option_field& f : training_option_fields) {
    std::visit(
        [&]<class F>(F training_options::*member) {
          const F& value = o.*member;
          if constexpr (checks::is_optional<F>) {
            j[f.name] = value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
          } else {
            j[f.name] = value;
          }
        },
        f.member);
  }
  return j;
}

CPUTRAIN_DECL nlohmann::ordered_json arguments_json(const training_options& o) {
  return o.recorded_arguments ? *o.recorded_arguments : to_json(o);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
