// cputrain::text::load_tokenizer — the tokenizer of a Hugging Face model directory, found as AutoTokenizer finds
// it: tokenizer.json first (WordPiece, byte-level BPE or SentencePiece Unigram), else the legacy files (vocab.txt;
// vocab.json with merges.txt; XLM-RoBERTa's sentencepiece.bpe.model), with tokenizer_config.json's switches
// applied over it as the fast tokenizer classes apply them (do_lower_case, strip_accents, tokenize_chinese_chars
// for BERT; add_prefix_space, trim_offsets for RoBERTa and GPT-2) and its pad/mask/unk tokens. A tokenizer that can
// produce ids beyond config.json's vocab_size is refused: the model's embedding table would be read out of bounds.
#pragma once

#include "cputrain/text/byte_level_bpe_files.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/load_bert_tokenizer.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/text/byte_level_bpe_json.hpp"
#include "cputrain/text/tokenizer_json.hpp"
#include "cputrain/text/unigram_files.hpp"
#include "cputrain/text/unigram_json.hpp"
#include "cputrain/text/wordpiece_json.hpp"

namespace cputrain::text {

struct tokenizer_load_options {
  /// Refuse a tokenizer whose ids the directory's config.json's vocab_size does not cover. A program that takes its
  /// model's config from elsewhere (run_qa's --config_name) turns this off and checks against that config.
  bool check_config_vocab_size = true;
};

/// A tokenizer from a model directory, or from one tokenizer.json or vocab.txt file. Throws text_error naming the
/// file (and the JSON path) for anything missing, malformed or not implemented.
CPUTRAIN_DECL tokenizer load_tokenizer(const std::filesystem::path& path, tokenizer_load_options options = {});

/// A tokenizer from one tokenizer.json file (whatever its name), without a tokenizer_config.json.
CPUTRAIN_DECL tokenizer load_tokenizer_json(const std::filesystem::path& file);

#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

/// tokenizer_config.json of `dir` as JSON (an empty object when absent).
inline nlohmann::json read_optional_json(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return nlohmann::json::object();
  nlohmann::json json = parse_tokenizer_json(file);
  if (!json.is_object()) json_at(file, json, "").expected("an object");
  return json;
}

/// The content of a special token entry of tokenizer_config.json: a string or {"content": ...}.
inline std::optional<std::string> config_token(const json_at& config, const char* key) {
  if (config[key].is_null()) return std::nullopt;
  return config_special(config, key, "", false)->content;
}

inline tokenizer wordpiece_from_json(const json_at& root, const std::filesystem::path& file, const json_at& config) {
  wordpiece_file f = read_wordpiece(root, file.string());
  if (auto* general = std::get_if<wordpiece_tokenizer>(&f.tokenizer))
    return tokenizer(tokenizer::pipeline(std::move(*general)), f.specials);
  // BertTokenizerFast rebuilds its normalizer when tokenizer_config.json says otherwise.
  const auto& bert = std::get<bert_tokenizer>(f.tokenizer);
  bert_tokenizer_options options = bert.options();
  const auto flag = [&](const char* key, auto&& set) {
    if (!config[key].is_null()) set(config[key].boolean(false));
  };
  flag("do_lower_case", [&](bool v) { options.lower_case = v; });
  flag("strip_accents", [&](bool v) { options.strip_accents = v; });
  flag("tokenize_chinese_chars", [&](bool v) { options.handle_chinese_chars = v; });
  return tokenizer(tokenizer::pipeline(bert_tokenizer(bert.vocab(), options)), f.specials);
}

inline tokenizer byte_level_from_json(const json_at& root, const std::filesystem::path& file, const json_at& config) {
  byte_level_bpe_file f = read_byte_level_bpe(root, file.string());
  // RobertaTokenizerFast and GPT2TokenizerFast set these on the pre-tokenizer and post-processor.
  byte_level_options options = f.tokenizer.options();
  if (!config["add_prefix_space"].is_null()) {  // on the pre-tokenizer and the post-processor alike
    options.add_prefix_space = config["add_prefix_space"].boolean(false);
    options.trim_keeps_prefix_space = options.add_prefix_space;
  }
  if (!config["trim_offsets"].is_null() && f.specials.layout == special_layout::roberta)
    options.trim_offsets = config["trim_offsets"].boolean(true);
  return tokenizer(tokenizer::pipeline(byte_level_bpe_tokenizer(f.tokenizer.model(), f.tokenizer.added_tokens(),
                                                                options, f.tokenizer.normalizer())),
                   f.specials);
}

inline tokenizer unigram_from_json(const json_at& root, const std::filesystem::path& file) {
  unigram_file f = read_unigram(root, file.string());
  return tokenizer(tokenizer::pipeline(std::move(f.tokenizer)), f.specials);
}

inline tokenizer from_tokenizer_json(const std::filesystem::path& file, const json_at& config) {
  const nlohmann::json json = parse_tokenizer_json(file);
  const json_at root(file, json, "");
  if (!json.is_object()) root.expected("an object");
  const std::string type = root["model"].type({"WordPiece", "BPE", "Unigram"});
  tokenizer t = type == "WordPiece" ? wordpiece_from_json(root, file, config)
                : type == "BPE"     ? byte_level_from_json(root, file, config)
                                    : unigram_from_json(root, file);
  special_tokens specials = t.specials();
  tokenizer_defaults defaults;
  defaults.truncation = read_truncation(root["truncation"]);
  defaults.padding = read_padding(root["padding"], specials.pad);
  return t.with_specials(specials).with_defaults(std::move(defaults));
}

/// GPT-2's or RoBERTa's converter, as tokenizer_config.json's tokenizer_class or config.json's model_type names it.
inline byte_level_family legacy_byte_level_family(const std::filesystem::path& dir, const json_at& config,
                                                  const json_at& model_config) {
  if (const auto cls = config["tokenizer_class"].optional_string()) {
    if (cls->starts_with("GPT2")) return byte_level_family::gpt2;
    if (cls->starts_with("Roberta")) return byte_level_family::roberta;
    config["tokenizer_class"].fail("is \"" + *cls + "\"; with vocab.json and merges.txt cputrain reads "
                                   "GPT2Tokenizer's and RobertaTokenizer's files");
  }
  if (const auto type = model_config["model_type"].optional_string()) {
    if (*type == "gpt2") return byte_level_family::gpt2;
    if (*type == "roberta") return byte_level_family::roberta;
    model_config["model_type"].fail("is \"" + *type + "\", whose tokenizer files cputrain cannot tell from vocab.json "
                                    "and merges.txt alone; give the model's tokenizer.json");
  }
  throw text_error(dir.string() + ": vocab.json and merges.txt are GPT-2's or RoBERTa's, but neither "
                                  "tokenizer_config.json's tokenizer_class nor config.json's model_type says which");
}

/// XLM-RoBERTa's legacy sentencepiece.bpe.model, unless tokenizer_config.json names another tokenizer class.
inline tokenizer xlm_roberta_from_sentencepiece(const std::filesystem::path& dir, const json_at& config) {
  if (const auto cls = config["tokenizer_class"].optional_string(); cls && !cls->starts_with("XLMRoberta"))
    config["tokenizer_class"].fail("is \"" + *cls + "\"; with sentencepiece.bpe.model cputrain reads "
                                   "XLMRobertaTokenizer's files");
  const bool prefix = config["add_prefix_space"].boolean(true);
  unigram_file f = load_xlm_roberta_sentencepiece(dir / "sentencepiece.bpe.model",
                                                  prefix ? prepend_scheme::always : prepend_scheme::never);
  return tokenizer(tokenizer::pipeline(std::move(f.tokenizer)), f.specials);
}

inline tokenizer from_legacy_files(const std::filesystem::path& dir, const json_at& config,
                                   const json_at& model_config) {
  std::error_code ec;
  const auto has = [&](const char* name) { return std::filesystem::exists(dir / name, ec); };
  if (has("vocab.txt")) return tokenizer(load_bert_tokenizer(dir));
  if (has("vocab.json") && has("merges.txt")) {
    byte_level_bpe_file f = load_byte_level_bpe_files(dir, legacy_byte_level_family(dir, config, model_config));
    return tokenizer(tokenizer::pipeline(std::move(f.tokenizer)), f.specials);
  }
  if (has("sentencepiece.bpe.model")) return xlm_roberta_from_sentencepiece(dir, config);
  if (has("spiece.model"))
    throw text_error(dir.string() + ": has only spiece.model (ALBERT's, T5's, XLNet's SentencePiece model), whose "
                                    "converters cputrain does not implement; give the model's tokenizer.json");
  throw text_error(dir.string() + ": no tokenizer here: looked for tokenizer.json, vocab.txt, and vocab.json with "
                                  "merges.txt");
}

/// tokenizer_config.json's pad/mask/unk tokens, and tokenizer.json's padding token, over the family's defaults.
inline tokenizer with_named_specials(tokenizer t, const json_at& config) {
  special_tokens specials = t.specials();
  const auto role = [&](const char* key, std::optional<std::int32_t>& id) {
    const auto name = config_token(config, key);
    if (!name) return;
    const auto found = t.token_to_id(*name);
    if (!found) config[key].fail("names \"" + *name + "\", which the tokenizer's vocabulary does not have");
    id = found;
  };
  role("pad_token", specials.pad);
  role("mask_token", specials.mask);
  role("unk_token", specials.unk);
  return t.with_specials(specials);
}

inline void check_vocab_size(const tokenizer& t, const std::filesystem::path& config_file, const json_at& model_config) {
  const json_at size = model_config["vocab_size"];
  if (size.is_null()) return;
  if (!size.value().is_number_integer() || size.value().get<std::int64_t>() <= 0) size.expected("a positive integer");
  const auto n = size.value().get<std::int64_t>();
  if (static_cast<std::int64_t>(t.id_count()) > n)
    throw text_error(config_file.string() + ": vocab_size is " + std::to_string(n) + ", but the " +
                     std::string(t.family()) + " tokenizer beside it gives ids up to " +
                     std::to_string(t.id_count() - 1) + ": the tokenizer does not belong to this model");
}

}  // namespace detail

