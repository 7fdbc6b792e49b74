// Reading a SentencePiece Unigram tokenizer.json (XLM-RoBERTa's, as transformers' converters write it): the
// Unigram model (vocabulary with scores, unk_id, byte_fallback), the normalizers (every type), the pre-tokenizers
// (pre_tokenizer_json.hpp: Metaspace in its current and older fields, and the others), the post-processor and the
// added tokens.
// Anything else is refused naming the file, the JSON path and what cputrain implements.
#pragma once

#include "cputrain/text/base64.hpp"

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/json_message.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/metaspace.hpp"
#include "cputrain/text/normalizer_steps.hpp"
#include "cputrain/text/pre_tokenizer_json.hpp"
#include "cputrain/text/precompiled_charsmap.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/tokenizer_json.hpp"
#include "cputrain/text/unigram_model.hpp"
#include "cputrain/text/unigram_tokenizer.hpp"
#include "cputrain/text/utf8.hpp"

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

/// One character, literally or escaped with a backslash, repeated ("X{n,}" or "X+"): Replace's regexes in the
/// converters' files. nullopt for any other regex.
inline std::optional<replace_step> repeated_char_regex(const std::string& regex) {
  std::size_t pos = 0;
  if (regex.empty()) return std::nullopt;
  if (regex[0] == '\\') ++pos;
  char32_t cp = 0;
  const std::size_t n = pos < regex.size() ? decode_utf8(regex, pos, cp) : 0;
  if (n == 0) return std::nullopt;
  const bool escaped = pos == 1;
  if (!escaped && std::string_view("\\.^$|?*+()[]{}").find(static_cast<char>(cp < 0x80 ? cp : 0)) != std::string_view::npos)
    return std::nullopt;
  if (escaped && (cp >= 0x80 || std::isalnum(static_cast<int>(cp)))) return std::nullopt;  // \d, \s, ... are classes
  replace_step step;
  step.pattern = regex.substr(pos, n);
  const std::string rest = regex.substr(pos + n);
  if (rest == "+") {
    step.min_run = 1;
  } else if (rest.size() >= 4 && rest.front() == '{' && rest.ends_with(",}") &&
             rest.find_first_not_of("0123456789", 1) == rest.size() - 2 && rest.size() <= 8) {
    step.min_run = std::stoul(rest.substr(1, rest.size() - 3));
    if (step.min_run == 0) return std::nullopt;
  } else {
    return std::nullopt;
  }
  step.regex = regex;
  return step;
}

inline void read_normalizer(const json_at& n, std::vector<normalizer_chain::step>& steps) {
  if (n.is_null()) return;
  const std::string type = n.type({"Sequence", "Precompiled", "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents",
                                   "Strip", "Replace", "Prepend", "Nmt", "BertNormalizer", "ByteLevel"});
  if (type == "Sequence") {
    const json_at list = n["normalizers"];
    if (!list.value().is_array()) list.expected("an array of normalizers");
    for (std::size_t i = 0; i < list.value().size(); ++i) read_normalizer(list.at(i), steps);
  } else if (type == "Precompiled") {
    const json_at map = n["precompiled_charsmap"];
    std::size_t bad = 0;
    const auto blob = decode_base64(map.string(), &bad);
    if (!blob) map.fail("is not base64 (at character " + std::to_string(bad) + ")");
    try {
      steps.emplace_back(std::make_shared<const precompiled_charsmap>(*blob, "the charsmap"));
    } catch (const text_error& e) {
      map.fail(std::string("is refused: ") + e.what());
    }
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    steps.emplace_back(type == "NFC"    ? unicode_form::nfc
                       : type == "NFD"  ? unicode_form::nfd
                       : type == "NFKC" ? unicode_form::nfkc
                                        : unicode_form::nfkd);
  } else if (type == "Lowercase") {
    steps.emplace_back(lowercase_step{});
  } else if (type == "StripAccents") {
    steps.emplace_back(strip_accents_step{});
  } else if (type == "Prepend") {
    steps.emplace_back(prepend_step{n["prepend"].string()});
  } else if (type == "Nmt") {
    steps.emplace_back(nmt_step{});
  } else if (type == "ByteLevel") {
    steps.emplace_back(byte_level_step{});
  } else if (type == "BertNormalizer") {
    bert_normalizer_step b;
    b.clean_text = n["clean_text"].boolean(true);
    b.handle_chinese_chars = n["handle_chinese_chars"].boolean(true);
    if (!n["strip_accents"].is_null()) b.strip_accents = n["strip_accents"].boolean(false);
    b.lowercase = n["lowercase"].boolean(true);
    steps.emplace_back(b);
  } else if (type == "Strip") {
    steps.emplace_back(strip_step{n["strip_left"].boolean(false), n["strip_right"].boolean(false)});
  } else {
    const json_at pattern = n["pattern"];
    std::optional<replace_step> step;
    if (!pattern["String"].is_null()) {
      step = replace_step{pattern["String"].string(), 0, {}, {}};
      if (step->pattern.empty()) pattern["String"].fail("is empty");
    } else if (!pattern["Regex"].is_null()) {
      step = repeated_char_regex(pattern["Regex"].string());
      if (!step)
        pattern["Regex"].fail("is " + json_text_for_message(pattern["Regex"].value()) +
                              "; cputrain implements regexes of one repeated character (\" {2,}\", \"x+\") here");
    } else {
      pattern.expected("{\"String\": ...} or {\"Regex\": ...}");
    }
    step->content = n["content"].string();
    steps.push_back(std::move(*step));
  }
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
