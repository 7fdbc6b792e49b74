// cputrain::data::token_classification_features — NER/POS examples (words with a label id each) as model inputs,
// as run_ner.py's tokenize_and_align_labels makes them: the words tokenized one by one (is_split_into_words),
// cut to max_seq_length, the first token of each word labelled with the word's label and the rest -100 (or, with
// label_all_tokens, the word's label through b_to_i_label); special tokens -100. The word ids are kept, so that
// predictions are paired with labels as run_ner's compute_metrics pairs them (positions labelled != -100).
#pragma once

#include "cputrain/nn/token_classification_batch.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/data/data_error.hpp"
#include "cputrain/nn/classification_loss.hpp"
#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/text/truncation.hpp"

namespace cputrain::data {

/// One sentence: its words and, for training and evaluation, one label id per word (label_to_id applied).
struct token_classification_example {
  std::string id;                    // names the example in messages; empty: its index does
  std::vector<std::string> words;
  std::vector<std::int32_t> labels;  // [words]; empty when there is nothing to score (prediction)
};

struct token_classification_options {
  std::size_t max_seq_length = 512;  // run_ner's default is the tokenizer's model_max_length
  bool label_all_tokens = false;     // label a word's later tokens too, B- labels turned into their I- label
  std::vector<std::int32_t> b_to_i_label;  // [num_labels]; needed with label_all_tokens (b_to_i_labels below)
  bool labels = true;                // align the examples' labels (they must have them)
};

/// How a batch is padded: pad_to_max_length, or to its longest feature (DataCollatorForTokenClassification).
enum class token_classification_padding { max_length, longest };

/// run_ner's b_to_i_label: for each label, the index of the label named with every "B-" replaced by "I-" (Python's
/// str.replace, so "B-SUB-X" looks for "I-SUI-X"), its first occurrence, when the label starts with "B-" and that
/// name is in the list; otherwise the label itself.
[[nodiscard]] CPUTRAIN_DECL std::vector<std::int32_t> b_to_i_labels(const std::vector<std::string>& label_list);

class token_classification_features {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return lengths_.size(); }
  [[nodiscard]] bool empty() const noexcept { return lengths_.empty(); }
  [[nodiscard]] std::size_t max_seq_length() const noexcept { return max_seq_length_; }
  [[nodiscard]] bool has_labels() const noexcept { return has_labels_; }
  [[nodiscard]] bool label_all_tokens() const noexcept { return label_all_tokens_; }
  /// Tokens of feature i (example i), special tokens included, padding not.
  [[nodiscard]] std::uint32_t length(std::size_t i) const { return lengths_.at(i); }

  [[nodiscard]] std::span<const std::int32_t> input_ids(std::size_t i) const { return row(ids_, i); }
  /// The word of each token, -1 for the special tokens (Hugging Face's word_ids(), None as -1).
  [[nodiscard]] std::span<const std::int32_t> word_ids(std::size_t i) const { return row(word_ids_, i); }
  /// The aligned labels, -100 where none counts; empty without labels.
  [[nodiscard]] std::span<const std::int32_t> labels(std::size_t i) const {
    return has_labels_ ? row(labels_, i) : std::span<const std::int32_t>{};
  }

  /// Whether the token at `position` of feature i carries a label (!= -100): the first token of its word, or with
  /// label_all_tokens any token of a word. The same with or without labels, so predictions need none.
  [[nodiscard]] bool labelled(std::size_t i, std::size_t position) const {
    const auto words = word_ids(i);
    if (position >= words.size() || words[position] < 0) return false;
    return label_all_tokens_ || position == 0 || words[position - 1] != words[position];
  }

  /// The features `indices` as a model batch, padded as asked (labels with -100); labels included when the
  /// features have them. Token type ids are 0: one sequence per feature.
  [[nodiscard]] nn::token_classification_batch batch(std::span<const std::size_t> indices,
                                                     token_classification_padding padding) const;

