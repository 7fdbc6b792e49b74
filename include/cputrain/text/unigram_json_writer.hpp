// cputrain::text::to_tokenizer_json for a Unigram tokenizer — XLM-RoBERTa's tokenizer written back as the
// tokenizer.json Hugging Face's tokenizers would save for it (the normalizers with SentencePiece's charsmap, Metaspace,
// the Unigram model with its scores as they were read, added tokens, the layout as a TemplateProcessing), so a model
// cputrain saves loads with AutoTokenizer and with load_tokenizer alike and encodes the same.
#pragma once

#include "cputrain/text/unigram_tokenizer.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/normalizer_json.hpp"
#include "cputrain/text/pre_tokenizer_json.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/tokenizer_json_writer.hpp"

namespace cputrain::text {

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
