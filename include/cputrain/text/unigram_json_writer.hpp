// cputrain::text::to_tokenizer_json for a Unigram tokenizer — XLM-RoBERTa's tokenizer written back as the
// tokenizer.json Hugging Face's tokenizers would save for it (the normalizers with SentencePiece's charsmap, Metaspace,
// the Unigram model with its scores as they were read, added tokens, the layout as a TemplateProcessing), so a model
// cputrain saves loads with AutoTokenizer and with load_tokenizer alike and encodes the same.
#pragma once

#include "cputrain/text/normalizer_steps.hpp"
#include "cputrain/text/pre_tokenizer_json.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/base64.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/tokenizer_json_writer.hpp"
#include "cputrain/text/unigram_tokenizer.hpp"

namespace cputrain::text {

// The writer's helpers are only needed where the functions are defined (core/separate_compilation.hpp).
#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

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

}  // namespace detail
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// The tokenizer.json of `t` with `specials`. Throws text_error when a special token's id has no token.
CPUTRAIN_DECL nlohmann::ordered_json to_tokenizer_json(const unigram_tokenizer& t, const special_tokens& specials);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL nlohmann::ordered_json to_tokenizer_json(const unigram_tokenizer& t, const special_tokens& specials) {
  const auto added = t.added_tokens();
  const auto token_of = [&](std::int32_t id) { return detail::special_token_text(t.token(id), id); };
  const bool wraps = specials.layout != special_layout::none;
  const std::string cls = wraps ? token_of(specials.cls) : "", sep = wraps ? token_of(specials.sep) : "";
  nlohmann::ordered_json vocab = nlohmann::ordered_json::array();
  for (const auto& [token, score] : t.model().vocab()) vocab.push_back({token, score});
  const auto unk = t.model().unk_id();
  const metaspace_options* metaspace = t.pre_tokenizer().metaspace();  // the decoder undoes it
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", detail::added_tokens_json(added)},
          {"normalizer", detail::normalizer_json(t.normalizer())},
          {"pre_tokenizer", detail::pre_tokenizer_json(t.pre_tokenizer())},
          {"post_processor", detail::template_json(specials, cls, sep)},
          {"decoder", metaspace ? detail::metaspace_json(*metaspace, "Metaspace") : nlohmann::ordered_json(nullptr)},
          {"model",
           {{"type", "Unigram"},
            {"unk_id", unk ? nlohmann::ordered_json(*unk) : nlohmann::ordered_json(nullptr)},
            {"vocab", std::move(vocab)},
            {"byte_fallback", t.model().byte_fallback()}}}};
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
