// Reading a WordPiece tokenizer.json (BERT, ELECTRA, MiniLM, DistilBERT, and files trained with Hugging Face's
// tokenizers): BERT's own setup (BertNormalizer, BertPreTokenizer, "##", [UNK], BERT's special tokens matched in the
// raw text) becomes bert_tokenizer.hpp's one-pass tokenizer; any other (every normalizer and pre-tokenizer of
// normalizer_json.hpp and pre_tokenizer_json.hpp, another prefix or unknown token, any added tokens) becomes a
// wordpiece_tokenizer. What cannot be read is refused with text_error naming the file, the JSON path and what was
// expected.
#pragma once

#include "cputrain/text/tokenizer_json.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/normalizer_json.hpp"
#include "cputrain/text/pre_tokenizer_json.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/vocabulary.hpp"
#include "cputrain/text/wordpiece_model.hpp"
#include "cputrain/text/wordpiece_tokenizer.hpp"

namespace cputrain::text {

/// A WordPiece tokenizer with what its tokenizer.json says goes around texts.
struct wordpiece_file {
  std::variant<bert_tokenizer, wordpiece_tokenizer> tokenizer;
  special_tokens specials;
};

namespace detail {

/// The WordPiece tokenizer a parsed tokenizer.json describes (`root` is its top level).
CPUTRAIN_DECL wordpiece_file read_wordpiece(const json_at& root, const std::string& source);

}  // namespace detail

/// Reads a WordPiece tokenizer.json. Throws text_error naming the file and the JSON path.
CPUTRAIN_DECL wordpiece_file load_wordpiece(const std::filesystem::path& file);

#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

// The reader's helpers, compiled only where the functions are (core/separate_compilation.hpp).
inline bert_tokenizer_options read_bert_normalizer(const json_at& normalizer) {
  (void)normalizer.type({"BertNormalizer"});
  bert_tokenizer_options options;
  options.clean_text = normalizer["clean_text"].boolean(true);
  options.handle_chinese_chars = normalizer["handle_chinese_chars"].boolean(true);
  options.lower_case = normalizer["lowercase"].boolean(true);
  if (!normalizer["strip_accents"].is_null()) options.strip_accents = normalizer["strip_accents"].boolean(false);
  return options;
}

/// model.vocab as the token list vocabulary takes: ids must number the tokens 0, 1, ... without gaps.
inline std::vector<std::string> read_dense_vocab(const json_at& vocab) {
  if (!vocab.value().is_object()) vocab.expected("an object of token ids by token");
  std::vector<std::string> tokens(vocab.value().size());
  std::vector<char> seen(tokens.size(), 0);
  for (const auto& [token, value] : vocab.value().items()) {
    const json_at at = vocab.member(token, value);
    const auto id = static_cast<std::size_t>(at.id());
    if (id >= tokens.size())
      at.fail("is " + std::to_string(id) + ", but the " + std::to_string(tokens.size()) +
              " tokens must have the ids 0 to " + std::to_string(tokens.size() - 1));
    if (seen[id]) at.fail("is " + std::to_string(id) + ", which \"" + tokens[id] + "\" has too");
    seen[id] = 1;
    tokens[id] = token;
  }
  return tokens;
}

/// Whether the added tokens are BERT's special tokens that the vocabulary has, all of them or none, with the
/// vocabulary's ids and matched on the raw text: what bert_tokenizer matches.
inline bool bert_added_tokens(const std::vector<added_token>& added, const std::vector<std::string>& tokens) {
  std::set<std::string> present, listed;
  for (const char* name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    if (std::find(tokens.begin(), tokens.end(), name) != tokens.end()) present.insert(name);
  for (const added_token& t : added) {
    if (!present.contains(t.content) || t.normalized || t.lstrip || t.rstrip || t.single_word) return false;
    const auto id = static_cast<std::size_t>(t.id);
    if (t.id < 0 || id >= tokens.size() || tokens[id] != t.content) return false;
    listed.insert(t.content);
  }
  return listed.empty() || listed == present;
}

/// Whether bert_tokenizer runs this file exactly: BERT's normalizer, pre-tokenizer, prefix, unknown token, the
/// special tokens its vocabulary class needs, and added tokens it matches.
inline bool fits_bert_tokenizer(const json_at& root, const wordpiece_options& model,
                                const std::vector<std::string>& tokens, const std::vector<added_token>& added) {
  const auto is = [](const json_at& at, const char* type) {
    return at.value().is_object() && at.value().value("type", "") == type;
  };
  if (!is(root["normalizer"], "BertNormalizer") || !is(root["pre_tokenizer"], "BertPreTokenizer")) return false;
  if (model.unk_token != "[UNK]" || model.continuing_subword_prefix != "##") return false;
  for (const char* name : {"[UNK]", "[CLS]", "[SEP]", "[PAD]"})
    if (std::find(tokens.begin(), tokens.end(), name) == tokens.end()) return false;
  return bert_added_tokens(added, tokens);
}

inline wordpiece_options read_wordpiece_options(const json_at& model) {
  wordpiece_options options;
  options.unk_token = model["unk_token"].optional_string().value_or("[UNK]");
  options.continuing_subword_prefix = model["continuing_subword_prefix"].optional_string().value_or("##");
  if (const json_at max = model["max_input_chars_per_word"]; !max.is_null())
    options.max_input_chars_per_word = static_cast<std::size_t>(max.id());
  return options;
}

inline wordpiece_tokenizer read_general_wordpiece(const json_at& root, std::vector<std::string> tokens,
                                                  wordpiece_options options, const std::vector<added_token>& added,
                                                  const std::string& source) {
  std::vector<normalizer_chain::step> normalizers;
  read_normalizer(root["normalizer"], normalizers);
  std::vector<pre_tokenizer_chain::step> pre_tokenizers;
  read_pre_tokenizer(root["pre_tokenizer"], pre_tokenizers);
  if (std::find(tokens.begin(), tokens.end(), options.unk_token) == tokens.end())
    root["model"]["unk_token"].fail("is \"" + options.unk_token + "\", which is not in the vocabulary; Hugging Face's "
                                    "WordPiece needs it for any word it cannot spell");
  auto model = std::make_shared<const wordpiece_model>(std::move(tokens), std::move(options), source);
  return wordpiece_tokenizer(std::move(model), normalizer_chain(std::move(normalizers)),
                             pre_tokenizer_chain(std::move(pre_tokenizers)), added);
}

CPUTRAIN_DECL wordpiece_file read_wordpiece(const json_at& root, const std::string& source) {
  if (!root.value().is_object()) root.expected("an object");
  const json_at model = root["model"];
  (void)model.type({"WordPiece"});
  wordpiece_options options = read_wordpiece_options(model);
  std::vector<std::string> tokens = read_dense_vocab(model["vocab"]);
  const std::vector<added_token> added = read_added_tokens(root["added_tokens"]);
  special_tokens specials = read_post_processor(root["post_processor"]);
  if (fits_bert_tokenizer(root, options, tokens, added)) {
    bert_tokenizer_options bert = read_bert_normalizer(root["normalizer"]);
    bert.max_input_chars_per_word = options.max_input_chars_per_word;
    bert.match_special_tokens = !added.empty();
    vocabulary vocab(std::move(tokens), source);
    specials.unk = vocab.unk_id();
    specials.pad = vocab.pad_id();
    specials.mask = vocab.mask_id();
    return {bert_tokenizer(std::move(vocab), bert), specials};
  }
  wordpiece_tokenizer t = read_general_wordpiece(root, std::move(tokens), std::move(options), added, source);
  specials.unk = t.model().unk_id();
  specials.pad = t.find("[PAD]");
  specials.mask = t.find("[MASK]");
  return {std::move(t), specials};
}

}  // namespace detail

CPUTRAIN_DECL wordpiece_file load_wordpiece(const std::filesystem::path& file) {
  const nlohmann::json json = detail::parse_tokenizer_json(file);
  return detail::read_wordpiece(detail::json_at(file, json, ""), file.string());
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
