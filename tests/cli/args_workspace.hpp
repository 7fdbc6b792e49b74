// The files a valid run_qa command names, and the command line parsed as run_qa parses it: shared by the tests of
// include/cputrain/cli/.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "cputrain/cli/parse_args.hpp"
#include "support/temp_dir.hpp"

namespace cputrain::test::cli {

namespace fs = std::filesystem;
using cputrain::cli::parse_training_args;
using cputrain::cli::parsed_command_line;
using cputrain::cli::training_args;
using cputrain::test::temp_dir;

inline void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary | std::ios::trunc) << text; }

/// The files a valid command names: a model directory and three SQuAD files (their content is the trainer's job).
struct workspace {
  temp_dir dir{"cputrain-args"};
  std::string model = (dir.path() / "bert-base-uncased").string();
  std::string train = (dir.path() / "train.json").string();
  std::string dev = (dir.path() / "dev.json").string();
  std::string test = (dir.path() / "test.json").string();
  std::string out = (dir.path() / "debug_squad").string();

  workspace() {
    fs::create_directory(model);
    put(fs::path(model) / "config.json", "{}");
    for (const std::string& f : {train, dev, test}) put(f, R"({"data": []})");
  }

  /// The command of Hugging Face's CPU-training guide, with local files instead of --dataset_name squad.
  [[nodiscard]] std::vector<std::string> guide() const {
    return {"--model_name_or_path", model, "--train_file", train, "--validation_file", dev,
            "--do_train", "--do_eval", "--per_device_train_batch_size", "12", "--learning_rate", "3e-5",
            "--num_train_epochs", "2", "--max_seq_length", "384", "--doc_stride", "128",
            "--output_dir", out, "--bf16", "--use_cpu"};
  }
};

inline std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline parsed_command_line parse_all(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"/usr/local/bin/run_qa"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_training_args(static_cast<int>(argv.size()), argv.data());
}

inline training_args parse(const std::vector<std::string>& args) {
  parsed_command_line parsed = parse_all(args);
  REQUIRE_FALSE(parsed.help);
  return parsed.args;
}

}  // namespace cputrain::test::cli
