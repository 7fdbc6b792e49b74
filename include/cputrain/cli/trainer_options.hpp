// cputrain::cli — what the command line hands the train layer: to_training_options (the loop's options, recording
// the whole arguments for each checkpoint's training_args.json), to_model_sources (find_model_files' input) and
// to_output_dir_options (prepare_output_dir's input).
#pragma once

#include "cputrain/cli/args_json.hpp"
#include "cputrain/cli/training_args.hpp"
#include "cputrain/train/model_files.hpp"
#include "cputrain/train/output_dir.hpp"
#include "cputrain/train/training_options.hpp"

namespace cputrain::cli {

namespace detail {

/// The fields the training loop reads, without the record of the arguments (what validation checks).
[[nodiscard]] inline train::training_options loop_options(const training_args& args) {
  train::training_options o;
  o.output_dir = args.output_dir;
  o.per_device_train_batch_size = args.per_device_train_batch_size;
  o.per_device_eval_batch_size = args.per_device_eval_batch_size;
  o.gradient_accumulation_steps = args.gradient_accumulation_steps;
  o.learning_rate = args.learning_rate;
  o.weight_decay = args.weight_decay;
  o.adam_beta1 = args.adam_beta1;
  o.adam_beta2 = args.adam_beta2;
  o.adam_epsilon = args.adam_epsilon;
  o.max_grad_norm = args.max_grad_norm;
  o.num_train_epochs = args.num_train_epochs;
  o.max_steps = args.max_steps;
  o.lr_scheduler_type = args.lr_scheduler_type;
  o.warmup_ratio = args.warmup_ratio;
  o.warmup_steps = args.warmup_steps;
  o.logging_steps = args.logging_steps;
  o.save_strategy = args.save_strategy;
  o.save_steps = args.save_steps;
  o.save_total_limit = args.save_total_limit;
  o.seed = args.seed;
  o.pad_to_max_length = args.pad_to_max_length;
  o.dataloader_drop_last = args.dataloader_drop_last;
  o.group_by_length = args.group_by_length;
  o.disable_tqdm = args.disable_tqdm;
  o.termination_grace_period = args.termination_grace_period;
  o.sparse_embedding_gradients = args.sparse_embedding_gradients;
  o.ddp_communication_dtype = args.ddp_communication_dtype;
  if (args.ddp_bucket_cap_mb) o.ddp_bucket_cap_mb = *args.ddp_bucket_cap_mb;
  return o;
}

}  // namespace detail

/// The training loop's options; each checkpoint's training_args.json records the whole arguments (to_json(args)).
[[nodiscard]] inline train::training_options to_training_options(const training_args& args) {
  train::training_options options = detail::loop_options(args);
  options.recorded_arguments = to_json(args);
  return options;
}

/// --model_name_or_path, --config_name and --tokenizer_name, for train::find_model_files.
[[nodiscard]] inline train::model_sources to_model_sources(const training_args& args) {
  return {args.model_name_or_path, args.config_name, args.tokenizer_name};
}

/// --output_dir, --resume_from_checkpoint, --do_train and --overwrite_output_dir, for train::prepare_output_dir.
[[nodiscard]] inline train::output_dir_options to_output_dir_options(const training_args& args) {
  return {args.output_dir, args.resume_from_checkpoint, args.do_train, args.overwrite_output_dir};
}

}  // namespace cputrain::cli