  /// compute_metrics' true_predictions for feature i: the argmax label (the first of equal maxima, a NaN wins as
  /// np.argmax has it) of each labelled position, in order. `logits` is the feature's row of the head's output,
  /// [seq, num_labels] with seq >= length(i).
  [[nodiscard]] std::vector<std::int32_t> word_predictions(std::size_t i, std::span<const float> logits,
                                                           std::size_t num_labels) const;
  /// compute_metrics' true_labels for feature i: the labels of the same positions. Throws usage_error without
  /// labels.
  [[nodiscard]] std::vector<std::int32_t> word_labels(std::size_t i) const;

  /// Keeps the first `n` features (run_ner's --max_*_samples; one feature per example).
  void truncate(std::size_t n) {
    if (n >= size()) return;
    lengths_.resize(n);
    starts_.resize(n + 1);
    ids_.resize(starts_.back());
    word_ids_.resize(starts_.back());
    if (has_labels_) labels_.resize(starts_.back());
  }

  /// Bytes held: per token an id, a word id and a label; per feature its start and length.
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return (ids_.capacity() + word_ids_.capacity() + labels_.capacity()) * sizeof(std::int32_t) +
           starts_.capacity() * sizeof(std::size_t) + lengths_.capacity() * sizeof(std::uint32_t);
  }

 private:
  friend token_classification_features make_token_classification_features(
      std::span<const token_classification_example>, const text::tokenizer&, const token_classification_options&);

  [[nodiscard]] std::span<const std::int32_t> row(const std::vector<std::int32_t>& v, std::size_t i) const {
    return std::span<const std::int32_t>(v).subspan(starts_.at(i), lengths_.at(i));
  }

  // Every feature's tokens end to end: feature i is [starts_[i], starts_[i] + lengths_[i]).
  std::vector<std::int32_t> ids_, word_ids_, labels_;
  std::vector<std::size_t> starts_{0};  // [size + 1]
  std::vector<std::uint32_t> lengths_;  // [size]
  std::size_t max_seq_length_ = 0;
  std::int32_t pad_id_ = 0;
  bool has_labels_ = false;
  bool label_all_tokens_ = false;
};

namespace detail {

// run_ner's loop over word_ids: -100 for a special token, the word's label at its first token, and at the
// others -100 or (label_all_tokens) b_to_i_label[label]. `labels` are the example's, one per word.
inline void align_labels(std::span<const std::int32_t> word_ids, std::span<const std::int32_t> labels,
                         const token_classification_options& options, std::int32_t* out) {
  std::int32_t previous = -1;
  for (const std::int32_t word : word_ids) {
    const auto label = word < 0 ? std::int32_t{0} : labels[static_cast<std::size_t>(word)];
    if (word < 0) *out++ = static_cast<std::int32_t>(nn::ignored_label);
    else if (word != previous) *out++ = label;
    else if (options.label_all_tokens) *out++ = options.b_to_i_label[static_cast<std::size_t>(label)];
    else *out++ = static_cast<std::int32_t>(nn::ignored_label);
    previous = word;
  }
}

// What run_ner would fail on later, or silently get wrong, refused before any tokenizing: no words, a label
// count other than the word count, a label outside [0, b_to_i_label.size()).
inline void check_token_classification_example(const token_classification_example& e, std::size_t index,
                                               const token_classification_options& options) {
  const std::string name = "example " + std::to_string(index) + (e.id.empty() ? "" : " (\"" + e.id + "\")");
  if (e.words.empty()) throw data_error(name + ": words: empty (nothing to tokenize or label)");
  if (!options.labels) return;
  if (e.labels.size() != e.words.size())
    throw data_error(name + ": labels: " + std::to_string(e.labels.size()) + " labels for " +
                     std::to_string(e.words.size()) + " words");
  for (std::size_t w = 0; w < e.labels.size(); ++w) {
    const std::int32_t label = e.labels[w];
    const bool outside = label < 0 || (!options.b_to_i_label.empty() &&
                                       static_cast<std::size_t>(label) >= options.b_to_i_label.size());
    if (outside)
      throw data_error(name + ": labels: word " + std::to_string(w) + " (\"" + e.words[w] + "\") has label id " +
                       std::to_string(label) + ", outside the " +
                       (options.b_to_i_label.empty() ? std::string("label ids (0 or more)")
                                                     : std::to_string(options.b_to_i_label.size()) + " labels"));
  }
}

}  // namespace detail

