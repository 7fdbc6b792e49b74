// cputrain::data::classification_features — run_glue.py's preprocess_function in C++: each example's text (or
// text pair) tokenized with the special tokens and truncated longest-first to max_seq_length, with its label (a
// class id, a regression value, or num_labels multi-label targets), and batches of them for the sequence
// classification head, padded to the batch's longest or to max_seq_length.
#pragma once

#include "cputrain/nn/sequence_classification_batch.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/data/data_error.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/text/truncation.hpp"

namespace cputrain::data {

/// What an example's label is.
enum class classification_labels {
  none,        // prediction: no labels
  class_id,    // one class id per example (cross-entropy)
  values,      // values_per_example floats per example: a regression target or multi-label targets
};

/// The examples to featurize: the texts (second empty for single texts) and the labels the kind says.
struct classification_examples {
  std::vector<std::string> first;
  std::vector<std::string> second;  // empty, or one per example
  classification_labels label_kind = classification_labels::none;
  std::vector<std::int64_t> class_ids;  // [examples] for class_id
  std::vector<float> values;            // [examples, values_per_example] for values
  std::size_t values_per_example = 1;

  [[nodiscard]] std::size_t size() const noexcept { return first.size(); }
};

class classification_features {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return lengths_.size(); }
  [[nodiscard]] bool has_labels() const noexcept { return labels_ != classification_labels::none; }
  [[nodiscard]] classification_labels label_kind() const noexcept { return labels_; }
  [[nodiscard]] std::size_t max_seq_length() const noexcept { return max_seq_length_; }
  [[nodiscard]] std::size_t values_per_example() const noexcept { return values_per_example_; }
  [[nodiscard]] std::uint32_t length(std::size_t i) const { return lengths_.at(i); }
  [[nodiscard]] std::span<const std::int32_t> input_ids(std::size_t i) const {
    return std::span(ids_).subspan(starts_.at(i), lengths_[i]);
  }
  [[nodiscard]] std::span<const std::int64_t> class_ids() const noexcept { return class_ids_; }
  [[nodiscard]] std::span<const float> values() const noexcept { return values_; }

  /// The examples `indices` as a batch, padded to their longest (or to max_seq_length with pad_to_max_length).
  [[nodiscard]] nn::sequence_classification_batch batch(std::span<const std::size_t> indices,
                                                        bool pad_to_max_length) const;

  /// Keeps the first `n` examples (--max_train_samples).
  void truncate(std::size_t n) {
    if (n >= size()) return;
    lengths_.resize(n);
    starts_.resize(n);
    const std::size_t tokens = n == 0 ? 0 : starts_.back() + lengths_.back();
    ids_.resize(tokens);
    type_ids_.resize(tokens);
    if (labels_ == classification_labels::class_id) class_ids_.resize(n);
    if (labels_ == classification_labels::values) values_.resize(n * values_per_example_);
  }

  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return (ids_.capacity() + type_ids_.capacity() + lengths_.capacity()) * sizeof(std::int32_t) +
           starts_.capacity() * sizeof(std::size_t) + class_ids_.capacity() * sizeof(std::int64_t) +
           values_.capacity() * sizeof(float);
  }

 private:
  friend classification_features make_classification_features(const classification_examples&, const text::tokenizer&,
                                                               std::size_t, const std::string&);

  std::vector<std::int32_t> ids_, type_ids_;  // every example's tokens end to end
  std::vector<std::size_t> starts_;           // [examples] where each begins in ids_
  std::vector<std::uint32_t> lengths_;        // [examples]
  classification_labels labels_ = classification_labels::none;
  std::vector<std::int64_t> class_ids_;
  std::vector<float> values_;
  std::size_t values_per_example_ = 1;
  std::size_t max_seq_length_ = 0;
  std::int32_t pad_id_ = 0;
};

