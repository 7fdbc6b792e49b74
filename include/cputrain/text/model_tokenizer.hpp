// cputrain::text::model_tokenizer — a tokenizer.json's model (Unigram, WordPiece) behind tokenizer_pipeline.hpp's
// added tokens, normalizers and pre-tokenizers: what unigram_tokenizer and wordpiece_tokenizer are. The model gives
// each word's tokens (tokenize), its tokens by id and by text (token, find) and its size. Thread-safe: encode() is
// const.
#pragma once

#include "cputrain/text/tokenizer_pipeline.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/text/added_tokens.hpp"
#include "cputrain/text/normalizer_steps.hpp"
#include "cputrain/text/pre_tokenizer_steps.hpp"
#include "cputrain/text/token_sequence.hpp"

namespace cputrain::text {

template <class Model>
class model_tokenizer {
 public:
  model_tokenizer(std::shared_ptr<const Model> model, normalizer_chain normalizer, pre_tokenizer_chain pre_tokenizer,
                  const std::vector<added_token>& added)
      : model_(std::move(model)), pipeline_(std::move(normalizer), std::move(pre_tokenizer), added) {}

  [[nodiscard]] const Model& model() const noexcept { return *model_; }
  [[nodiscard]] const normalizer_chain& normalizer() const noexcept { return pipeline_.normalizer(); }
  [[nodiscard]] const pre_tokenizer_chain& pre_tokenizer() const noexcept { return pipeline_.pre_tokenizer(); }
  /// Every added token, those matched in the raw text first.
  [[nodiscard]] std::vector<added_token> added_tokens() const { return pipeline_.added().all(); }

  /// The id of `token`: an added token's, else the model's.
  [[nodiscard]] std::optional<std::int32_t> find(std::string_view token) const {
    if (const auto id = pipeline_.added().find(token)) return id;
    return model_->find(token);
  }
  /// The token `id` stands for: an added token's content, else the model's token.
  [[nodiscard]] std::optional<std::string> token(std::int32_t id) const {
    if (auto content = pipeline_.added().content(id)) return content;
    if (id >= 0 && static_cast<std::size_t>(id) < model_->size()) return model_->token(id);
    return std::nullopt;
  }
  /// One past the largest id the model or an added token gives (Hugging Face's len(tokenizer)).
  [[nodiscard]] std::size_t id_count() const noexcept { return pipeline_.added().id_count(model_->size()); }

  /// Appends the tokens of `text` (no special tokens added) to `out`. Throws text_error for invalid UTF-8 or a text
  /// of 4 GiB or more.
  void encode(std::string_view text, token_sequence& out) const { pipeline_.encode(text, *model_, out); }

  token_sequence encode(std::string_view text) const {
    token_sequence out;
    encode(text, out);
    return out;
  }

 private:
  std::shared_ptr<const Model> model_;
  tokenizer_pipeline pipeline_;
};

}  // namespace cputrain::text