/// Features of every example, one each, in the tokenizer's layout ([CLS] words [SEP], <s> words </s>). Throws
/// usage_error for options run_ner cannot use (max_seq_length without room for a word's token, label_all_tokens
/// without b_to_i_label); data_error naming the example for an example without words or with labels that do not
/// fit (see check_token_classification_example); text_error when the tokenizer has no padding token or is
/// byte-level without add_prefix_space (RobertaTokenizerFast's requirement for words).
CPUTRAIN_DECL token_classification_features make_token_classification_features(
    std::span<const token_classification_example> examples, const text::tokenizer& tokenizer,
    const token_classification_options& options);

/// The same for BERT's WordPiece tokenizer.
CPUTRAIN_DECL token_classification_features make_token_classification_features(
    std::span<const token_classification_example> examples, const text::bert_tokenizer& tokenizer,
    const token_classification_options& options);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::vector<std::int32_t> b_to_i_labels(const std::vector<std::string>& label_list) {
  std::vector<std::int32_t> out(label_list.size());
  for (std::size_t i = 0; i < label_list.size(); ++i) {
    out[i] = static_cast<std::int32_t>(i);
    const std::string& label = label_list[i];
    if (!label.starts_with("B-")) continue;
    std::string inside;
    for (std::size_t pos = 0; pos < label.size();) {
      if (label.compare(pos, 2, "B-") == 0) {
        inside += "I-";
        pos += 2;
      } else {
        inside += label[pos++];
      }
    }
    const auto it = std::find(label_list.begin(), label_list.end(), inside);
    if (it != label_list.end()) out[i] = static_cast<std::int32_t>(it - label_list.begin());
  }
  return out;
}

CPUTRAIN_DECL nn::token_classification_batch token_classification_features::batch(
    std::span<const std::size_t> indices, token_classification_padding padding) const {
  nn::token_classification_batch b;
  b.batch = indices.size();
  b.seq = max_seq_length_;
  if (padding == token_classification_padding::longest) {
    b.seq = 0;
    for (const std::size_t i : indices) b.seq = std::max<std::size_t>(b.seq, length(i));
  }
  // Every array [batch, seq], padded on the right as the tokenizer's padding_side defaults to.
  b.input_ids.assign(b.tokens(), pad_id_);
  b.token_type_ids.assign(b.tokens(), 0);
  b.attention_mask.assign(b.tokens(), 0);
  if (has_labels_) b.labels.assign(b.tokens(), nn::ignored_label);
  for (std::size_t r = 0; r < indices.size(); ++r) {
    const auto ids = input_ids(indices[r]);
    std::copy(ids.begin(), ids.end(), b.input_ids.begin() + static_cast<std::ptrdiff_t>(r * b.seq));
    std::fill_n(b.attention_mask.begin() + static_cast<std::ptrdiff_t>(r * b.seq), ids.size(), 1);
    if (has_labels_) {
      const auto labels = this->labels(indices[r]);
      std::copy(labels.begin(), labels.end(), b.labels.begin() + static_cast<std::ptrdiff_t>(r * b.seq));
    }
  }
  return b;
}

CPUTRAIN_DECL std::vector<std::int32_t> token_classification_features::word_predictions(std::size_t i,
                                                                                        std::span<const float> logits,
                                                                                        std::size_t num_labels) const {
  const std::size_t n = length(i);
  if (num_labels == 0 || logits.size() < n * num_labels)
    throw usage_error("word_predictions: feature " + std::to_string(i) + " has " + std::to_string(n) +
                      " tokens, so its logits need at least " + std::to_string(n) + " x num_labels (" +
                      std::to_string(num_labels) + ") values; have " + std::to_string(logits.size()));
  std::vector<std::int32_t> out;
  for (std::size_t p = 0; p < n; ++p) {
    if (!labelled(i, p)) continue;
    const float* row = logits.data() + p * num_labels;
    std::size_t best = 0;
    for (std::size_t c = 0; c < num_labels && !std::isnan(row[best]); ++c)
      if (std::isnan(row[c]) || row[c] > row[best]) best = c;
    out.push_back(static_cast<std::int32_t>(best));
  }
  return out;
}

