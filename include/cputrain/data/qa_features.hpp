// cputrain::data::qa_features — SQuAD examples as model inputs, as run_qa.py's prepare_train_features and
// prepare_validation_features make them: "[CLS] question [SEP] context [SEP]" (RoBERTa's "<s> q </s></s> c </s>"),
// long contexts cut into windows overlapping by doc_stride, start/end labels (the first token when the answer is
// not in the window). Stored compactly (contexts and questions once, padding added per batch); one deliberate
// difference: docs/text-and-data.md.
#pragma once

#include "cputrain/nn/qa_batch.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/data/data_error.hpp"
#include "cputrain/data/squad_example.hpp"
#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/tokenizer.hpp"

namespace cputrain::data {

struct qa_feature_options {
  std::size_t max_seq_length = 384;
  std::size_t doc_stride = 128;
  bool labels = true;  // answer positions, for training (prepare_train_features)
};

/// How a batch is padded: pad_to_max_length, or to its longest feature (Hugging Face's dynamic padding).
enum class qa_padding { max_length, longest };

/// One window of one example: where its pieces are in the shared token stores, and its labels.
struct qa_feature {
  std::uint32_t example = 0;         // index into the dataset's examples
  std::uint32_t window = 0;          // which window of its example, from 0
  std::uint32_t length = 0;          // tokens without padding
  std::uint32_t context_begin = 0;   // position of the first context token (question tokens + 2, RoBERTa's + 3)
  std::uint32_t context_tokens = 0;  // context tokens in this window
  std::uint32_t context_first = 0;   // index of this window's first token among its context's tokens
  std::int32_t start_position = 0;   // answer's first token ([CLS] = 0 when absent); with labels only
  std::int32_t end_position = 0;
  std::size_t question_ids = 0;      // into the question token store: its question's tokens
  std::size_t context_ids = 0;       // into the context token store: the context's first token
};

/// What make_qa_features left out: examples whose question alone fills max_seq_length.
struct qa_feature_report {
  std::size_t skipped = 0;
  std::vector<std::string> problems;
};

class qa_features {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return features_.size(); }
  [[nodiscard]] bool empty() const noexcept { return features_.empty(); }
  [[nodiscard]] const qa_feature& operator[](std::size_t i) const { return features_.at(i); }
  [[nodiscard]] std::span<const qa_feature> all() const noexcept { return features_; }
  [[nodiscard]] std::size_t max_seq_length() const noexcept { return max_seq_length_; }
  [[nodiscard]] bool has_labels() const noexcept { return labels_; }
  [[nodiscard]] const qa_feature_report& report() const noexcept { return report_; }

  /// The feature's token ids without padding: [CLS] question [SEP] window [SEP] (or the tokenizer's layout).
  [[nodiscard]] std::vector<std::int32_t> input_ids(std::size_t i) const {
    std::vector<std::int32_t> ids(features_.at(i).length);
    write_ids(features_[i], ids.data());
    return ids;
  }
  /// 0 for [CLS], the question and the first [SEP]; 1 for the context and the last [SEP] (0 in RoBERTa's layout);
  /// 0 for padding.
  [[nodiscard]] std::int32_t token_type_id(std::size_t i, std::size_t position) const {
    const auto& f = features_.at(i);
    return position >= f.context_begin && position < f.length ? specials_.second_type_id() : 0;
  }
  /// The code points of the example's context that the token at `position` came from; nullopt for positions
  /// outside the context (as run_qa.py sets their offsets to None).
  [[nodiscard]] std::optional<text::text_span> context_offset(std::size_t i, std::size_t position) const {
    const auto& f = features_.at(i);
    if (position < f.context_begin || position >= f.context_begin + f.context_tokens) return std::nullopt;
    return context_offsets_[f.context_ids + f.context_first + (position - f.context_begin)];
  }

  /// The features `indices` as a model batch, padded as asked; labels included when the features have them.
  [[nodiscard]] nn::qa_batch batch(std::span<const std::size_t> indices, qa_padding padding) const;

  /// Keeps the first `n` features (run_qa.py's --max_train_samples selects features after making them).
  void truncate(std::size_t n) {
    if (n < features_.size()) features_.resize(n);
  }

  /// Bytes held: the features, each question's tokens once, and each context's tokens and offsets once (not per
  /// question or window).
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return features_.capacity() * sizeof(qa_feature) + question_ids_.capacity() * sizeof(std::int32_t) +
           context_ids_.capacity() * sizeof(std::int32_t) + context_offsets_.capacity() * sizeof(text::text_span);
  }

 private:
  friend qa_features make_qa_features(const squad_dataset&, const text::tokenizer&, const qa_feature_options&);

  void write_ids(const qa_feature& f, std::int32_t* out) const {
    const std::size_t q = f.context_begin - specials_.second_begin(0);
    *out++ = specials_.cls;
    out = std::copy_n(question_ids_.data() + f.question_ids, q, out);
    for (std::size_t s = 1; s < specials_.second_begin(0); ++s) *out++ = specials_.sep;
    out = std::copy_n(context_ids_.data() + f.context_ids + f.context_first, f.context_tokens, out);
    *out = specials_.sep;
  }

  std::vector<qa_feature> features_;
  std::vector<std::int32_t> question_ids_;
  std::vector<std::int32_t> context_ids_;
  std::vector<text::text_span> context_offsets_;
  std::size_t max_seq_length_ = 0;
  text::special_tokens specials_;
  std::int32_t pad_id_ = 0;
  bool labels_ = false;
  qa_feature_report report_;
};

