// cputrain::text::tokenizer — one tokenizer type for every model family: the model's pipeline (WordPiece,
// byte-level BPE, or SentencePiece Unigram) with its special tokens, encoding a text, a pair, or words, as Hugging
// Face's fast tokenizers do (ids, type ids, offsets, special-tokens mask, sequence and word ids, attention mask),
// truncated and padded as there when asked. Programs never ask which family it is; load_tokenizer.hpp builds it
// from a model directory as AutoTokenizer does. Cheap to copy (the pipeline is shared and immutable); thread-safe.
#pragma once

#include "cputrain/text/padding.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/byte_level_bpe.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/token_sequence.hpp"
#include "cputrain/text/truncation.hpp"
#include "cputrain/text/unigram_tokenizer.hpp"
#include "cputrain/text/wordpiece_tokenizer.hpp"

namespace cputrain::text {

/// What a tokenizer.json asks of every encode (its "truncation" and "padding"). Hugging Face's tokenizers library
/// applies them; transformers replaces them with each call's arguments, and so does cputrain: they are here for
/// programs to read, not applied by encode().
struct tokenizer_defaults {
  std::optional<truncation_options> truncation;
  std::optional<padding_options> padding;
};

class tokenizer {
 public:
  using pipeline = std::variant<bert_tokenizer, byte_level_bpe_tokenizer, unigram_tokenizer, wordpiece_tokenizer>;

  /// BERT's WordPiece with its [CLS] A [SEP] (B [SEP]) layout and its vocabulary's special tokens.
  explicit tokenizer(bert_tokenizer wordpiece);

  /// A pipeline with the layout and special tokens its files name. Throws text_error when the layout needs cls and
  /// sep ids the pipeline does not have.
  tokenizer(pipeline p, special_tokens specials);

  [[nodiscard]] const pipeline& get() const noexcept { return *pipeline_; }
  [[nodiscard]] const special_tokens& specials() const noexcept { return specials_; }
  [[nodiscard]] const tokenizer_defaults& defaults() const noexcept { return defaults_; }

  /// The same pipeline with other special tokens (tokenizer_config.json's), the defaults kept.
  [[nodiscard]] tokenizer with_specials(const special_tokens& specials) const {
    tokenizer out(*this);
    out.specials_ = specials;
    return out;
  }
  [[nodiscard]] tokenizer with_defaults(tokenizer_defaults defaults) const {
    tokenizer out(*this);
    out.defaults_ = std::move(defaults);
    return out;
  }
  /// from_pretrained's add_prefix_space keyword, over what the tokenizer's files say: a byte-level BPE tokenizer
  /// (RoBERTa's, GPT-2's) then puts a space before each text, and before each word of text split into words, as
  /// RobertaTokenizerFast sets it on its pre-tokenizer and post-processor. Any other tokenizer is returned as it is.
  [[nodiscard]] tokenizer with_add_prefix_space(bool prefix) const;

  /// "WordPiece", "byte-level BPE" or "Unigram", for messages.
  [[nodiscard]] std::string_view family() const noexcept {
    constexpr std::string_view names[] = {"WordPiece", "byte-level BPE", "Unigram", "WordPiece"};
    return names[pipeline_->index()];
  }

  /// Appends the tokens of `text`, no special tokens added, to `out`. Throws text_error for invalid UTF-8.
  void encode(std::string_view text, token_sequence& out) const;

  /// One text with the special tokens (unless add_special is false).
  [[nodiscard]] encoding encode(std::string_view text, bool add_special = true) const;

  /// A pair of texts (a question and its context; two sentences) with the special tokens.
  [[nodiscard]] encoding encode_pair(std::string_view first, std::string_view second, bool add_special = true) const;

  /// One text cut to `truncation.max_length` tokens with the special tokens, as Hugging Face's truncation=True.
  [[nodiscard]] encoding encode(std::string_view text, const truncation_options& truncation,
                                bool add_special = true) const;
  /// A pair cut as `truncation` says (run_glue's longest_first by default).
  [[nodiscard]] encoding encode_pair(std::string_view first, std::string_view second,
                                     const truncation_options& truncation, bool add_special = true) const;

  /// Pads `batch` with this tokenizer's padding token (attention mask 0). Throws text_error when it has none.
  void pad(std::span<encoding> batch, const padding_options& padding) const {
    pad_batch(batch, padding, specials_.pad_id("padding"));
  }

