// Tests for include/cputrain/cli/trainer_options.hpp: the command line hands the trainer its loop's values and the
// record of the whole arguments (a checkpoint's training_args.json keeps every key), and the model and output
// directory flags to find_model_files and prepare_output_dir.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cputrain/cli/args_json.hpp"
#include "cputrain/cli/trainer_options.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace trainer_options_test {

using cputrain::cli::training_args;

TEST_CASE("trainer_options: the loop's values and the whole arguments reach the trainer", "[cli]") {
  training_args args;
  args.output_dir = "out";
  args.per_device_train_batch_size = 12;
  args.learning_rate = 3e-5;
  args.save_total_limit = 3;
  args.seed = 7;
  args.bf16 = true;
  args.pad_to_max_length = false;
  args.termination_grace_period = 5;
  const cputrain::train::training_options options = cputrain::cli::to_training_options(args);
  CHECK(options.output_dir == "out");
  CHECK(options.per_device_train_batch_size == 12);
  CHECK(options.learning_rate == 3e-5);
  CHECK(options.save_total_limit == 3);
  CHECK(options.seed == 7);
  CHECK_FALSE(options.pad_to_max_length);
  CHECK(options.termination_grace_period == 5);
  // Unset, DDP's 25 MiB buckets and exact fp32 communication; set, what was asked.
  CHECK(options.ddp_bucket_cap_mb == 25);
  CHECK(options.ddp_communication_dtype == "fp32");
  training_args set = args;
  set.ddp_bucket_cap_mb = 4;
  set.ddp_communication_dtype = "bf16";
  CHECK(cputrain::cli::to_training_options(set).ddp_bucket_cap_mb == 4);
  CHECK(cputrain::cli::to_training_options(set).ddp_communication_dtype == "bf16");
  // training_args.json in a checkpoint: every argument, as run_qa writes it into output_dir too.
  REQUIRE(options.recorded_arguments.has_value());
  CHECK(*options.recorded_arguments == cputrain::cli::to_json(args));
  CHECK(arguments_json(options)["bf16"] == true);
  CHECK(arguments_json(options).begin().key() == "model_name_or_path");
}

TEST_CASE("trainer_options: the model and output directory flags", "[cli]") {
  training_args args;
  args.model_name_or_path = "model";
  args.tokenizer_name = "vocab";
  args.output_dir = "out";
  args.resume_from_checkpoint = "out/checkpoint-4";
  args.do_train = true;
  args.overwrite_output_dir = true;
  const auto sources = cputrain::cli::to_model_sources(args);
  CHECK(sources.model_name_or_path == "model");
  CHECK_FALSE(sources.config_name.has_value());
  CHECK(sources.tokenizer_name == "vocab");
  const auto dir = cputrain::cli::to_output_dir_options(args);
  CHECK(dir.output_dir == "out");
  CHECK(dir.resume_from_checkpoint == "out/checkpoint-4");
  CHECK(dir.do_train);
  CHECK(dir.overwrite_output_dir);
}

}  // namespace trainer_options_test
