// cputrain::cli — what the command line hands the train layer: to_training_options (the loop's options, which are
// training_args' base, recording the whole arguments for each checkpoint's training_args.json), to_model_sources
// (find_model_files' input) and to_output_dir_options (prepare_output_dir's input).
#pragma once

#include "cputrain/cli/args_json.hpp"
#include "cputrain/cli/training_args.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/train/model_files.hpp"
#include "cputrain/train/output_dir.hpp"
#include "cputrain/train/training_options.hpp"

namespace cputrain::cli {

namespace detail {

/// The fields the training loop reads, without the record of the arguments (what validation checks): the base of
/// the arguments, but for ddp_bucket_cap_mb, whose unset optional means the loop's default.
[[nodiscard]] inline train::training_options loop_options(const training_args& args) {
  train::training_options o = args;
  o.recorded_arguments.reset();
  if (args.ddp_bucket_cap_mb) o.ddp_bucket_cap_mb = *args.ddp_bucket_cap_mb;
  return o;
}

}  // namespace detail

/// The training loop's options; each checkpoint's training_args.json records the whole arguments (to_json(args)).
[[nodiscard]] CPUTRAIN_DECL train::training_options to_training_options(const training_args& args);

/// --model_name_or_path, --config_name and --tokenizer_name, for train::find_model_files.
[[nodiscard]] inline train::model_sources to_model_sources(const training_args& args) {
  return {args.model_name_or_path, args.config_name, args.tokenizer_name};
}

/// --output_dir, --resume_from_checkpoint, --do_train and --overwrite_output_dir, for train::prepare_output_dir.
[[nodiscard]] inline train::output_dir_options to_output_dir_options(const training_args& args) {
  return {args.output_dir, args.resume_from_checkpoint, args.do_train, args.overwrite_output_dir};
}

#if CPUTRAIN_DEFINE_FUNCTIONS

CPUTRAIN_DECL train::training_options to_training_options(const training_args& args) {
  train::training_options options = detail::loop_options(args);
  options.recorded_arguments = to_json(args);
  return options;
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::cli
