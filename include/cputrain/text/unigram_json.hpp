// Reading a SentencePiece Unigram tokenizer.json (XLM-RoBERTa's, as transformers' converters write it): the
// Unigram model (vocabulary with scores, unk_id, byte_fallback), the normalizers (every type), the pre-tokenizers
// (pre_tokenizer_json.hpp: Metaspace in its current and older fields, and the others), the post-processor and the
// added tokens. Anything else is refused naming the file, the JSON path and what cputrain implements.
#pragma once

#include "cputrain/text/unigram_tokenizer.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/normalizer_json.hpp"
#include "cputrain/text/normalizer_steps.hpp"
#include "cputrain/text/pre_tokenizer_json.hpp"
#include "cputrain/text/pre_tokenizer_steps.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/tokenizer_json.hpp"
#include "cputrain/text/unigram_model.hpp"

namespace cputrain::text {

/// A Unigram tokenizer with what tokenizer.json says goes around its texts.
struct unigram_file {
  unigram_tokenizer tokenizer;
  special_tokens specials;
};

namespace detail {

/// The Unigram tokenizer a parsed tokenizer.json describes (`root` is its top level).
CPUTRAIN_DECL unigram_file read_unigram(const json_at& root, const std::string& source);

}  // namespace detail

/// Reads a SentencePiece Unigram tokenizer.json. Throws text_error naming the file and the JSON path.
CPUTRAIN_DECL unigram_file load_unigram(const std::filesystem::path& file);

#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

// The reader's helpers, compiled only where the functions are (core/separate_compilation.hpp).
inline std::shared_ptr<const unigram_model> read_unigram_model(const json_at& model, const std::string& source) {
  (void)model.type({"Unigram"});
  const json_at vocab = model["vocab"];
  if (!vocab.value().is_array()) vocab.expected("an array of [token, score] pairs");
  if (vocab.value().size() >= (1u << 24)) vocab.fail("has 2^24 tokens or more; cputrain takes fewer");
  std::vector<std::pair<std::string, double>> pieces;
  pieces.reserve(vocab.value().size());
  for (std::size_t i = 0; i < vocab.value().size(); ++i) {
    const json_at entry = vocab.at(i);
    const auto& v = entry.value();
    if (!v.is_array() || v.size() != 2 || !v[0].is_string() || !v[1].is_number()) entry.expected("[token, score]");
    pieces.emplace_back(v[0].get<std::string>(), v[1].get<double>());
  }
  if (pieces.empty()) vocab.fail("is empty");
  std::optional<std::int32_t> unk;
  if (!model["unk_id"].is_null()) unk = model["unk_id"].model_id();
  if (unk && static_cast<std::size_t>(*unk) >= pieces.size())
    model["unk_id"].fail("is " + std::to_string(*unk) + ", outside the vocabulary of " + std::to_string(pieces.size()));
  return std::make_shared<const unigram_model>(std::move(pieces), unk, model["byte_fallback"].boolean(false), source);
}

CPUTRAIN_DECL unigram_file read_unigram(const json_at& root, const std::string& source) {
  if (!root.value().is_object()) root.expected("an object");
  std::vector<normalizer_chain::step> steps;
  read_normalizer(root["normalizer"], steps);
  std::vector<pre_tokenizer_chain::step> pre_steps;
  read_pre_tokenizer(root["pre_tokenizer"], pre_steps);
  unigram_tokenizer tokenizer(read_unigram_model(root["model"], source), normalizer_chain(std::move(steps)),
                              pre_tokenizer_chain(std::move(pre_steps)), read_added_tokens(root["added_tokens"]));
  special_tokens specials = read_post_processor(root["post_processor"]);
  specials.unk = tokenizer.model().unk_id();
  specials.pad = tokenizer.find("<pad>");
  specials.mask = tokenizer.find("<mask>");
  return {std::move(tokenizer), specials};
}

}  // namespace detail

CPUTRAIN_DECL unigram_file load_unigram(const std::filesystem::path& file) {
  const nlohmann::json json = detail::parse_tokenizer_json(file);
  return detail::read_unigram(detail::json_at(file, json, ""), file.string());
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