  /// Text already split into words (Hugging Face's is_split_into_words=True, as run_ner.py calls it): each word
  /// tokenized alone, its tokens' word id the word's index and their offsets within the word. A byte-level tokenizer
  /// must add a prefix space to each word (add_prefix_space), as RobertaTokenizerFast requires.
  [[nodiscard]] encoding encode_words(std::span<const std::string> words, bool add_special = true) const;
  /// Words cut to `truncation.max_length` tokens with the special tokens (run_ner's truncation=True).
  [[nodiscard]] encoding encode_words(std::span<const std::string> words, const truncation_options& truncation,
                                      bool add_special = true) const;
  [[nodiscard]] encoding encode_words_pair(std::span<const std::string> first, std::span<const std::string> second,
                                           bool add_special = true) const;
  [[nodiscard]] encoding encode_words_pair(std::span<const std::string> first, std::span<const std::string> second,
                                           const truncation_options& truncation, bool add_special = true) const;

  /// The id of `token` in the vocabulary or among the added tokens.
  [[nodiscard]] std::optional<std::int32_t> token_to_id(std::string_view token) const;

  /// The token an id stands for: an added token's content, else the model's token; nullopt for an unused id.
  [[nodiscard]] std::optional<std::string> id_to_token(std::int32_t id) const;

  /// One past the largest id the tokenizer can produce (Hugging Face's len(tokenizer)): the model's vocab_size
  /// must be at least this.
  [[nodiscard]] std::size_t id_count() const noexcept;

 private:
  // Tokens the texts may keep: max_length less the special tokens. A max_length below their count is refused
  // (Hugging Face's subtraction wraps around there and cuts nothing).
  std::size_t budget(const truncation_options& t, bool pair, bool add_special) const {
    const std::size_t added = add_special ? specials_.added(pair) : 0;
    if (t.max_length < added)
      throw text_error("truncation: max_length " + std::to_string(t.max_length) + " leaves no room for the " +
                       std::to_string(added) + " special tokens of " + (pair ? "a pair" : "one text"));
    return t.max_length - added;
  }

  void words_into(std::span<const std::string> words, token_sequence& out) const {
    if (const auto* bpe = std::get_if<byte_level_bpe_tokenizer>(pipeline_.get()); bpe && !bpe->options().add_prefix_space)
      throw text_error("text split into words: a byte-level tokenizer needs add_prefix_space (set it in "
                       "tokenizer_config.json), as RobertaTokenizerFast does for pre-tokenized input");
    for (std::size_t w = 0; w < words.size(); ++w) {
      const std::size_t first = out.size();
      encode(words[w], out);
      std::fill(out.words.begin() + static_cast<std::ptrdiff_t>(first), out.words.end(), static_cast<std::uint32_t>(w));
    }
  }

