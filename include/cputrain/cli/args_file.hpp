// cputrain::cli::read_training_args_json — run_qa's arguments from an args.json file, as run_qa.py accepts a single
// JSON argument: parsed (no deeper than json_max_nesting, no NUL byte), typed (args_json.hpp) and validated
// (validate_args.hpp); every mistake is a usage_error naming the file, then the key or the flag.
#pragma once

#include "cputrain/cli/validate_args.hpp"

#include <filesystem>
#include <fstream>
#include <ios>
#include <iterator>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "cputrain/cli/args_json.hpp"
#include "cputrain/cli/training_args.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/core/json_nesting.hpp"
#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::cli {

namespace detail {

/// The text of a JSON file, or usage_error naming it: the file is the user's argument.
inline std::string read_args_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw usage_error(path.string() + ": no such file");
  if (!std::filesystem::is_regular_file(status)) throw usage_error(path.string() + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error(path.string() + ": cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw usage_error(path.string() + ": cannot read");
  return text;
}

}  // namespace detail

/// run_qa's arguments from a JSON file (run_qa args.json), validated. usage_error naming the file, then the key
/// or the flag.
[[nodiscard]] CPUTRAIN_DECL training_args read_training_args_json(const std::filesystem::path& path,
                                                                  program p = program::qa);

#if CPUTRAIN_DEFINE_FUNCTIONS

CPUTRAIN_DECL training_args read_training_args_json(const std::filesystem::path& path, program p) {
  const std::string text = detail::read_args_file(path);
  // nlohmann would stop at a NUL byte as if the input ended there; JSON text cannot contain one.
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    throw usage_error(path.string() + ": not valid JSON: a NUL byte at offset " + std::to_string(nul));
  }
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(text, json_nesting_limit<nlohmann::ordered_json>([&] {
      throw usage_error(path.string() + ": not an arguments file: the JSON nests deeper than " +
                        std::to_string(json_max_nesting) + " levels");
    }));
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(path.string() + ": not valid JSON: " + e.what());
  }
  training_args args = detail::args_from_json(json, path.string(), p);
  try {
    validate(args);
  } catch (const usage_error& e) {
    throw usage_error(path.string() + ": " + e.what());
  }
  return args;
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::cli