/// Tokenizes `examples` as run_glue.py does (truncation=True: longest first, to max_seq_length with the special
/// tokens), in parallel. data_error naming `source` and the example for an empty text or labels that do not fit.
[[nodiscard]] CPUTRAIN_DECL classification_features make_classification_features(const classification_examples& examples,
                                                                                  const text::tokenizer& tokenizer,
                                                                                  std::size_t max_seq_length,
                                                                                  const std::string& source);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL nn::sequence_classification_batch classification_features::batch(std::span<const std::size_t> indices,
                                                                              bool pad_to_max_length) const {
  nn::sequence_classification_batch b;
  b.batch = indices.size();
  b.seq = pad_to_max_length ? max_seq_length_ : 0;
  for (const std::size_t i : indices) b.seq = std::max<std::size_t>(b.seq, lengths_.at(i));
  b.input_ids.assign(b.tokens(), pad_id_);
  b.token_type_ids.assign(b.tokens(), 0);
  b.attention_mask.assign(b.tokens(), 0);
  for (std::size_t row = 0; row < indices.size(); ++row) {
    const std::size_t i = indices[row], at = row * b.seq;
    std::copy_n(ids_.begin() + static_cast<std::ptrdiff_t>(starts_[i]), lengths_[i], b.input_ids.begin() + static_cast<std::ptrdiff_t>(at));
    std::copy_n(type_ids_.begin() + static_cast<std::ptrdiff_t>(starts_[i]), lengths_[i],
                b.token_type_ids.begin() + static_cast<std::ptrdiff_t>(at));
    std::fill_n(b.attention_mask.begin() + static_cast<std::ptrdiff_t>(at), lengths_[i], 1);
    if (labels_ == classification_labels::class_id) b.labels.push_back(class_ids_[i]);
    if (labels_ == classification_labels::values) {
      const auto first = values_.begin() + static_cast<std::ptrdiff_t>(i * values_per_example_);
      b.label_values.insert(b.label_values.end(), first, first + static_cast<std::ptrdiff_t>(values_per_example_));
    }
  }
  return b;
}

CPUTRAIN_DECL classification_features make_classification_features(const classification_examples& examples,
                                                                   const text::tokenizer& tokenizer,
                                                                   std::size_t max_seq_length,
                                                                   const std::string& source) {
  const std::size_t n = examples.size();
  const bool pairs = !examples.second.empty();
  if (pairs && examples.second.size() != n)
    throw data_error(source + ": " + std::to_string(examples.second.size()) + " second texts for " + std::to_string(n) + " examples");
  if (examples.label_kind == classification_labels::class_id && examples.class_ids.size() != n)
    throw data_error(source + ": " + std::to_string(examples.class_ids.size()) + " labels for " + std::to_string(n) + " examples");
  if (examples.label_kind == classification_labels::values && examples.values.size() != n * examples.values_per_example)
    throw data_error(source + ": " + std::to_string(examples.values.size()) + " label values for " + std::to_string(n) +
                     " examples of " + std::to_string(examples.values_per_example));
  std::vector<text::encoding> encoded(n);
  const text::truncation_options truncation{max_seq_length, text::truncation_strategy::longest_first, text::text_side::right};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 256), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) {
      encoded[i] = pairs ? tokenizer.encode_pair(examples.first[i], examples.second[i], truncation)
                         : tokenizer.encode(examples.first[i], truncation);
    }
  });
  classification_features f;
  f.max_seq_length_ = max_seq_length;
  f.pad_id_ = tokenizer.specials().pad.value_or(0);
  f.starts_.reserve(n);
  f.lengths_.reserve(n);
  for (const text::encoding& e : encoded) {
    f.starts_.push_back(f.ids_.size());
    f.lengths_.push_back(static_cast<std::uint32_t>(e.size()));
    f.ids_.insert(f.ids_.end(), e.ids.begin(), e.ids.end());
    f.type_ids_.insert(f.type_ids_.end(), e.type_ids.begin(), e.type_ids.end());
  }
  f.labels_ = examples.label_kind;
  f.class_ids_ = examples.class_ids;
  f.values_ = examples.values;
  f.values_per_example_ = examples.values_per_example;
  return f;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
