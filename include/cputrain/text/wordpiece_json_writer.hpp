// cputrain::text::to_tokenizer_json for a WordPiece tokenizer read from a tokenizer.json that BERT's one-pass path
// does not take: written back as Hugging Face's tokenizers would save it (its normalizers, pre-tokenizers, the
// WordPiece model with its prefix, unknown token and length limit, the WordPiece decoder, added tokens, the layout as
// a TemplateProcessing), so that a model cputrain saves loads with AutoTokenizer and with load_tokenizer alike and
// encodes the same.
#pragma once

#include "cputrain/text/wordpiece_tokenizer.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/normalizer_json.hpp"
#include "cputrain/text/pre_tokenizer_json.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/tokenizer_json_writer.hpp"

namespace cputrain::text {

/// The tokenizer.json of `t` with `specials`. Throws text_error when a special token's id has no token.
CPUTRAIN_DECL nlohmann::ordered_json to_tokenizer_json(const wordpiece_tokenizer& t, const special_tokens& specials);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL nlohmann::ordered_json to_tokenizer_json(const wordpiece_tokenizer& t, const special_tokens& specials) {
  const auto token_of = [&](std::int32_t id) { return detail::special_token_text(t.token(id), id); };
  const bool wraps = specials.layout != special_layout::none;
  const std::string cls = wraps ? token_of(specials.cls) : "", sep = wraps ? token_of(specials.sep) : "";
  const wordpiece_model& model = t.model();
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  for (std::size_t id = 0; id < model.size(); ++id) vocab[model.tokens()[id]] = id;
  const wordpiece_options& o = model.options();
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", detail::added_tokens_json(t.added_tokens())},
          {"normalizer", detail::normalizer_json(t.normalizer())},
          {"pre_tokenizer", detail::pre_tokenizer_json(t.pre_tokenizer())},
          {"post_processor", detail::template_json(specials, cls, sep)},
          {"decoder", {{"type", "WordPiece"}, {"prefix", o.continuing_subword_prefix}, {"cleanup", true}}},
          {"model",
           {{"type", "WordPiece"},
            {"unk_token", o.unk_token},
            {"continuing_subword_prefix", o.continuing_subword_prefix},
            {"max_input_chars_per_word", o.max_input_chars_per_word},
            {"vocab", std::move(vocab)}}}};
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
