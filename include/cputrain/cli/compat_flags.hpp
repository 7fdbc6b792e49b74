// cputrain::cli::detail::args_extra_flags — the flags of Hugging Face's CPU guide with no field of their own:
// accepted with a one-line notice (--use_ipex, --ddp_backend ccl, ...), an older name (--evaluation_strategy,
// --no_cuda), or refused with the reason (--dataset_name: cputrain downloads nothing).
#pragma once

#include "cputrain/cli/flag_values.hpp"

#include <string>
#include <string_view>

#include "cputrain/cli/args_fields.hpp"
#include "cputrain/cli/training_args.hpp"
#include "cputrain/core/error.hpp"

namespace cputrain::cli::detail {

/// Flags with no field of their own: accepted for compatibility (with a notice), an older name, or refused with a
/// reason. `boolean` ones take a truth value as the fields do.
struct args_extra_flag {
  const char* name;
  args_group group;
  bool boolean;
  const char* help;
};

/// Every such flag, as --help lists them.
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

/// The extra flag named `name` (without --), or nullptr.
inline const args_extra_flag* find_extra_flag(std::string_view name) {
  for (const args_extra_flag& f : args_extra_flags) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

/// The flags accepted with a notice (or refused for a value that means something else): --use_ipex,
/// --ddp_backend, --report_to, --logging_dir.
inline void apply_ignored_flag(training_args& args, std::string_view name, const std::string& value) {
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
  throw usage_error("cputrain::cli: no handler for --" + std::string(name));
}

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
  apply_ignored_flag(args, name, value);
}

}  // namespace cputrain::cli::detail
