// Tests for include/cputrain/cli/args_file.hpp: mistakes in an args.json name the file and the key, and JSON nested
// a million levels deep is refused without a stack overflow (from_json too).
#include <catch2/catch.hpp>

#include "support/checks.hpp"
#include "support/temp_dir.hpp"
#include "cli/args_workspace.hpp"

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/cli/args_file.hpp"
#include "cputrain/cli/args_json.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace args_file_test {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cputrain::usage_error;
using cputrain::test::says;
using cputrain::test::temp_dir;
using namespace cputrain::test::cli;
using cputrain::cli::from_json;
using cputrain::cli::read_training_args_json;

TEST_CASE("training_args: args.json mistakes name the file and the key", "[cli][training_args][errors]") {
  const workspace ws;
  const fs::path file = ws.dir.path() / "args.json";
  const std::string name = file.string();
  const nlohmann::ordered_json good = {{"model_name_or_path", ws.model}, {"do_eval", true},
                                       {"validation_file", ws.dev}, {"output_dir", ws.out}};
  const auto with = [&](const std::string& key, const nlohmann::ordered_json& value) {
    nlohmann::ordered_json j = good;
    j[key] = value;
    put(file, j.dump());
    return file.string();
  };
  CHECK(read_training_args_json(with("seed", 3)).seed == 3);
  CHECK_THROWS_MATCHES(read_training_args_json(with("learning_rat", 3e-5)), usage_error,
                       says(name + ": unknown key \"learning_rat\""));
  CHECK_THROWS_MATCHES(read_training_args_json(with("learning_rate", "3e-5")), usage_error,
                       says(name + ": \"learning_rate\" is \"3e-5\", but must be a number"));
  CHECK_THROWS_MATCHES(read_training_args_json(with("per_device_train_batch_size", 8.0)), usage_error,
                       says(name + ": \"per_device_train_batch_size\" is 8.0, but must be an integer"));
  CHECK_THROWS_MATCHES(read_training_args_json(with("seed", 5000000000LL)), usage_error,
                       says("\"seed\" is 5000000000, but must be a 32-bit integer"));
  CHECK_THROWS_MATCHES(read_training_args_json(with("do_train", "true")), usage_error,
                       says(name + ": \"do_train\" is \"true\", but must be true or false"));
  CHECK_THROWS_MATCHES(read_training_args_json(with("output_dir", nullptr)), usage_error,
                       says(name + ": \"output_dir\" is null, but must be a string"));
  CHECK_THROWS_MATCHES(read_training_args_json(with("dataset_name", "squad")), usage_error,
                       says(name + ": --dataset_name squad: cputrain downloads nothing"));
  // Validation errors carry the file too.
  CHECK_THROWS_MATCHES(read_training_args_json(with("doc_stride", 500)), usage_error,
                       says(name + ": --doc_stride 500: must be less than --max_seq_length 384"));
  put(file, "[1, 2]");
  CHECK_THROWS_MATCHES(read_training_args_json(file), usage_error, says(name + ": the top level is array"));
  put(file, "{\"seed\": ");
  CHECK_THROWS_MATCHES(read_training_args_json(file), usage_error, says(name + ": not valid JSON"));
  CHECK_THROWS_MATCHES(read_training_args_json(ws.dir.path() / "none.json"), usage_error,
                       says("none.json: no such file"));
  // Through the command line, as run_qa.py reads `run_qa args.json`.
  CHECK_THROWS_MATCHES(parse({with("seed", "7")}), usage_error, says(name + ": \"seed\" is \"7\""));
}

TEST_CASE("training_args: JSON nested a million levels deep is refused naming the file or key, not a stack overflow",
          "[cli][training_args][errors]") {
  // Found by the fuzz target tests/fuzz/training_args_fuzz.cpp (reproducer tests/fuzz/regressions/training_args/
  // deep_nesting.json): the message for a value of the wrong type printed it, recursing once per level until the
  // stack ran out.
  temp_dir dir{"cputrain-args"};
  const fs::path file = dir.path() / "args.json";
  const std::size_t depth = 1'000'000;
  put(file, R"({"output_dir": )" + std::string(depth, '[') + std::string(depth, ']') + "}");
  CHECK_THROWS_MATCHES(read_training_args_json(file), usage_error,
                       says(file.string() + ": not an arguments file: the JSON nests deeper than 100 levels"));
  // from_json takes JSON its caller parsed, so its messages must not print a deep value either.
  nlohmann::ordered_json deep = 1;
  for (std::size_t i = 0; i < depth; ++i) deep = nlohmann::ordered_json::array({std::move(deep)});
  const nlohmann::ordered_json args = {{"seed", std::move(deep)}};
  CHECK_THROWS_MATCHES(from_json(args), usage_error,
                       says("\"seed\" is a list nested more than 20 levels deep, but must be an integer"));
  CHECK_THROWS_MATCHES(from_json(nlohmann::ordered_json::parse(R"({"seed": [[1]]})")), usage_error,
                       says("\"seed\" is [[1]], but must be an integer"));
}

}  // namespace args_file_test
