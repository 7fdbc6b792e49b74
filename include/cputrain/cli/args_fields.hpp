// cputrain::cli::detail::args_fields — every field of training_args once: its flag name, its group in --help, the
// member it sets and its help. The parser (parse_args.hpp), the help text and the JSON form (args_json.hpp) are
// all made from this table, in run_qa.py's order. A loop option's row sets the member of training_args' base,
// train::training_options; a static_assert below checks the table against train::training_option_fields, so a
// loop option cannot lack its flag.
#pragma once

#include "cputrain/cli/training_args.hpp"

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "cputrain/train/training_options.hpp"

namespace cputrain::cli::detail {

/// Where --help lists a flag.
enum class args_group { model, data, training, compatibility };

/// The member a field sets, of one of the types a flag can have. A loop option's member, an F
/// train::training_options::*, converts to the F training_args::* of its base.
using args_member = std::variant<bool training_args::*, int training_args::*, double training_args::*,
                                 std::string training_args::*, std::optional<int> training_args::*,
                                 std::optional<std::string> training_args::*, std::optional<bool> training_args::*>;

/// The programs a flag belongs to (a mask of cli::program bits).
inline constexpr unsigned every_program = 15;
inline constexpr unsigned qa_only = static_cast<unsigned>(program::qa);
inline constexpr unsigned glue_only = static_cast<unsigned>(program::glue);
inline constexpr unsigned ner_only = static_cast<unsigned>(program::ner);
inline constexpr unsigned mlm_only = static_cast<unsigned>(program::mlm);

/// One field: its flag (without --), group, member, help and the programs that take it.
struct args_field {
  const char* name;
  args_group group;
  args_member member;
  const char* help;
  unsigned programs = every_program;

  [[nodiscard]] constexpr bool taken_by(program p) const noexcept { return (programs & static_cast<unsigned>(p)) != 0; }
};

/// In run_qa.py's order (model, data, training), which is also the order of to_json's keys.
inline constexpr args_field args_fields[] = {
    {"model_name_or_path", args_group::model, &training_args::model_name_or_path,
     "Directory of a saved model (config.json, weights, vocab.txt); cputrain downloads nothing from the Hub"},
    {"config_name", args_group::model, &training_args::config_name,
     "config.json (or its directory) if not the model's; without --model_name_or_path the model starts from "
     "random weights"},
    {"tokenizer_name", args_group::model, &training_args::tokenizer_name,
     "vocab.txt (or its directory) if not the model's"},

    {"task_name", args_group::data, &training_args::task_name,
     "A GLUE task (cola, sst2, mrpc, qqp, stsb, mnli, qnli, rte, wnli): the files have its columns, and it "
     "chooses the metric",
     glue_only},
    {"train_file", args_group::data, &training_args::train_file,
     "Data file to train on (--do_train): SQuAD JSON (run_qa); CSV, JSON or JSON Lines (run_glue, run_ner)"},
    {"validation_file", args_group::data, &training_args::validation_file,
     "Data file to evaluate on (--do_eval), as --train_file"},
    {"test_file", args_group::data, &training_args::test_file, "Data file to predict on (--do_predict), as --train_file"},
    {"validation_mismatched_file", args_group::data, &training_args::validation_mismatched_file,
     "With --task_name mnli: the mismatched validation file, evaluated after --validation_file (cputrain's own; "
     "run_glue.py takes both splits from the Hub)",
     glue_only},
    {"text_column_names", args_group::data, &training_args::text_column_names,
     "The text columns, comma-separated, joined into one text (run_classification's); default: run_glue's choice",
     glue_only},
    {"text_column_delimiter", args_group::data, &training_args::text_column_delimiter,
     "What joins the --text_column_names texts", glue_only},
    {"text_column_name", args_group::data, &training_args::text_column_name,
     "The column of words (default: tokens, else the first column)", ner_only},
    {"label_column_name", args_group::data, &training_args::label_column_name,
     "The label column (default: label for run_glue; ner_tags, else the second column, for run_ner)",
     glue_only | ner_only},
    {"label_all_tokens", args_group::data, &training_args::label_all_tokens,
     "Label every piece of a word (its B- tag as I-), not only the first; -100 otherwise", ner_only},
    {"return_entity_level_metrics", args_group::data, &training_args::return_entity_level_metrics,
     "Report precision, recall and F1 of each entity type too", ner_only},
    {"line_by_line", args_group::data, &training_args::line_by_line,
     "Each non-empty line is one sequence; otherwise the texts are concatenated and cut into --max_seq_length blocks",
     mlm_only},
    {"mlm_probability", args_group::data, &training_args::mlm_probability,
     "Share of the tokens masked for the loss (80% [MASK], 10% a random token, 10% unchanged)", mlm_only},
    {"validation_split_percentage", args_group::data, &training_args::validation_split_percentage,
     "Without --validation_file: the first N% of the training texts evaluate instead", mlm_only},
    {"max_seq_length", args_group::data, &training_args::max_seq_length,
     "Tokens per sequence; run_qa splits longer contexts into windows, the others truncate (run_ner, run_mlm: 0 "
     "is the model's positions)"},
    {"pad_to_max_length", args_group::data, &training_args::pad_to_max_length,
     "Pad every sequence to --max_seq_length; --no_pad_to_max_length pads each batch to its longest"},
    {"doc_stride", args_group::data, &training_args::doc_stride,
     "Tokens shared by consecutive windows of a long context", qa_only},
    {"max_train_samples", args_group::data, &training_args::max_train_samples,
     "Train on the first N examples only"},
    {"max_eval_samples", args_group::data, &training_args::max_eval_samples,
     "Evaluate on the first N examples only"},
    {"max_predict_samples", args_group::data, &training_args::max_predict_samples,
     "Predict on the first N examples only"},
    {"version_2_with_negative", args_group::data, &training_args::version_2_with_negative,
     "Some questions have no answer (SQuAD 2.0)", qa_only},
    {"null_score_diff_threshold", args_group::data, &training_args::null_score_diff_threshold,
     "Answer \"\" when the best span scores less than the null answer minus this (SQuAD 2.0)", qa_only},
    {"n_best_size", args_group::data, &training_args::n_best_size,
     "Candidate start and end positions kept per window when choosing the answer", qa_only},
    {"max_answer_length", args_group::data, &training_args::max_answer_length,
     "Longest answer, in tokens, a prediction may have", qa_only},
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
     "no: evaluate after training (with --do_eval); steps: also every --eval_steps; epoch: after every epoch"},
    {"eval_steps", args_group::training, &training_args::eval_steps,
     "Optimizer steps between evaluations (--eval_strategy steps); default: --logging_steps"},
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
     "Keep only the N most recent checkpoints, and the best one (--load_best_model_at_end)"},
    {"load_best_model_at_end", args_group::training, &training_args::load_best_model_at_end,
     "End with the weights of the checkpoint whose evaluation was best (needs --save_strategy equal to "
     "--eval_strategy)"},
    {"metric_for_best_model", args_group::training, &training_args::metric_for_best_model,
     "The evaluation metric that ranks checkpoints (accuracy, f1, loss, ...); default: loss"},
    {"greater_is_better", args_group::training, &training_args::greater_is_better,
     "Whether a larger --metric_for_best_model is better; default: false for a name ending in loss, else true"},
    {"early_stopping_patience", args_group::training, &training_args::early_stopping_patience,
     "Stop after this many evaluations without improvement (EarlyStoppingCallback's; needs "
     "--load_best_model_at_end)"},
    {"early_stopping_threshold", args_group::training, &training_args::early_stopping_threshold,
     "How much the metric must improve to count as an improvement"},
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
    {"ddp_communication_dtype", args_group::training, &training_args::ddp_communication_dtype,
     "With several processes, what gradients travel as: fp32 (exact) or bf16 (cputrain's own; half the bytes, "
     "each rank's gradients and their sum rounded to bf16)"},
    {"ddp_bucket_cap_mb", args_group::training, &training_args::ddp_bucket_cap_mb,
     "MiB of gradients per all-reduce bucket, reduced while backward goes on (default 25; 0: one per tensor)"},
    {"termination_grace_period", args_group::training, &training_args::termination_grace_period,
     "Seconds between SIGTERM and the kill (cputrain's own; Kubernetes' default 30): on SIGTERM or Ctrl-C, "
     "finish the step and write a checkpoint if that fits in them, then exit; 0 exits without one"},
    {"use_cpu", args_group::compatibility, &training_args::use_cpu,
     "Accepted: cputrain always runs on the CPU"},
};

