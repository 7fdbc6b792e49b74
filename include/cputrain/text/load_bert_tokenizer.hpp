// cputrain::text::load_bert_tokenizer — a bert_tokenizer from a Hugging Face model directory: vocab.txt, and the
// switches of tokenizer_config.json when it is there (do_lower_case, strip_accents, tokenize_chinese_chars), with
// Hugging Face's defaults when it is not. tokenizer.json is not read: for BERT it holds the same settings.
#pragma once

#include "cputrain/text/bert_tokenizer.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cputrain/core/json_nesting.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/vocabulary.hpp"

namespace cputrain::text {

/// The options tokenizer_config.json sets, over `defaults`. Throws text_error naming the file and the key.
CPUTRAIN_DECL bert_tokenizer_options read_tokenizer_config(const std::filesystem::path& file,
                                                           bert_tokenizer_options defaults = {});

/// A tokenizer from a model directory (vocab.txt + optional tokenizer_config.json) or from a vocab.txt file.
CPUTRAIN_DECL bert_tokenizer load_bert_tokenizer(const std::filesystem::path& path,
                                                 bert_tokenizer_options defaults = {});

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL bert_tokenizer_options read_tokenizer_config(const std::filesystem::path& file,
                                                           bert_tokenizer_options defaults) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw text_error(file.string() + ": cannot open: " + std::strerror(errno));
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(in, json_nesting_limit<nlohmann::json>([&] {
      throw text_error(file.string() + ": not a tokenizer_config.json: the JSON nests deeper than " +
                       std::to_string(json_max_nesting) + " levels");
    }));
  } catch (const nlohmann::json::exception& e) {
    throw text_error(file.string() + ": not valid JSON: " + e.what());
  }
  if (!config.is_object()) throw text_error(file.string() + ": expected a JSON object at the top level");
  const auto flag = [&](const char* key, auto&& set) {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return;
    if (!it->is_boolean())
      throw text_error(file.string() + ": \"" + key + "\" must be true or false, not " + it->dump());
    set(it->template get<bool>());
  };
  flag("do_lower_case", [&](bool v) { defaults.lower_case = v; });
  flag("strip_accents", [&](bool v) { defaults.strip_accents = v; });
  flag("tokenize_chinese_chars", [&](bool v) { defaults.handle_chinese_chars = v; });
  return defaults;
}

CPUTRAIN_DECL bert_tokenizer load_bert_tokenizer(const std::filesystem::path& path, bert_tokenizer_options defaults) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return bert_tokenizer(vocabulary::load(path), defaults);
  const auto vocab_file = path / "vocab.txt";
  if (!std::filesystem::exists(vocab_file, ec))
    throw text_error(path.string() + ": no vocab.txt in this directory (a BERT model directory has vocab.txt, "
                                     "config.json and model.safetensors)");
  const auto config_file = path / "tokenizer_config.json";
  if (std::filesystem::exists(config_file, ec)) defaults = read_tokenizer_config(config_file, defaults);
  return bert_tokenizer(vocabulary::load(vocab_file), defaults);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
