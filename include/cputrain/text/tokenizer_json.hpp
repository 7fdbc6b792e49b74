// Reading Hugging Face's tokenizer.json, what every family's reader shares: json_at (a cursor that names the file and
// the JSON path in messages), the added tokens, the post-processors, truncation and padding. Whatever the file asks
// for that cputrain does not implement, or gets wrong, is refused with text_error naming the file, the JSON path
// and what was expected: a tokenizer that silently differs from the reference would put labels on the wrong tokens.
#pragma once

#include "cputrain/text/added_tokens.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/json_message.hpp"
#include "cputrain/core/json_nesting.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/padding.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/truncation.hpp"

namespace cputrain::text {

namespace detail {

/// A cursor into a tokenizer.json for messages: the file and the JSON path ("model.merges[3]").
class json_at {
 public:
  json_at(const std::filesystem::path& file, const nlohmann::json& value, std::string path)
      : file_(file), value_(value), path_(std::move(path)) {}

  [[nodiscard]] const nlohmann::json& value() const noexcept { return value_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  [[noreturn]] void fail(const std::string& problem) const {
    throw text_error(file_.string() + ": " + (path_.empty() ? "the top level" : path_) + " " + problem);
  }
  [[noreturn]] void expected(const char* what) const { fail("is " + json_text_for_message(value_) + ", expected " + what); }

  [[nodiscard]] json_at operator[](const char* key) const {
    if (!value_.is_object()) expected("an object");
    static const nlohmann::json null_value;
    const auto it = value_.find(key);
    return {file_, it == value_.end() ? null_value : *it, path_.empty() ? key : path_ + "." + key};
  }
  /// `value`, one of this object's members, at path `key` (for iterating over items()).
  [[nodiscard]] json_at member(const std::string& key, const nlohmann::json& value) const {
    return {file_, value, path_.empty() ? key : path_ + "." + key};
  }
  [[nodiscard]] json_at at(std::size_t i) const {
    return {file_, value_.at(i), path_ + "[" + std::to_string(i) + "]"};
  }
  [[nodiscard]] bool is_null() const noexcept { return value_.is_null(); }

  [[nodiscard]] std::string string() const {
    if (!value_.is_string()) expected("a string");
    return value_.get<std::string>();
  }
  [[nodiscard]] bool boolean(bool fallback) const {
    if (value_.is_null()) return fallback;
    if (!value_.is_boolean()) expected("true or false");
    return value_.get<bool>();
  }
  [[nodiscard]] std::int32_t id() const {
    if (!value_.is_number_integer() || value_.get<std::int64_t>() < 0 ||
        value_.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
      expected("a token id (an integer from 0 to 2^31 - 1)");
    return static_cast<std::int32_t>(value_.get<std::int64_t>());
  }
  /// A vocabulary id: below 2^24, so a file cannot make the tokenizer size its tables for 2^31 ids (the largest
  /// vocabularies in use have about 2^18 tokens).
  [[nodiscard]] std::int32_t model_id() const {
    const std::int32_t v = id();
    if (v >= (1 << 24)) fail("is " + std::to_string(v) + "; cputrain takes vocabulary ids below 16777216");
    return v;
  }
  [[nodiscard]] std::optional<std::string> optional_string() const {
    if (value_.is_null()) return std::nullopt;
    return string();
  }
  /// A "type" key that must be one of `allowed`.
  [[nodiscard]] std::string type(std::initializer_list<const char*> allowed) const {
    const std::string t = (*this)["type"].string();
    std::string known;
    for (const char* a : allowed) {
      if (t == a) return t;
      known += std::string(known.empty() ? "" : ", ") + "\"" + a + "\"";
    }
    (*this)["type"].fail("is \"" + t + "\", which cputrain does not implement here; it implements " + known);
  }

 private:
  const std::filesystem::path& file_;
  const nlohmann::json& value_;
  std::string path_;
};

CPUTRAIN_DECL nlohmann::json parse_tokenizer_json(const std::filesystem::path& file);

CPUTRAIN_DECL std::vector<added_token> read_added_tokens(const json_at& list);

// The readers' helpers are only needed where the functions are defined (core/separate_compilation.hpp).
#if CPUTRAIN_DEFINE_FUNCTIONS
/// The special tokens post_processor.special_tokens[name] stands for: exactly one id.
inline std::int32_t template_special_id(const json_at& post, const std::string& name) {
  const json_at entry = post["special_tokens"][name.c_str()];
  if (entry.is_null()) post["special_tokens"].fail("has no entry for \"" + name + "\", which the template names");
  const json_at ids = entry["ids"];
  if (!ids.value().is_array() || ids.value().size() != 1) ids.expected("one token id");
  return ids.at(0).id();
}

/// One item of a template: a special token's name or a sequence ("A", "B"), with its type id.
struct template_item {
  bool special = false;
  std::string id;
  std::int64_t type_id = 0;
  friend bool operator==(const template_item&, const template_item&) = default;
};

inline std::vector<template_item> read_template(const json_at& list) {
  if (!list.value().is_array()) list.expected("an array of template items");
  std::vector<template_item> out;
  for (std::size_t i = 0; i < list.value().size(); ++i) {
    const json_at item = list.at(i);
    const bool special = !item["SpecialToken"].is_null();
    const json_at body = special ? item["SpecialToken"] : item["Sequence"];
    if (body.is_null()) item.expected("{\"SpecialToken\": ...} or {\"Sequence\": ...}");
    const json_at type = body["type_id"];
    if (!type.value().is_number_integer()) type.expected("an integer type id");
    out.push_back({special, body["id"].string(), type.value().get<std::int64_t>()});
  }
  return out;
}

/// TemplateProcessing as one of the two layouts: BERT's "[CLS] $A [SEP]" / "[CLS] $A [SEP] $B:1 [SEP]:1" or
/// RoBERTa's "<s> $A </s>" / "<s> $A </s> </s> $B </s>" (XLM-RoBERTa's tokenizer.json), with any token names.
inline special_tokens read_template_processing(const json_at& post) {
  const auto single = read_template(post["single"]);
  const auto pair = read_template(post["pair"]);
  if (single.size() != 3 || !single[0].special || single[1] != template_item{false, "A", 0} || !single[2].special ||
      single[0].type_id != 0 || single[2].type_id != 0)
    post["single"].fail("is not \"[CLS] $A [SEP]\" with type ids 0, the only single-text template cputrain implements");
  const template_item cls = single[0], sep = single[2];
  const std::vector<template_item> bert{cls, {false, "A", 0}, sep, {false, "B", 1}, {true, sep.id, 1}};
  const std::vector<template_item> roberta{cls, {false, "A", 0}, sep, sep, {false, "B", 0}, sep};
  special_tokens out;
  if (pair == bert) {
    out.layout = special_layout::bert;
  } else if (pair == roberta) {
    out.layout = special_layout::roberta;
  } else {
    post["pair"].fail("is neither BERT's \"" + cls.id + " $A " + sep.id + " $B:1 " + sep.id + ":1\" nor RoBERTa's \"" +
                      cls.id + " $A " + sep.id + " " + sep.id + " $B " + sep.id +
                      "\", the pair templates cputrain implements");
  }
  out.cls = template_special_id(post, cls.id);
  out.sep = template_special_id(post, sep.id);
  return out;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// The layout and tokens of a post_processor: TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel (which
/// adds nothing), a Sequence of these, or none. `trim_offsets` receives RobertaProcessing's and ByteLevel's switch
/// (true when unset); TemplateProcessing, BertProcessing and no post-processor trim nothing.
CPUTRAIN_DECL special_tokens read_post_processor(const json_at& post, bool* trim_offsets = nullptr,
                                                bool* keeps_prefix_space = nullptr);

/// tokenizer.json's "truncation": {"max_length", "strategy" (LongestFirst, OnlyFirst, OnlySecond), "stride",
/// "direction" (Right, Left)}. A stride only matters for overflowing windows, which encode() does not make.
CPUTRAIN_DECL std::optional<truncation_options> read_truncation(const json_at& t);

#if CPUTRAIN_DEFINE_FUNCTIONS
/// A padding length: a file cannot make every encoding 2^20 tokens or longer (models take 512 to a few thousand).
inline std::size_t padding_length(const json_at& n) {
  if (!n.value().is_number_unsigned()) n.expected("a token count");
  const auto v = n.value().get<std::uint64_t>();
  if (v >= (1u << 20)) n.fail("is " + std::to_string(v) + "; cputrain pads to fewer than 1048576 tokens");
  return static_cast<std::size_t>(v);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// tokenizer.json's "padding": {"strategy" ("BatchLongest" or {"Fixed": n}), "direction", "pad_to_multiple_of",
/// "pad_id", "pad_type_id" (0: cputrain pads with type id 0), "pad_token"}; its pad_id goes to `pad_id`.
CPUTRAIN_DECL std::optional<padding_options> read_padding(const json_at& p, std::optional<std::int32_t>& pad_id);


}  // namespace detail


#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

CPUTRAIN_DECL nlohmann::json parse_tokenizer_json(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw text_error(file.string() + ": cannot open: " + std::strerror(errno));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw text_error(file.string() + ": cannot read: " + std::strerror(errno));
  try {
    return nlohmann::json::parse(text, json_nesting_limit<nlohmann::json>([&] {
      throw text_error(file.string() + ": not a tokenizer.json: the JSON nests deeper than " +
                       std::to_string(json_max_nesting) + " levels");
    }));
  } catch (const nlohmann::json::exception& e) {
    throw text_error(file.string() + ": not valid JSON: " + e.what());
  }
}

CPUTRAIN_DECL std::vector<added_token> read_added_tokens(const json_at& list) {
  std::vector<added_token> out;
  if (list.is_null()) return out;
  if (!list.value().is_array()) list.expected("an array of added tokens");
  for (std::size_t i = 0; i < list.value().size(); ++i) {
    const json_at t = list.at(i);
    added_token a;
    a.id = t["id"].id();
    a.content = t["content"].string();
    if (a.content.empty()) t["content"].fail("is empty");
    a.single_word = t["single_word"].boolean(false);
    a.lstrip = t["lstrip"].boolean(false);
    a.rstrip = t["rstrip"].boolean(false);
    a.normalized = t["normalized"].boolean(false);
    a.special = t["special"].boolean(false);
    out.push_back(std::move(a));
  }
  return out;
}

// A Sequence of post-processors: the offsets are trimmed if any of them trims, and at most one adds special tokens.
inline special_tokens read_post_processor_sequence(const json_at& post, bool* trim_offsets, bool* keeps_prefix_space) {
  const json_at list = post["processors"];
  if (!list.value().is_array()) list.expected("an array of post-processors");
  special_tokens out;
  bool trims = false, keeps = false;
  for (std::size_t i = 0; i < list.value().size(); ++i) {
    bool step_trims = false, step_keeps = false;
    special_tokens step = read_post_processor(list.at(i), &step_trims, &step_keeps);
    if (step_trims) keeps = step_keeps;
    trims = trims || step_trims;
    if (step.layout == special_layout::none) continue;
    if (out.layout != special_layout::none)
      list.at(i).fail("adds special tokens after another post-processor of the sequence did; cputrain implements one");
    out = step;
  }
  if (trim_offsets) *trim_offsets = trims;
  if (keeps_prefix_space) *keeps_prefix_space = keeps;
  return out;
}

CPUTRAIN_DECL special_tokens read_post_processor(const json_at& post, bool* trim_offsets, bool* keeps_prefix_space) {
  if (post.is_null()) {
    if (trim_offsets) *trim_offsets = false;
    return {};
  }
  const std::string type =
      post.type({"TemplateProcessing", "BertProcessing", "RobertaProcessing", "ByteLevel", "Sequence"});
  if (type == "Sequence") return read_post_processor_sequence(post, trim_offsets, keeps_prefix_space);
  // Only RobertaProcessing and ByteLevel trim; TemplateProcessing and BertProcessing leave the offsets as they are.
  const bool trims = type == "RobertaProcessing" || type == "ByteLevel";
  if (trim_offsets) *trim_offsets = trims && post["trim_offsets"].boolean(true);
  if (keeps_prefix_space) *keeps_prefix_space = trims && post["add_prefix_space"].boolean(true);
  if (type == "TemplateProcessing") return read_template_processing(post);
  special_tokens out;
  if (type == "ByteLevel") return out;
  const auto pair_id = [&](const char* key) {
    const json_at p = post[key];
    if (!p.value().is_array() || p.value().size() != 2) p.expected("[token, id]");
    return p.at(1).id();
  };
  out.layout = type == "BertProcessing" ? special_layout::bert : special_layout::roberta;
  out.cls = pair_id("cls");
  out.sep = pair_id("sep");
  return out;
}

CPUTRAIN_DECL std::optional<truncation_options> read_truncation(const json_at& t) {
  if (t.is_null()) return std::nullopt;
  truncation_options o;
  const json_at length = t["max_length"];
  if (!length.value().is_number_unsigned()) length.expected("a token count");
  o.max_length = length.value().get<std::size_t>();
  const std::string strategy = t["strategy"].optional_string().value_or("LongestFirst");
  if (strategy == "OnlyFirst") o.strategy = truncation_strategy::only_first;
  else if (strategy == "OnlySecond") o.strategy = truncation_strategy::only_second;
  else if (strategy != "LongestFirst") t["strategy"].expected("\"LongestFirst\", \"OnlyFirst\" or \"OnlySecond\"");
  const std::string direction = t["direction"].optional_string().value_or("Right");
  if (direction == "Left") o.side = text_side::left;
  else if (direction != "Right") t["direction"].expected("\"Right\" or \"Left\"");
  return o;
}

CPUTRAIN_DECL std::optional<padding_options> read_padding(const json_at& p, std::optional<std::int32_t>& pad_id) {
  if (p.is_null()) return std::nullopt;
  padding_options o;
  const json_at strategy = p["strategy"];
  if (strategy.value().is_object()) {
    o.length = padding_length(strategy["Fixed"]);
  } else if (!strategy.is_null() && strategy.string() != "BatchLongest") {
    strategy.expected("\"BatchLongest\" or {\"Fixed\": n}");
  }
  const std::string direction = p["direction"].optional_string().value_or("Right");
  if (direction == "Left") o.side = text_side::left;
  else if (direction != "Right") p["direction"].expected("\"Right\" or \"Left\"");
  if (const json_at multiple = p["pad_to_multiple_of"]; !multiple.is_null()) {
    o.multiple_of = padding_length(multiple);
  }
  if (const json_at type = p["pad_type_id"]; !type.is_null() && type.value() != 0)
    type.fail("is " + json_text_for_message(type.value()) + "; cputrain pads with type id 0");
  pad_id = p["pad_id"].id();
  return o;
}

}  // namespace detail

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