CPUTRAIN_DECL tokenizer load_tokenizer_json(const std::filesystem::path& file) {
  const nlohmann::json empty = nlohmann::json::object();
  return detail::from_tokenizer_json(file, detail::json_at(file, empty, ""));
}

CPUTRAIN_DECL tokenizer load_tokenizer(const std::filesystem::path& path, tokenizer_load_options options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw text_error(path.string() + ": no such file or directory");
  if (!std::filesystem::is_directory(path, ec)) {
    if (path.extension() == ".json") return load_tokenizer_json(path);
    return tokenizer(load_bert_tokenizer(path));
  }
  const auto config_file = path / "tokenizer_config.json";
  const auto model_config_file = path / "config.json";
  const nlohmann::json config_json = detail::read_optional_json(config_file);
  const nlohmann::json model_config_json = detail::read_optional_json(model_config_file);
  const detail::json_at config(config_file, config_json, "");
  const detail::json_at model_config(model_config_file, model_config_json, "");
  const auto json_file = path / "tokenizer.json";
  tokenizer t = std::filesystem::exists(json_file, ec) ? detail::from_tokenizer_json(json_file, config)
                                                        : detail::from_legacy_files(path, config, model_config);
  t = detail::with_named_specials(std::move(t), config);
  if (options.check_config_vocab_size) detail::check_vocab_size(t, model_config_file, model_config);
  return t;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
