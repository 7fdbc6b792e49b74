// tokenizer.json's `normalizer` section, read into a normalizer_chain and written back as Hugging Face's tokenizers
// writes it: every normalizer type of tokenizers 0.23. Replace's regexes are those of one repeated character
// (" {2,}", "x+"), what Hugging Face's converters write; any other regex is refused naming the file and JSON path.
#pragma once

#include "cputrain/text/normalizer_steps.hpp"

#include <cctype>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/json_message.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/base64.hpp"
#include "cputrain/text/precompiled_charsmap.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/tokenizer_json.hpp"
#include "cputrain/text/unicode_forms.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text::detail {

// Only needed where the readers and writers are defined (core/separate_compilation.hpp).
#if CPUTRAIN_DEFINE_FUNCTIONS
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

/// Appends the steps of the normalizer at `n` (a Sequence's in order) to `steps`; nothing for null.
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

/// The chain as tokenizer.json writes it: null, the one step, or a Sequence.
inline nlohmann::ordered_json normalizer_json(const normalizer_chain& chain) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& step : chain.steps()) {
    if (const auto* map = std::get_if<std::shared_ptr<const precompiled_charsmap>>(&step)) {
      list.push_back({{"type", "Precompiled"}, {"precompiled_charsmap", encode_base64((*map)->blob())}});
    } else if (const auto* strip = std::get_if<strip_step>(&step)) {
      list.push_back({{"type", "Strip"}, {"strip_left", strip->left}, {"strip_right", strip->right}});
    } else if (const auto* form = std::get_if<unicode_form>(&step)) {
      static constexpr const char* names[] = {"NFC", "NFD", "NFKC", "NFKD"};
      list.push_back({{"type", names[static_cast<int>(*form)]}});
    } else if (std::holds_alternative<lowercase_step>(step)) {
      list.push_back({{"type", "Lowercase"}});
    } else if (std::holds_alternative<strip_accents_step>(step)) {
      list.push_back({{"type", "StripAccents"}});
    } else if (const auto* prepend = std::get_if<prepend_step>(&step)) {
      list.push_back({{"type", "Prepend"}, {"prepend", prepend->content}});
    } else if (std::holds_alternative<nmt_step>(step)) {
      list.push_back({{"type", "Nmt"}});
    } else if (std::holds_alternative<byte_level_step>(step)) {
      list.push_back({{"type", "ByteLevel"}});
    } else if (const auto* b = std::get_if<bert_normalizer_step>(&step)) {
      nlohmann::ordered_json strip_accents = nullptr;
      if (b->strip_accents) strip_accents = *b->strip_accents;
      list.push_back({{"type", "BertNormalizer"}, {"clean_text", b->clean_text},
                      {"handle_chinese_chars", b->handle_chinese_chars}, {"strip_accents", strip_accents},
                      {"lowercase", b->lowercase}});
    } else {
      const auto& r = std::get<replace_step>(step);
      nlohmann::ordered_json pattern;
      if (r.min_run == 0) pattern["String"] = r.pattern;
      else pattern["Regex"] = r.regex;
      list.push_back({{"type", "Replace"}, {"pattern", std::move(pattern)}, {"content", r.content}});
    }
  }
  if (list.empty()) return nullptr;
  if (list.size() == 1) return list[0];
  return {{"type", "Sequence"}, {"normalizers", std::move(list)}};
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text::detail
