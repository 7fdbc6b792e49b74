// tokenizer.json's `pre_tokenizer` section, read into a pre_tokenizer_chain and written back as Hugging Face's
// tokenizers writes it: every pre-tokenizer type of tokenizers 0.23 but ByteLevel (the byte-level BPE tokenizer's
// own) and Split with a regex pattern, which are refused naming the file, the JSON path and what cputrain takes.
#pragma once

#include "cputrain/text/pre_tokenizer_steps.hpp"

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/json_message.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/metaspace.hpp"
#include "cputrain/text/tokenizer_json.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text::detail {

/// Appends the steps of the pre-tokenizer at `pre` (a Sequence's in order) to `steps`; nothing for null.
CPUTRAIN_DECL void read_pre_tokenizer(const json_at& pre, std::vector<pre_tokenizer_chain::step>& steps);

// The rest is only needed where the readers and writers are defined (core/separate_compilation.hpp).
#if CPUTRAIN_DEFINE_FUNCTIONS
inline metaspace_options read_metaspace(const json_at& pre) {
  metaspace_options options;
  options.replacement = pre["replacement"].string();
  char32_t cp = 0;
  if (options.replacement.empty() || decode_utf8(options.replacement, 0, cp) != options.replacement.size())
    pre["replacement"].expected("one character");
  if (const auto scheme = pre["prepend_scheme"].optional_string()) {
    if (*scheme == "always") options.prepend = prepend_scheme::always;
    else if (*scheme == "first") options.prepend = prepend_scheme::first;
    else if (*scheme == "never") options.prepend = prepend_scheme::never;
    else pre["prepend_scheme"].expected("\"always\", \"first\" or \"never\"");
  } else if (!pre["add_prefix_space"].is_null()) {
    options.prepend = pre["add_prefix_space"].boolean(true) ? prepend_scheme::always : prepend_scheme::never;
  }
  options.split = pre["split"].boolean(true);
  return options;
}

inline constexpr const char* split_behavior_names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext",
                                                       "Contiguous"};

inline split_behavior read_split_behavior(const json_at& b) {
  const std::string name = b.string();
  for (std::size_t i = 0; i < std::size(split_behavior_names); ++i)
    if (name == split_behavior_names[i]) return static_cast<split_behavior>(i);
  b.expected("\"Removed\", \"Isolated\", \"MergedWithPrevious\", \"MergedWithNext\" or \"Contiguous\"");
}

inline split_step read_split(const json_at& pre) {
  split_step split;
  const json_at pattern = pre["pattern"];
  if (!pattern["Regex"].is_null())
    pattern["Regex"].fail("is " + json_text_for_message(pattern["Regex"].value()) +
                          "; cputrain implements Split with a {\"String\": ...} pattern, not yet a regex");
  if (pattern["String"].is_null()) pattern.expected("{\"String\": ...} or {\"Regex\": ...}");
  split.pattern = pattern["String"].string();
  if (split.pattern.empty()) pattern["String"].fail("is empty");
  split.behavior = read_split_behavior(pre["behavior"]);
  split.invert = pre["invert"].boolean(false);
  return split;
}

CPUTRAIN_DECL void read_pre_tokenizer(const json_at& pre, std::vector<pre_tokenizer_chain::step>& steps) {
  if (pre.is_null()) return;
  const std::string type = pre.type({"Sequence", "Metaspace", "BertPreTokenizer", "Whitespace", "WhitespaceSplit",
                                     "Punctuation", "Digits", "Split", "CharDelimiterSplit", "UnicodeScripts"});
  if (type == "Sequence") {
    const json_at list = pre["pretokenizers"];
    if (!list.value().is_array()) list.expected("an array of pre-tokenizers");
    for (std::size_t i = 0; i < list.value().size(); ++i) read_pre_tokenizer(list.at(i), steps);
  } else if (type == "Metaspace") {
    steps.emplace_back(read_metaspace(pre));
  } else if (type == "BertPreTokenizer") {
    steps.emplace_back(bert_pre_tokenizer_step{});
  } else if (type == "Whitespace") {
    steps.emplace_back(whitespace_step{});
  } else if (type == "WhitespaceSplit") {
    steps.emplace_back(whitespace_split_step{});
  } else if (type == "Punctuation") {
    punctuation_step p;
    if (!pre["behavior"].is_null()) p.behavior = read_split_behavior(pre["behavior"]);
    steps.emplace_back(p);
  } else if (type == "Digits") {
    steps.emplace_back(digits_step{pre["individual_digits"].boolean(false)});
  } else if (type == "Split") {
    steps.emplace_back(read_split(pre));
  } else if (type == "CharDelimiterSplit") {
    const std::string d = pre["delimiter"].string();
    char32_t cp = 0;
    if (d.empty() || decode_utf8(d, 0, cp) != d.size()) pre["delimiter"].expected("one character");
    steps.emplace_back(char_delimiter_step{cp});
  } else {
    steps.emplace_back(unicode_scripts_step{});
  }
}

inline nlohmann::ordered_json metaspace_json(const metaspace_options& o, const char* type) {
  const char* scheme = o.prepend == prepend_scheme::always  ? "always"
                       : o.prepend == prepend_scheme::first ? "first"
                                                            : "never";
  return {{"type", type}, {"replacement", o.replacement}, {"prepend_scheme", scheme}, {"split", o.split}};
}

inline nlohmann::ordered_json pre_tokenizer_step_json(const pre_tokenizer_chain::step& step) {
  const auto behavior = [](split_behavior b) { return split_behavior_names[static_cast<std::size_t>(b)]; };
  if (const auto* m = std::get_if<metaspace_options>(&step)) return metaspace_json(*m, "Metaspace");
  if (std::holds_alternative<bert_pre_tokenizer_step>(step)) return {{"type", "BertPreTokenizer"}};
  if (std::holds_alternative<whitespace_step>(step)) return {{"type", "Whitespace"}};
  if (std::holds_alternative<whitespace_split_step>(step)) return {{"type", "WhitespaceSplit"}};
  if (std::holds_alternative<unicode_scripts_step>(step)) return {{"type", "UnicodeScripts"}};
  if (const auto* p = std::get_if<punctuation_step>(&step))
    return {{"type", "Punctuation"}, {"behavior", behavior(p->behavior)}};
  if (const auto* d = std::get_if<digits_step>(&step))
    return {{"type", "Digits"}, {"individual_digits", d->individual_digits}};
  if (const auto* c = std::get_if<char_delimiter_step>(&step)) {
    std::string delimiter;
    append_utf8(delimiter, c->delimiter);
    return {{"type", "CharDelimiterSplit"}, {"delimiter", delimiter}};
  }
  const auto& s = std::get<split_step>(step);
  return {{"type", "Split"},
          {"pattern", {{"String", s.pattern}}},
          {"behavior", behavior(s.behavior)},
          {"invert", s.invert}};
}

/// The chain as tokenizer.json writes it: null, the one step, or a Sequence.
inline nlohmann::ordered_json pre_tokenizer_json(const pre_tokenizer_chain& chain) {
  if (chain.steps().empty()) return nullptr;
  if (chain.steps().size() == 1) return pre_tokenizer_step_json(chain.steps()[0]);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& s : chain.steps()) list.push_back(pre_tokenizer_step_json(s));
  return {{"type", "Sequence"}, {"pretokenizers", std::move(list)}};
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text::detail