namespace detail {

// The training labels of one window, by run_qa.py's rule on the first answer (see the header comment for where
// the search stops). `offsets` are the window's context tokens.
inline void label_window(qa_feature& f, std::span<const text::text_span> offsets, const squad_example& example) {
  f.start_position = f.end_position = 0;
  if (example.answers.empty() || offsets.empty()) return;
  const auto& answer = example.answers.front();
  const std::uint32_t start_char = answer.answer_start;
  const auto end_char = static_cast<std::uint32_t>(start_char + text::count_code_points(answer.text));
  if (!(offsets.front().begin <= start_char && offsets.back().end >= end_char)) return;
  std::size_t first = 0;
  while (first + 1 < offsets.size() && offsets[first + 1].begin <= start_char) ++first;
  std::size_t last = offsets.size() - 1;
  while (last > 0 && offsets[last - 1].end >= end_char) --last;
  f.start_position = static_cast<std::int32_t>(f.context_begin + first);
  f.end_position = static_cast<std::int32_t>(f.context_begin + last);
}

// The windows of `n` context tokens with `budget` per window, as Hugging Face's Encoding::truncate cuts them.
template <typename F>
void for_each_window(std::size_t n, std::size_t budget, std::size_t stride, F&& f) {
  if (n <= budget) {
    f(std::size_t{0}, n);
    return;
  }
  const std::size_t step = budget - stride;
  for (std::size_t start = 0;; start += step) {
    const std::size_t stop = std::min(start + budget, n);
    f(start, stop);
    if (stop == n) break;
  }
}

}  // namespace detail

/// Features of every example of `dataset`, in the tokenizer's layout. Throws usage_error for options run_qa.py
/// refuses (doc_stride not below max_seq_length, sequences too short for [CLS] q [SEP] c [SEP]) and for a tokenizer
/// that adds no special tokens (GPT-2's: an unanswerable window is labelled at the first token); an example whose
/// question leaves no room for doc_stride + 1 context tokens is skipped and reported (run_qa.py crashes on it).
CPUTRAIN_DECL qa_features make_qa_features(const squad_dataset& dataset, const text::tokenizer& tokenizer,
                                           const qa_feature_options& options);

/// The same for BERT's WordPiece tokenizer.
CPUTRAIN_DECL qa_features make_qa_features(const squad_dataset& dataset, const text::bert_tokenizer& tokenizer,
                                           const qa_feature_options& options);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL nn::qa_batch qa_features::batch(std::span<const std::size_t> indices, qa_padding padding) const {
  nn::qa_batch b;
  b.batch = indices.size();
  b.seq = max_seq_length_;
  if (padding == qa_padding::longest) {
    b.seq = 0;
    for (const std::size_t i : indices) b.seq = std::max<std::size_t>(b.seq, features_.at(i).length);
  }
  b.input_ids.assign(b.tokens(), pad_id_);
  const std::int32_t context_type = specials_.second_type_id();
  b.token_type_ids.assign(b.tokens(), 0);
  b.attention_mask.assign(b.tokens(), 0);
  for (std::size_t row = 0; row < indices.size(); ++row) {
    const auto& f = features_.at(indices[row]);
    write_ids(f, b.input_ids.data() + row * b.seq);
    std::fill_n(b.attention_mask.data() + row * b.seq, f.length, 1);
    std::fill(b.token_type_ids.data() + row * b.seq + f.context_begin, b.token_type_ids.data() + row * b.seq + f.length,
              context_type);
    if (labels_) {
      b.start_positions.push_back(f.start_position);
      b.end_positions.push_back(f.end_position);
    }
  }
  return b;
}

CPUTRAIN_DECL qa_features make_qa_features(const squad_dataset& dataset, const text::bert_tokenizer& tokenizer,
                                           const qa_feature_options& options) {
  return make_qa_features(dataset, text::tokenizer(tokenizer), options);
}