CPUTRAIN_DECL std::vector<std::int32_t> token_classification_features::word_labels(std::size_t i) const {
  if (!has_labels_) throw usage_error("word_labels: these features were made without labels");
  std::vector<std::int32_t> out;
  for (const std::int32_t label : labels(i))
    if (label != nn::ignored_label) out.push_back(label);
  return out;
}

CPUTRAIN_DECL token_classification_features make_token_classification_features(
    std::span<const token_classification_example> examples, const text::bert_tokenizer& tokenizer,
    const token_classification_options& options) {
  return make_token_classification_features(examples, text::tokenizer(tokenizer), options);
}

CPUTRAIN_DECL token_classification_features make_token_classification_features(
    std::span<const token_classification_example> examples, const text::tokenizer& tokenizer,
    const token_classification_options& options) {
  const std::size_t added = tokenizer.specials().added(false);
  if (options.max_seq_length < added + 1)
    throw usage_error("max_seq_length " + std::to_string(options.max_seq_length) + " leaves no room for a token " +
                      "between the " + std::to_string(added) + " special tokens");
  if (options.labels && options.label_all_tokens && options.b_to_i_label.empty())
    throw usage_error("label_all_tokens needs b_to_i_label (data::b_to_i_labels(label_list))");
  for (std::size_t l = 0; l < options.b_to_i_label.size(); ++l)
    if (options.b_to_i_label[l] < 0 || static_cast<std::size_t>(options.b_to_i_label[l]) >= options.b_to_i_label.size())
      throw usage_error("b_to_i_label[" + std::to_string(l) + "] = " + std::to_string(options.b_to_i_label[l]) +
                        " is not a label id of the " + std::to_string(options.b_to_i_label.size()) + " labels");
  token_classification_features result;
  result.max_seq_length_ = options.max_seq_length;
  result.pad_id_ = tokenizer.specials().pad_id("token classification batches");
  result.has_labels_ = options.labels;
  result.label_all_tokens_ = options.label_all_tokens;
  for (std::size_t e = 0; e < examples.size(); ++e) detail::check_token_classification_example(examples[e], e, options);
  (void)tokenizer.encode_words(std::span<const std::string>{});  // a byte-level one without add_prefix_space throws here

  // Tokenized in parallel, one encoding per example; joined in example order.
  const text::truncation_options truncation{options.max_seq_length, text::truncation_strategy::longest_first,
                                            text::text_side::right};
  std::vector<text::encoding> encodings(examples.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, examples.size(), 64), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t e = r.begin(); e < r.end(); ++e) encodings[e] = tokenizer.encode_words(examples[e].words, truncation);
  });
  std::size_t tokens = 0;
  for (const auto& enc : encodings) tokens += enc.size();
  result.ids_.reserve(tokens);
  result.word_ids_.reserve(tokens);
  result.labels_.resize(options.labels ? tokens : 0);
  result.starts_.reserve(examples.size() + 1);
  result.lengths_.reserve(examples.size());
  for (std::size_t e = 0; e < examples.size(); ++e) {
    text::encoding& enc = encodings[e];
    const std::size_t start = result.ids_.size();
    if (options.labels) detail::align_labels(enc.word_ids, examples[e].labels, options, result.labels_.data() + start);
    result.ids_.insert(result.ids_.end(), enc.ids.begin(), enc.ids.end());
    result.word_ids_.insert(result.word_ids_.end(), enc.word_ids.begin(), enc.word_ids.end());
    result.lengths_.push_back(static_cast<std::uint32_t>(enc.size()));
    result.starts_.push_back(result.ids_.size());
    enc = text::encoding{};
  }
  return result;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
