// Tests for include/cputrain/cli/args_json.hpp: to_json writes every field in run_qa.py's order (args_fields has a
// row for every member of training_args), and from_json reads them back.
#include <algorithm>
#include <catch2/catch.hpp>

#include "support/checks.hpp"
#include "support/field_count.hpp"
#include "support/temp_dir.hpp"
#include "cli/args_workspace.hpp"

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/cli/args_json.hpp"
#include "cputrain/cli/args_fields.hpp"
#include "cputrain/train/training_options.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace args_json_test {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cputrain::usage_error;
using cputrain::test::says;
using cputrain::test::temp_dir;
using namespace cputrain::test::cli;
using cputrain::cli::from_json;
using cputrain::cli::to_json;

TEST_CASE("training_args: to_json writes every field and from_json reads them back", "[cli][training_args]") {
  const workspace ws;
  const training_args a = parse(ws.guide() + std::vector<std::string>{
      "--save_total_limit", "3", "--threads", "5", "--weight_decay", "0.01", "--no_pad_to_max_length",
      "--lr_scheduler_type", "constant_with_warmup", "--warmup_steps", "10", "--max_train_samples", "7"});
  const nlohmann::ordered_json json = to_json(a);
  // run_qa's fields only: the other programs' data flags are not its arguments.
  const auto qa_fields = std::count_if(std::begin(cputrain::cli::detail::args_fields), std::end(cputrain::cli::detail::args_fields),
                                       [](const auto& f) { return f.taken_by(cputrain::cli::program::qa); });
  CHECK(json.size() == static_cast<std::size_t>(qa_fields));
  CHECK(json.contains("doc_stride"));
  CHECK_FALSE(json.contains("task_name"));
  CHECK(json.begin().key() == "model_name_or_path");  // run_qa.py's order: the model's arguments first
  CHECK(json["per_device_train_batch_size"] == 12);
  CHECK(json["learning_rate"] == 3e-5);
  CHECK(json["num_train_epochs"] == 2.0);
  CHECK(json["save_total_limit"] == 3);
  CHECK(json["pad_to_max_length"] == false);
  CHECK(json["lr_scheduler_type"] == "constant_with_warmup");
  CHECK(json["resume_from_checkpoint"].is_null());
  CHECK(json["config_name"].is_null());
  CHECK(json["max_eval_samples"].is_null());
  CHECK_FALSE(json.contains("notices"));

  const training_args back = from_json(json);
  CHECK(back == a);
  CHECK(from_json(nlohmann::ordered_json::parse(json.dump(2))) == a);  // through text, as a checkpoint holds it
  // Defaults round trip too, and from_json checks no files: a checkpoint's arguments read elsewhere.
  const training_args defaults;
  CHECK(from_json(to_json(defaults)) == defaults);
  training_args changed = back;
  changed.seed = 43;
  CHECK_FALSE(changed == a);
  // Notices are not arguments.
  training_args noisy = parse(ws.guide() + std::vector<std::string>{"--use_ipex"});
  CHECK(to_json(noisy) == to_json(parse(ws.guide())));
}

TEST_CASE("training_args: args_fields has a row for every member but the notices", "[cli][training_args]") {
  // One row per loop option (args_fields.hpp checks them against train::training_option_fields); of these,
  // ddp_bucket_cap_mb's sets training_args' own optional. Then one row per other member: a member added to the
  // struct alone fails here. The base counts as one member.
  const std::size_t own_members =
      cputrain::test::field_count<training_args>() - 1 /* the base */ - 1 /* which */ - 1 /* notices */;
  const std::size_t rows_into_base = std::size(cputrain::train::training_option_fields) - 1;
  CHECK(std::size(cputrain::cli::detail::args_fields) == rows_into_base + own_members);
}

}  // namespace args_json_test