  std::shared_ptr<const pipeline> pipeline_;
  special_tokens specials_;
  tokenizer_defaults defaults_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL tokenizer::tokenizer(bert_tokenizer wordpiece)
    : tokenizer(pipeline(std::move(wordpiece)), special_tokens{}) {
  const auto& vocab = std::get<bert_tokenizer>(*pipeline_).vocab();
  specials_ = {special_layout::bert, vocab.cls_id(), vocab.sep_id(), vocab.pad_id(), vocab.mask_id(), vocab.unk_id()};
}

CPUTRAIN_DECL tokenizer::tokenizer(pipeline p, special_tokens specials)
    : pipeline_(std::make_shared<const pipeline>(std::move(p))), specials_(specials) {
  if (specials_.layout != special_layout::none) {
    for (const std::int32_t id : {specials_.cls, specials_.sep})
      if (id < 0 || static_cast<std::size_t>(id) >= id_count())
        throw text_error("tokenizer: special token id " + std::to_string(id) + " is outside the vocabulary of " +
                         std::to_string(id_count()));
  }
}

CPUTRAIN_DECL tokenizer tokenizer::with_add_prefix_space(bool prefix) const {
  const auto* bpe = std::get_if<byte_level_bpe_tokenizer>(pipeline_.get());
  if (bpe == nullptr || (bpe->options().add_prefix_space == prefix && bpe->options().keeps_prefix_space() == prefix))
    return *this;
  byte_level_options options = bpe->options();
  options.add_prefix_space = prefix;  // on the pre-tokenizer and the post-processor, as RobertaTokenizerFast sets it
  options.trim_keeps_prefix_space = prefix;
  tokenizer out(*this);
  out.pipeline_ = std::make_shared<const pipeline>(
      byte_level_bpe_tokenizer(bpe->model(), bpe->added_tokens(), options, bpe->normalizer()));
  return out;
}

CPUTRAIN_DECL void tokenizer::encode(std::string_view text, token_sequence& out) const {
  std::visit([&](const auto& p) { p.encode(text, out); }, *pipeline_);
}

CPUTRAIN_DECL encoding tokenizer::encode(std::string_view text, bool add_special) const {
  token_sequence tokens;
  encode(text, tokens);
  return wrap(specials_, tokens, nullptr, add_special);
}

CPUTRAIN_DECL encoding tokenizer::encode_pair(std::string_view first, std::string_view second, bool add_special) const {
  token_sequence a, b;
  encode(first, a);
  encode(second, b);
  return wrap(specials_, a, &b, add_special);
}

CPUTRAIN_DECL encoding tokenizer::encode(std::string_view text, const truncation_options& truncation,
                                        bool add_special) const {
  token_sequence tokens;
  encode(text, tokens);
  truncate(tokens, nullptr, budget(truncation, false, add_special), truncation);
  return wrap(specials_, tokens, nullptr, add_special);
}

CPUTRAIN_DECL encoding tokenizer::encode_pair(std::string_view first, std::string_view second,
                                             const truncation_options& truncation, bool add_special) const {
  token_sequence a, b;
  encode(first, a);
  encode(second, b);
  truncate(a, &b, budget(truncation, true, add_special), truncation);
  return wrap(specials_, a, &b, add_special);
}

CPUTRAIN_DECL encoding tokenizer::encode_words(std::span<const std::string> words, bool add_special) const {
  token_sequence tokens;
  words_into(words, tokens);
  return wrap(specials_, tokens, nullptr, add_special);
}

CPUTRAIN_DECL encoding tokenizer::encode_words(std::span<const std::string> words, const truncation_options& truncation,
                                              bool add_special) const {
  token_sequence tokens;
  words_into(words, tokens);
  truncate(tokens, nullptr, budget(truncation, false, add_special), truncation);
  return wrap(specials_, tokens, nullptr, add_special);
}

CPUTRAIN_DECL encoding tokenizer::encode_words_pair(std::span<const std::string> first,
                                                   std::span<const std::string> second, bool add_special) const {
  token_sequence a, b;
  words_into(first, a);
  words_into(second, b);
  return wrap(specials_, a, &b, add_special);
}

CPUTRAIN_DECL encoding tokenizer::encode_words_pair(std::span<const std::string> first,
                                                   std::span<const std::string> second,
                                                   const truncation_options& truncation, bool add_special) const {
  token_sequence a, b;
  words_into(first, a);
  words_into(second, b);
  truncate(a, &b, budget(truncation, true, add_special), truncation);
  return wrap(specials_, a, &b, add_special);
}

CPUTRAIN_DECL std::optional<std::int32_t> tokenizer::token_to_id(std::string_view token) const {
  if (const auto* wordpiece = std::get_if<bert_tokenizer>(pipeline_.get())) return wordpiece->vocab().find(token);
  return std::visit([&](const auto& p) -> std::optional<std::int32_t> {
    if constexpr (std::is_same_v<std::decay_t<decltype(p)>, bert_tokenizer>) return std::nullopt;
    else return p.find(token);
  }, *pipeline_);
}

CPUTRAIN_DECL std::optional<std::string> tokenizer::id_to_token(std::int32_t id) const {
  if (id < 0) return std::nullopt;
  if (const auto* wordpiece = std::get_if<bert_tokenizer>(pipeline_.get())) {
    if (static_cast<std::size_t>(id) >= wordpiece->vocab().size()) return std::nullopt;
    return wordpiece->vocab().token(id);
  }
  return std::visit([&](const auto& p) -> std::optional<std::string> {
    if constexpr (std::is_same_v<std::decay_t<decltype(p)>, bert_tokenizer>) return std::nullopt;  // handled above
    else return p.token(id);
  }, *pipeline_);
}

CPUTRAIN_DECL std::size_t tokenizer::id_count() const noexcept {
  return std::visit([](const auto& p) -> std::size_t {
    if constexpr (std::is_same_v<std::decay_t<decltype(p)>, bert_tokenizer>) return p.vocab().size();
    else return p.id_count();
  }, *pipeline_);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
