// cputrain::text::to_tokenizer_json — a byte-level BPE tokenizer written back as the tokenizer.json Hugging Face's
// tokenizers would save for it (ByteLevel pre-tokenizer, BPE model with its merges in rank order, added tokens, the
// layout's post-processor), so a model cputrain saves loads with AutoTokenizer and with load_tokenizer alike; and
// the sections every family's writer shares (added tokens, the layout as TemplateProcessing).
#pragma once

#include "cputrain/text/byte_level_bpe.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/normalizer_json.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/text_error.hpp"

namespace cputrain::text {

// The writer's helpers are only needed where the functions are defined (core/separate_compilation.hpp).
#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

inline nlohmann::ordered_json bpe_model_json(const bpe_model& model) {
  std::vector<std::pair<std::string, std::int32_t>> by_id(model.vocab().begin(), model.vocab().end());
  std::sort(by_id.begin(), by_id.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (const auto& [token, id] : by_id) vocab[token] = id;
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  for (const auto& [a, b] : model.merges()) merges.push_back({a, b});
  const bpe_options& o = model.options();
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", o.unk_token ? nlohmann::ordered_json(*o.unk_token) : nlohmann::ordered_json(nullptr)},
          {"continuing_subword_prefix", o.continuing_subword_prefix.empty()
                                            ? nlohmann::ordered_json(nullptr)
                                            : nlohmann::ordered_json(o.continuing_subword_prefix)},
          {"end_of_word_suffix", o.end_of_word_suffix.empty() ? nlohmann::ordered_json(nullptr)
                                                              : nlohmann::ordered_json(o.end_of_word_suffix)},
          {"fuse_unk", o.fuse_unk},
          {"byte_fallback", o.byte_fallback},
          {"ignore_merges", o.ignore_merges},
          {"vocab", std::move(vocab)},
          {"merges", std::move(merges)}};
}

inline nlohmann::ordered_json post_processor_json(const byte_level_bpe_tokenizer& t, const special_tokens& specials,
                                                  const std::string& cls, const std::string& sep) {
  const byte_level_options& o = t.options();
  switch (specials.layout) {
    case special_layout::none:
      return {{"type", "ByteLevel"}, {"add_prefix_space", o.keeps_prefix_space()}, {"trim_offsets", o.trim_offsets},
              {"use_regex", o.use_regex}};
    case special_layout::roberta:
      return {{"type", "RobertaProcessing"}, {"sep", {sep, specials.sep}}, {"cls", {cls, specials.cls}},
              {"trim_offsets", o.trim_offsets}, {"add_prefix_space", o.keeps_prefix_space()}};
    case special_layout::bert:
      return {{"type", "BertProcessing"}, {"sep", {sep, specials.sep}}, {"cls", {cls, specials.cls}}};
  }
  return nullptr;
}

// The layout as TemplateProcessing, with the token names `cls` and `sep`.
inline nlohmann::ordered_json template_json(const special_tokens& s, const std::string& cls, const std::string& sep) {
  if (s.layout == special_layout::none) return nullptr;
  const auto special = [](const std::string& name, int type) {
    return nlohmann::ordered_json{{"SpecialToken", {{"id", name}, {"type_id", type}}}};
  };
  const auto sequence = [](const char* name, int type) {
    return nlohmann::ordered_json{{"Sequence", {{"id", name}, {"type_id", type}}}};
  };
  const bool bert = s.layout == special_layout::bert;
  nlohmann::ordered_json single = {special(cls, 0), sequence("A", 0), special(sep, 0)};
  nlohmann::ordered_json pair = single;
  if (!bert) pair.push_back(special(sep, 0));
  pair.push_back(sequence("B", bert ? 1 : 0));
  pair.push_back(special(sep, bert ? 1 : 0));
  nlohmann::ordered_json tokens;
  tokens[cls] = {{"id", cls}, {"ids", {s.cls}}, {"tokens", {cls}}};
  tokens[sep] = {{"id", sep}, {"ids", {s.sep}}, {"tokens", {sep}}};
  return {{"type", "TemplateProcessing"}, {"single", std::move(single)}, {"pair", std::move(pair)},
          {"special_tokens", std::move(tokens)}};
}

/// The text of a special token the layout names; text_error when the id has none.
inline std::string special_token_text(std::optional<std::string> token, std::int32_t id) {
  if (!token) throw text_error("tokenizer.json: no token has the special id " + std::to_string(id));
  return std::move(*token);
}

inline nlohmann::ordered_json added_tokens_json(const std::vector<added_token>& tokens) {
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  for (const auto& a : tokens)
    added.push_back({{"id", a.id}, {"content", a.content}, {"single_word", a.single_word}, {"lstrip", a.lstrip},
                     {"rstrip", a.rstrip}, {"normalized", a.normalized}, {"special", a.special}});
  return added;
}

}  // namespace detail
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// The tokenizer.json of `t` with `specials`. Throws text_error when a special token's id has no token.
CPUTRAIN_DECL nlohmann::ordered_json to_tokenizer_json(const byte_level_bpe_tokenizer& t,
                                                       const special_tokens& specials);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL nlohmann::ordered_json to_tokenizer_json(const byte_level_bpe_tokenizer& t,
                                                       const special_tokens& specials) {
  const auto token_of = [&](std::int32_t id) { return detail::special_token_text(t.token(id), id); };
  const bool wraps = specials.layout != special_layout::none;
  const std::string cls = wraps ? token_of(specials.cls) : "", sep = wraps ? token_of(specials.sep) : "";
  const byte_level_options& o = t.options();
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", detail::added_tokens_json(t.added_tokens())},
          {"normalizer", detail::normalizer_json(t.normalizer())},
          {"pre_tokenizer",
           {{"type", "ByteLevel"}, {"add_prefix_space", o.add_prefix_space}, {"trim_offsets", o.trim_offsets},
            {"use_regex", o.use_regex}}},
          {"post_processor", detail::post_processor_json(t, specials, cls, sep)},
          {"decoder",
           {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
          {"model", detail::bpe_model_json(t.model())}};
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
