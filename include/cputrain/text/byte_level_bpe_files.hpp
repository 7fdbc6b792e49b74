// GPT-2's and RoBERTa's tokenizer from the files older model directories have instead of tokenizer.json —
// vocab.json, merges.txt and tokenizer_config.json — set up as transformers' converters set them up
// (GPT2Converter, RobertaConverter): RoBERTa wraps texts in <s> ... </s> and trims offsets, its <mask> takes the
// space on its left; GPT-2 adds nothing and keeps offsets untrimmed. Errors name the file and the line or key.
#pragma once

#include "cputrain/text/bpe_model.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/added_tokens.hpp"
#include "cputrain/text/byte_level_bpe.hpp"
#include "cputrain/text/byte_level_bpe_json.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/text_error.hpp"

namespace cputrain::text {

/// Which converter transformers would use.
enum class byte_level_family { gpt2, roberta };

namespace detail {

/// merges.txt: an optional "#version" first line, then one "a b" merge per line, in rank order.
inline std::vector<std::pair<std::string, std::string>> read_merges_txt(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw text_error(file.string() + ": cannot open the merges");
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (line_number == 1 && line.starts_with("#version"))) continue;
    const auto space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string::npos)
      throw text_error(file.string() + ": line " + std::to_string(line_number) +
                       " is not a merge (two tokens separated by one space)");
    out.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  return out;
}

/// A special token of tokenizer_config.json: a string, or an object with "content" (and "lstrip", ...).
inline std::optional<added_token> config_special(const json_at& config, const char* key, std::string fallback,
                                                 bool lstrip) {
  const json_at value = config[key];
  added_token t;
  t.content = std::move(fallback);
  t.lstrip = lstrip;
  t.special = true;
  if (value.value().is_string()) {
    t.content = value.string();
  } else if (value.value().is_object()) {
    t.content = value["content"].string();
    t.lstrip = value["lstrip"].boolean(lstrip);
    t.rstrip = value["rstrip"].boolean(false);
    t.single_word = value["single_word"].boolean(false);
  } else if (!value.is_null()) {
    value.expected("a token or an object with \"content\"");
  }
  return t;
}

}  // namespace detail

/// Reads vocab.json, merges.txt and (when there) tokenizer_config.json of model directory `dir`.
CPUTRAIN_DECL byte_level_bpe_file load_byte_level_bpe_files(const std::filesystem::path& dir,
                                                            byte_level_family family);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL byte_level_bpe_file load_byte_level_bpe_files(const std::filesystem::path& dir,
                                                            byte_level_family family) {
  const auto vocab_file = dir / "vocab.json";
  const nlohmann::json vocab_json = detail::parse_tokenizer_json(vocab_file);
  const detail::json_at vocab(vocab_file, vocab_json, "");
  if (!vocab_json.is_object()) vocab.expected("an object of token ids by token");
  token_ids ids;
  for (const auto& [token, id] : vocab_json.items()) ids.emplace(token, vocab.member(token, id).model_id());
  nlohmann::json config_json = nlohmann::json::object();
  const auto config_file = dir / "tokenizer_config.json";
  std::error_code ec;
  if (std::filesystem::exists(config_file, ec)) config_json = detail::parse_tokenizer_json(config_file);
  const detail::json_at config(config_file, config_json, "");
  const bool roberta = family == byte_level_family::roberta;
  byte_level_options options;
  options.add_prefix_space = config["add_prefix_space"].boolean(false);
  options.trim_offsets = roberta && config["trim_offsets"].boolean(true);
  std::vector<added_token> added;
  special_tokens specials;
  const auto add = [&](const char* key, const char* fallback, bool lstrip) {
    auto t = detail::config_special(config, key, fallback, lstrip);
    const auto it = ids.find(t->content);
    if (it == ids.end()) return -1;  // a special token the vocabulary lacks is not added, as transformers warns
    t->id = it->second;
    for (const auto& a : added)
      if (a.content == t->content) return t->id;
    added.push_back(std::move(*t));
    return added.back().id;
  };
  const auto known = [](std::int32_t id) { return id < 0 ? std::nullopt : std::optional<std::int32_t>(id); };
  if (roberta) {
    specials.layout = special_layout::roberta;
    specials.cls = add("cls_token", "<s>", false);
    specials.sep = add("sep_token", "</s>", false);
    (void)add("bos_token", "<s>", false);
    (void)add("eos_token", "</s>", false);
    specials.unk = known(add("unk_token", "<unk>", false));
    specials.pad = known(add("pad_token", "<pad>", false));
    specials.mask = known(add("mask_token", "<mask>", true));
    if (specials.cls < 0 || specials.sep < 0)
      throw text_error(vocab_file.string() + ": RoBERTa's tokenizer wraps texts in its cls and sep tokens, but the "
                                             "vocabulary lacks \"<s>\" or \"</s>\" (or the tokens tokenizer_config.json names)");
  } else {
    specials.unk = known(add("unk_token", "<|endoftext|>", false));
  }
  return {byte_level_bpe_tokenizer(bpe_model(std::move(ids), detail::read_merges_txt(dir / "merges.txt"), {},
                                             vocab_file.string()),
                                   std::move(added), options),
          specials};
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
