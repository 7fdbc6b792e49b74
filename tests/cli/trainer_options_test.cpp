// Tests for include/cputrain/cli/trainer_options.hpp: the command line hands the trainer its loop's values and the
// record of the whole arguments (a checkpoint's training_args.json keeps every key), every loop option's flag
// reaching its field, and the model and output directory flags to find_model_files and prepare_output_dir.
#include <catch2/catch.hpp>

#include "cli/args_workspace.hpp"

#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/cli/args_json.hpp"
#include "cputrain/cli/trainer_options.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace trainer_options_test {

using cputrain::cli::training_args;
using cputrain::train::training_options;

/// A flag's text for a valid value other than `value`; nullopt for a string option the test has no value for.
template <class F>
std::optional<std::string> other_valid_text(const char* name, const F& value,
                                           const cputrain::test::cli::workspace& ws) {
  if constexpr (std::is_same_v<F, bool>) {
    return value ? "false" : "true";
  } else if constexpr (std::is_same_v<F, int>) {
    return std::to_string(value + 2);  // max_steps -1 + 1 would be the refused 0
  } else if constexpr (std::is_same_v<F, std::optional<int>>) {
    return std::to_string(value.value_or(0) + 2);
  } else if constexpr (std::is_same_v<F, std::optional<bool>>) {
    return value.value_or(false) ? "false" : "true";
  } else if constexpr (std::is_same_v<F, std::optional<std::string>>) {
    return value == "accuracy" ? "f1" : "accuracy";
  } else if constexpr (std::is_same_v<F, double>) {
    std::ostringstream text;
    text << std::setprecision(17) << (value == 0 ? 0.5 : value / 2);  // inside every [0, 1] and > 0 rule
    return text.str();
  } else {
    const std::map<std::string, std::string> valid = {{"output_dir", ws.out + "-other"},
                                                      {"lr_scheduler_type", "cosine"},
                                                      {"save_strategy", "epoch"},
                                                      {"eval_strategy", "epoch"},
                                                      {"ddp_communication_dtype", "bf16"}};
    const auto it = valid.find(name);
    if (it == valid.end() || it->second == value) return std::nullopt;
    return it->second;
  }
}

/// The flags an option needs beside it to be valid (HF's rules: ranking checkpoints needs evaluations).
std::vector<std::string> prerequisites(std::string_view name) {
  if (name == "load_best_model_at_end") return {"--eval_strategy", "steps"};
  if (name == "early_stopping_patience") return {"--eval_strategy", "steps", "--load_best_model_at_end"};
  return {};
}

/// The keys whose values differ between two objects with the same keys.
std::vector<std::string> changed_keys(const nlohmann::ordered_json& before, const nlohmann::ordered_json& after) {
  std::vector<std::string> keys;
  for (auto it = before.begin(); it != before.end(); ++it) {
    if (after.at(it.key()) != it.value()) keys.push_back(it.key());
  }
  return keys;
}

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

TEST_CASE("trainer_options: every loop option's flag reaches its field and training_args.json", "[cli]") {
  using namespace cputrain::test::cli;
  const workspace ws;
  for (const cputrain::train::option_field& field : cputrain::train::training_option_fields) {
    INFO("--" << field.name);
    const std::vector<std::string> given = ws.guide() + prerequisites(field.name);
    const training_options base = cputrain::cli::to_training_options(parse(given));
    std::visit(
        [&]<class F>(F training_options::*member) {
          const std::optional<std::string> text = other_valid_text(field.name, base.*member, ws);
          if (!text) FAIL("other_valid_text has no valid value for this option but its default: give it one");
          const std::vector<std::string> flag = {std::string("--") + field.name, *text};
          const training_args args = parse(given + flag);
          const training_options options = cputrain::cli::to_training_options(args);
          CHECK(options.*member != base.*member);
          CHECK(changed_keys(to_json(base), to_json(options)) == std::vector<std::string>{field.name});
          // The record (the whole arguments) holds the value the loop runs with, and reads back to the same loop.
          CHECK(arguments_json(options)[field.name] == to_json(options)[field.name]);
          CHECK(cputrain::cli::detail::loop_options(cputrain::cli::from_json(arguments_json(options))) ==
                cputrain::cli::detail::loop_options(args));
        },
        field.member);
  }
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