/// The field whose flag is `name` (without --), or nullptr.
constexpr const args_field* find_field(std::string_view name) {
  for (const args_field& f : args_fields) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

/// "run_qa" or "run_glue and run_ner": the programs that take `f`, for messages.
inline std::string programs_taking(const args_field& f) {
  std::string names;
  for (const program p : {program::qa, program::glue, program::ner, program::mlm}) {
    if (!f.taken_by(p)) continue;
    if (!names.empty()) names += " and ";
    names += program_name(p);
  }
  return names;
}

/// Whether `flag` sets the loop option `option`. ddp_bucket_cap_mb's flag sets training_args' own optional instead,
/// which loop_options converts (training_args.hpp says why).
constexpr bool sets_option(const args_field& flag, const train::option_field& option) {
  if (std::string_view(option.name) == "ddp_bucket_cap_mb") {
    return flag.member == args_member(&training_args::ddp_bucket_cap_mb);
  }
  return std::visit(
      [&]<class F>(F train::training_options::*member) {
        return flag.member == args_member(static_cast<F training_args::*>(member));
      },
      option.member);
}

/// Whether every loop option has the flag of its name, setting it.
consteval bool every_option_has_its_flag() {
  for (const train::option_field& option : train::training_option_fields) {
    const args_field* flag = find_field(option.name);
    if (flag == nullptr || !sets_option(*flag, option)) return false;
  }
  return true;
}

/// Whether no two flags set the same member (a row copied and only half edited).
consteval bool every_flag_sets_its_own_member() {
  for (std::size_t i = 0; i < std::size(args_fields); ++i) {
    for (std::size_t j = i + 1; j < std::size(args_fields); ++j) {
      if (args_fields[i].member == args_fields[j].member) return false;
    }
  }
  return true;
}

static_assert(every_option_has_its_flag(),
              "a field of train::training_option_fields has no row in args_fields, or its row sets another member");
static_assert(every_flag_sets_its_own_member(), "two rows of args_fields set the same member");

}  // namespace cputrain::cli::detail
