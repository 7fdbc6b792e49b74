// Reading a WordPiece tokenizer.json (BERT, ELECTRA, MiniLM, DistilBERT): BertNormalizer, BertPreTokenizer,
// WordPiece with "##" and [UNK], BERT's or RoBERTa's post-processor, and BERT's special tokens matched in the raw
// text. What cputrain's WordPiece does not do (another continuing-subword prefix, added tokens beyond BERT's five,
// added tokens matched after normalisation) is refused with text_error naming the file, the JSON path and what was
// expected.
#pragma once

#include "cputrain/text/tokenizer_json.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/vocabulary.hpp"

namespace cputrain::text {

/// A WordPiece tokenizer with what its tokenizer.json says goes around texts.
struct wordpiece_file {
  bert_tokenizer tokenizer;
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

/// The added tokens must be BERT's special tokens that the vocabulary has, all of them or none, with the
/// vocabulary's ids and matched on the raw text: that is what bert_tokenizer matches.
inline bool read_wordpiece_added_tokens(const json_at& list, const vocabulary& vocab) {
  const auto added = read_added_tokens(list);
  std::set<std::string> present, listed;
  for (const char* name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    if (vocab.find(name)) present.insert(name);
  for (std::size_t i = 0; i < added.size(); ++i) {
    const added_token& t = added[i];
    const json_at at = list.at(i);
    if (!present.contains(t.content))
      at["content"].fail("is \"" + t.content + "\"; cputrain's WordPiece adds only BERT's special tokens [PAD], "
                         "[UNK], [CLS], [SEP] and [MASK] that its vocabulary has");
    if (vocab.find(t.content) != t.id)
      at["id"].fail("is " + std::to_string(t.id) + ", but the vocabulary gives \"" + t.content + "\" the id " +
                    std::to_string(*vocab.find(t.content)));
    if (t.normalized || t.lstrip || t.rstrip || t.single_word)
      at.fail("asks for normalized, lstrip, rstrip or single_word matching; cputrain's WordPiece matches its special "
              "tokens exactly as written in the raw text");
    listed.insert(t.content);
  }
  if (!listed.empty() && listed != present)
    list.fail("lists some of BERT's special tokens that the vocabulary has but not all; cputrain's WordPiece "
              "matches all of them in the text or none");
  return !listed.empty();
}

CPUTRAIN_DECL wordpiece_file read_wordpiece(const json_at& root, const std::string& source) {
  if (!root.value().is_object()) root.expected("an object");
  bert_tokenizer_options options = read_bert_normalizer(root["normalizer"]);
  (void)root["pre_tokenizer"].type({"BertPreTokenizer"});
  const json_at model = root["model"];
  (void)model.type({"WordPiece"});
  if (const auto unk = model["unk_token"].optional_string().value_or("[UNK]"); unk != "[UNK]")
    model["unk_token"].fail("is \"" + unk + "\"; cputrain's WordPiece takes BERT's \"[UNK]\"");
  if (const auto prefix = model["continuing_subword_prefix"].optional_string().value_or("##"); prefix != "##")
    model["continuing_subword_prefix"].fail("is \"" + prefix + "\"; cputrain's WordPiece takes BERT's \"##\"");
  if (const json_at max = model["max_input_chars_per_word"]; !max.is_null())
    options.max_input_chars_per_word = static_cast<std::size_t>(max.id());
  vocabulary vocab(read_dense_vocab(model["vocab"]), source);
  options.match_special_tokens = read_wordpiece_added_tokens(root["added_tokens"], vocab);
  special_tokens specials = read_post_processor(root["post_processor"]);
  specials.unk = vocab.unk_id();
  specials.pad = vocab.pad_id();
  specials.mask = vocab.mask_id();
  return {bert_tokenizer(std::move(vocab), options), specials};
}

}  // namespace detail

CPUTRAIN_DECL wordpiece_file load_wordpiece(const std::filesystem::path& file) {
  const nlohmann::json json = detail::parse_tokenizer_json(file);
  return detail::read_wordpiece(detail::json_at(file, json, ""), file.string());
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
