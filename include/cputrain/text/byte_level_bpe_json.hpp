// Reading a byte-level BPE tokenizer.json (GPT-2, RoBERTa, and BPE files in their style such as GPT-NeoX's):
// load_byte_level_bpe(path) builds the tokenizer from its normalizers (normalizer_json.hpp), the ByteLevel
// pre-tokenizer, the BPE model, the post-processor and the added tokens. Whatever the file asks for that cputrain
// does not implement is refused with text_error naming the file, the JSON path and what was expected.
#pragma once

#include "cputrain/text/byte_level_bpe.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/json_message.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/bpe_model.hpp"
#include "cputrain/text/normalizer_json.hpp"
#include "cputrain/text/normalizer_steps.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/tokenizer_json.hpp"

namespace cputrain::text {

/// A byte-level BPE tokenizer with what tokenizer.json says goes around its texts.
struct byte_level_bpe_file {
  byte_level_bpe_tokenizer tokenizer;
  special_tokens specials;
};

namespace detail {

/// The byte-level BPE tokenizer a parsed tokenizer.json describes (`root` is its top level).
CPUTRAIN_DECL byte_level_bpe_file read_byte_level_bpe(const json_at& root, const std::string& source);

}  // namespace detail

/// Reads a byte-level BPE tokenizer.json (GPT-2, RoBERTa). Throws text_error naming the file and the JSON path.
CPUTRAIN_DECL byte_level_bpe_file load_byte_level_bpe(const std::filesystem::path& file);

#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

// The reader's helpers, compiled only where the functions are (core/separate_compilation.hpp).
/// model.merges in either form tokenizer.json has used: "a b" strings or ["a", "b"] pairs.
inline std::vector<std::pair<std::string, std::string>> read_merges(const json_at& list) {
  if (!list.value().is_array()) list.expected("an array of merges");
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(list.value().size());
  for (std::size_t i = 0; i < list.value().size(); ++i) {
    const json_at m = list.at(i);
    if (m.value().is_string()) {
      const std::string& s = m.value().get_ref<const std::string&>();
      const auto space = s.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == s.size() || s.find(' ', space + 1) != std::string::npos)
        m.expected("two tokens separated by one space");
      out.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.value().is_array() && m.value().size() == 2 && m.value()[0].is_string() && m.value()[1].is_string()) {
      out.emplace_back(m.value()[0].get<std::string>(), m.value()[1].get<std::string>());
    } else {
      m.expected("\"a b\" or [\"a\", \"b\"]");
    }
  }
  return out;
}

inline bpe_model read_bpe_model(const json_at& model, const std::string& source) {
  (void)model.type({"BPE"});
  const json_at dropout = model["dropout"];
  if (!dropout.is_null() && !(dropout.value().is_number() && dropout.value().get<double>() == 0.0))
    dropout.fail("is " + json_text_for_message(dropout.value()) +
                 ": BPE dropout samples other tokens at random, which cputrain does not do (set it to null)");
  const json_at vocab = model["vocab"];
  if (!vocab.value().is_object()) vocab.expected("an object of token ids by token");
  token_ids ids;
  ids.reserve(vocab.value().size());
  for (const auto& [token, id] : vocab.value().items()) ids.emplace(token, vocab.member(token, id).model_id());
  bpe_options options;
  options.unk_token = model["unk_token"].optional_string();
  options.continuing_subword_prefix = model["continuing_subword_prefix"].optional_string().value_or("");
  options.end_of_word_suffix = model["end_of_word_suffix"].optional_string().value_or("");
  options.fuse_unk = model["fuse_unk"].boolean(false);
  options.byte_fallback = model["byte_fallback"].boolean(false);
  options.ignore_merges = model["ignore_merges"].boolean(false);
  return bpe_model(std::move(ids), read_merges(model["merges"]), std::move(options), source);
}

CPUTRAIN_DECL byte_level_bpe_file read_byte_level_bpe(const json_at& root, const std::string& source) {
  if (!root.value().is_object()) root.expected("an object");
  std::vector<normalizer_chain::step> normalizers;
  read_normalizer(root["normalizer"], normalizers);
  const json_at pre = root["pre_tokenizer"];
  (void)pre.type({"ByteLevel"});
  byte_level_options options;
  options.add_prefix_space = pre["add_prefix_space"].boolean(true);
  options.use_regex = pre["use_regex"].boolean(true);
  bool keeps_prefix_space = false;
  special_tokens specials = read_post_processor(root["post_processor"], &options.trim_offsets, &keeps_prefix_space);
  options.trim_keeps_prefix_space = keeps_prefix_space;
  byte_level_bpe_tokenizer tokenizer(read_bpe_model(root["model"], source), read_added_tokens(root["added_tokens"]),
                                     options, normalizer_chain(std::move(normalizers)));
  // RobertaTokenizerFast's defaults (its model names no unk_token); tokenizer_config.json may name others.
  const auto& unk = tokenizer.model().options().unk_token;
  specials.unk = tokenizer.find(unk ? *unk : "<unk>");
  specials.pad = tokenizer.find("<pad>");
  specials.mask = tokenizer.find("<mask>");
  return {std::move(tokenizer), specials};
}

}  // namespace detail

CPUTRAIN_DECL byte_level_bpe_file load_byte_level_bpe(const std::filesystem::path& file) {
  const nlohmann::json json = detail::parse_tokenizer_json(file);
  return detail::read_byte_level_bpe(detail::json_at(file, json, ""), file.string());
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