CPUTRAIN_DECL qa_features make_qa_features(const squad_dataset& dataset, const text::tokenizer& tokenizer,
                                           const qa_feature_options& options) {
  const text::special_tokens& specials = tokenizer.specials();
  if (specials.layout == text::special_layout::none)
    throw usage_error("question answering needs a tokenizer that puts a first token and separators around the "
                      "question and the context ([CLS]/[SEP], <s>/</s>); this " + std::string(tokenizer.family()) +
                      " tokenizer adds none (GPT-2's)");
  const std::size_t added = specials.added(true);  // 3, RoBERTa's 4
  if (options.max_seq_length < added + 1)
    throw usage_error("max_seq_length " + std::to_string(options.max_seq_length) +
                      " leaves no room for [CLS] question [SEP] context [SEP]");
  if (options.doc_stride >= options.max_seq_length)
    throw usage_error("doc_stride " + std::to_string(options.doc_stride) + " must be smaller than max_seq_length " +
                      std::to_string(options.max_seq_length));
  const std::size_t n_examples = dataset.examples.size();
  for (const auto& example : dataset.examples)
    if (example.context_index >= dataset.contexts.size())
      throw usage_error("make_qa_features: question \"" + example.id + "\" refers to context " +
                        std::to_string(example.context_index) + " of " + std::to_string(dataset.contexts.size()));

  // 1. Every context some question uses, tokenized once, in parallel, then laid end to end.
  std::vector<char> used(dataset.contexts.size(), 0);
  for (const auto& example : dataset.examples) used[example.context_index] = 1;
  std::vector<text::token_sequence> contexts(dataset.contexts.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, contexts.size(), 16), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t c = r.begin(); c < r.end(); ++c)
      if (used[c]) tokenizer.encode(dataset.contexts[c], contexts[c]);
  });
  qa_features result;
  result.max_seq_length_ = options.max_seq_length;
  result.specials_ = specials;
  result.pad_id_ = specials.pad_id("question answering batches");
  result.labels_ = options.labels;
  std::vector<std::size_t> context_start(contexts.size()), context_length(contexts.size());
  std::size_t context_tokens = 0;
  for (std::size_t c = 0; c < contexts.size(); ++c) {
    context_start[c] = context_tokens;
    context_length[c] = contexts[c].size();
    context_tokens += contexts[c].size();
  }
  result.context_ids_.reserve(context_tokens);
  result.context_offsets_.reserve(context_tokens);
  for (auto& c : contexts) {
    result.context_ids_.insert(result.context_ids_.end(), c.ids.begin(), c.ids.end());
    result.context_offsets_.insert(result.context_offsets_.end(), c.offsets.begin(), c.offsets.end());
    c = text::token_sequence{};
  }

  // 2. Questions and windows per example, in parallel; joined in example order.
  struct example_output {
    std::vector<qa_feature> features;
    std::vector<std::int32_t> question;
    std::string problem;
  };
  std::vector<example_output> outputs(n_examples);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n_examples, 64), [&](const tbb::blocked_range<std::size_t>& r) {
    text::token_sequence question_tokens;
    for (std::size_t e = r.begin(); e < r.end(); ++e) {
      const squad_example& example = dataset.examples[e];
      question_tokens.clear();
      tokenizer.encode(example.question, question_tokens);
      example_output& out = outputs[e];
      const std::size_t q = question_tokens.size();
      const std::size_t first_token = context_start[example.context_index];
      const std::size_t n = context_length[example.context_index];
      if (q + added + options.doc_stride >= options.max_seq_length && q + n + added > options.max_seq_length) {
        out.problem = "question \"" + example.id + "\": its " + std::to_string(q) +
                      " tokens leave no more than doc_stride (" + std::to_string(options.doc_stride) +
                      ") context tokens per window at max_seq_length " + std::to_string(options.max_seq_length);
        continue;
      }
      out.question = std::move(question_tokens.ids);
      question_tokens.ids = {};
      const std::size_t budget = options.max_seq_length - added - q;
      std::uint32_t window = 0;
      detail::for_each_window(n, budget, options.doc_stride, [&](std::size_t first, std::size_t stop) {
        qa_feature f;
        f.example = static_cast<std::uint32_t>(e);
        f.window = window++;
        f.context_begin = static_cast<std::uint32_t>(specials.second_begin(q));
        f.context_tokens = static_cast<std::uint32_t>(stop - first);
        f.context_first = static_cast<std::uint32_t>(first);
        f.length = static_cast<std::uint32_t>(q + added + (stop - first));
        f.context_ids = first_token;
        if (options.labels)
          detail::label_window(f, std::span<const text::text_span>(result.context_offsets_).subspan(first_token + first, stop - first),
                               example);
        out.features.push_back(f);
      });
    }
  });

  std::size_t n_features = 0, n_question_ids = 0;
  for (const auto& out : outputs) {
    n_features += out.features.size();
    n_question_ids += out.question.size();
  }
  result.features_.reserve(n_features);
  result.question_ids_.reserve(n_question_ids);
  for (auto& out : outputs) {
    if (!out.problem.empty()) {
      ++result.report_.skipped;
      result.report_.problems.push_back(std::move(out.problem));
      continue;
    }
    for (qa_feature f : out.features) {
      f.question_ids = result.question_ids_.size();
      result.features_.push_back(f);
    }
    result.question_ids_.insert(result.question_ids_.end(), out.question.begin(), out.question.end());
    out = example_output{};
  }
  return result;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
