// cputrain::data::qa_features — SQuAD examples turned into model inputs as run_qa.py's prepare_train_features and
// prepare_validation_features make them: "[CLS] question [SEP] context [SEP]", only the context truncated to
// max_seq_length, a long context cut into windows that overlap by doc_stride tokens (Hugging Face's `stride`,
// windows starting every budget - doc_stride tokens), and for training the answer's start and end token positions
// ([CLS], position 0, when the answer is not wholly inside the window or there is none).
//
// Stored compactly, because SQuAD's training set makes ~90,000 features: each feature keeps its unpadded token ids
// and, when asked, the code-point offsets of its context tokens into the example's context; token types and the
// attention mask follow from where the context starts and the length, and padding is added only when a batch is
// assembled (to max_seq_length, or to the longest feature of the batch). Contexts are tokenized once however many
// questions share them, on all cores (oneTBB), and the result does not depend on the number of threads.
//
// One deliberate difference from run_qa.py: when the answer starts in the last context token of a window,
// run_qa.py's search runs past the context into [SEP] and padding (whose offsets are (0, 0)) and labels the start
// after the end; here the search stays inside the context, which gives that token.
#pragma once

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
#include "cputrain/data/data_error.hpp"
#include "cputrain/data/squad_example.hpp"
#include "cputrain/nn/qa_batch.hpp"
#include "cputrain/text/bert_tokenizer.hpp"

namespace cputrain::data {

struct qa_feature_options {
  std::size_t max_seq_length = 384;
  std::size_t doc_stride = 128;
  bool labels = true;    // answer positions, for training (prepare_train_features)
  bool offsets = false;  // context offsets, for post-processing (prepare_validation_features)
};

/// How a batch is padded: pad_to_max_length, or to its longest feature (Hugging Face's dynamic padding).
enum class qa_padding { max_length, longest };

/// One window of one example.
struct qa_feature {
  std::uint32_t example = 0;         // index into the dataset's examples
  std::uint32_t window = 0;          // which window of its example, from 0
  std::uint32_t length = 0;          // tokens without padding
  std::uint32_t context_begin = 0;   // position of the first context token (question tokens + 2)
  std::uint32_t context_tokens = 0;  // context tokens in this window
  std::uint32_t context_first = 0;   // index of this window's first token among the context's tokens
  std::int32_t start_position = 0;   // answer's first token ([CLS] = 0 when absent); with labels only
  std::int32_t end_position = 0;
  std::size_t ids_begin = 0;         // into the shared id store
  std::size_t offsets_begin = 0;     // into the shared offset store; context_tokens entries when kept
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
  [[nodiscard]] bool has_offsets() const noexcept { return offsets_kept_; }
  [[nodiscard]] const qa_feature_report& report() const noexcept { return report_; }

  /// The feature's token ids without padding.
  [[nodiscard]] std::span<const std::int32_t> input_ids(std::size_t i) const {
    const auto& f = features_.at(i);
    return std::span<const std::int32_t>(ids_).subspan(f.ids_begin, f.length);
  }
  /// 0 for [CLS], the question and the first [SEP]; 1 for the context and the last [SEP]; 0 for padding.
  [[nodiscard]] std::int32_t token_type_id(std::size_t i, std::size_t position) const {
    const auto& f = features_.at(i);
    return position >= f.context_begin && position < f.length ? 1 : 0;
  }
  /// The code points of the example's context that the token at `position` came from; nullopt for positions
  /// outside the context (as run_qa.py sets their offsets to None). Needs qa_feature_options::offsets.
  [[nodiscard]] std::optional<text::text_span> context_offset(std::size_t i, std::size_t position) const {
    const auto& f = features_.at(i);
    if (!offsets_kept_) throw usage_error("qa_features: context offsets were not kept (qa_feature_options::offsets)");
    if (position < f.context_begin || position >= f.context_begin + f.context_tokens) return std::nullopt;
    return offsets_[f.offsets_begin + (position - f.context_begin)];
  }

  /// The features `indices` as a model batch, padded as asked; labels included when the features have them.
  [[nodiscard]] nn::qa_batch batch(std::span<const std::size_t> indices, qa_padding padding) const {
    nn::qa_batch b;
    b.batch = indices.size();
    b.seq = max_seq_length_;
    if (padding == qa_padding::longest) {
      b.seq = 0;
      for (const std::size_t i : indices) b.seq = std::max<std::size_t>(b.seq, features_.at(i).length);
    }
    b.input_ids.assign(b.tokens(), pad_id_);
    b.token_type_ids.assign(b.tokens(), 0);
    b.attention_mask.assign(b.tokens(), 0);
    for (std::size_t row = 0; row < indices.size(); ++row) {
      const auto& f = features_.at(indices[row]);
      const auto ids = input_ids(indices[row]);
      std::int32_t* out_ids = b.input_ids.data() + row * b.seq;
      std::copy(ids.begin(), ids.end(), out_ids);
      std::fill_n(b.attention_mask.data() + row * b.seq, f.length, 1);
      std::fill(b.token_type_ids.data() + row * b.seq + f.context_begin, b.token_type_ids.data() + row * b.seq + f.length,
                1);
      if (labels_) {
        b.start_positions.push_back(f.start_position);
        b.end_positions.push_back(f.end_position);
      }
    }
    return b;
  }

  /// Bytes held, to check that memory follows the features and not copies of the contexts.
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return features_.capacity() * sizeof(qa_feature) + ids_.capacity() * sizeof(std::int32_t) +
           offsets_.capacity() * sizeof(text::text_span);
  }

 private:
  friend qa_features make_qa_features(const squad_dataset&, const text::bert_tokenizer&, const qa_feature_options&);

  std::vector<qa_feature> features_;
  std::vector<std::int32_t> ids_;
  std::vector<text::text_span> offsets_;
  std::size_t max_seq_length_ = 0;
  std::int32_t pad_id_ = 0;
  bool labels_ = false;
  bool offsets_kept_ = false;
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

/// Features of every example of `dataset`. Throws usage_error for options run_qa.py refuses (doc_stride not
/// below max_seq_length, sequences too short for [CLS] q [SEP] c [SEP]); an example whose question leaves no room
/// for doc_stride + 1 context tokens is skipped and reported (run_qa.py crashes on it).
inline qa_features make_qa_features(const squad_dataset& dataset, const text::bert_tokenizer& tokenizer,
                                    const qa_feature_options& options) {
  if (options.max_seq_length < 4)
    throw usage_error("max_seq_length " + std::to_string(options.max_seq_length) +
                      " leaves no room for [CLS] question [SEP] context [SEP]");
  if (options.doc_stride >= options.max_seq_length)
    throw usage_error("doc_stride " + std::to_string(options.doc_stride) + " must be smaller than max_seq_length " +
                      std::to_string(options.max_seq_length));
  const auto& vocab = tokenizer.vocab();

  // Examples grouped by context, so each context is tokenized once; groups run in parallel and their features
  // are joined in example order afterwards.
  const std::size_t n_examples = dataset.examples.size();
  std::vector<std::uint32_t> order(n_examples);
  for (std::size_t i = 0; i < n_examples; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return dataset.examples[a].context_index < dataset.examples[b].context_index;
  });

  struct example_output {
    std::vector<qa_feature> features;  // ids_begin/offsets_begin relative to the vectors below
    std::vector<std::int32_t> ids;
    std::vector<text::text_span> offsets;
    std::string problem;
  };
  std::vector<example_output> outputs(n_examples);

  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n_examples, 64), [&](const tbb::blocked_range<std::size_t>& r) {
    text::token_sequence context_tokens, question_tokens;
    std::uint32_t tokenized_context = 0;
    bool have_context = false;
    for (std::size_t k = r.begin(); k < r.end(); ++k) {
      const std::uint32_t e = order[k];
      const squad_example& example = dataset.examples[e];
      if (!have_context || tokenized_context != example.context_index) {
        context_tokens.clear();
        tokenizer.encode(dataset.context(example), context_tokens);
        tokenized_context = example.context_index;
        have_context = true;
      }
      question_tokens.clear();
      tokenizer.encode(example.question, question_tokens);
      example_output& out = outputs[e];
      const std::size_t q = question_tokens.size();
      const std::size_t n = context_tokens.size();
      if (q + 3 + options.doc_stride >= options.max_seq_length && q + n + 3 > options.max_seq_length) {
        out.problem = "question \"" + example.id + "\": its " + std::to_string(q) +
                      " tokens leave no more than doc_stride (" + std::to_string(options.doc_stride) +
                      ") context tokens per window at max_seq_length " + std::to_string(options.max_seq_length);
        continue;
      }
      const std::size_t budget = options.max_seq_length - 3 - q;
      std::uint32_t window = 0;
      detail::for_each_window(n, budget, options.doc_stride, [&](std::size_t first, std::size_t stop) {
        qa_feature f;
        f.example = e;
        f.window = window++;
        f.context_begin = static_cast<std::uint32_t>(q + 2);
        f.context_tokens = static_cast<std::uint32_t>(stop - first);
        f.context_first = static_cast<std::uint32_t>(first);
        f.length = static_cast<std::uint32_t>(q + 3 + (stop - first));
        f.ids_begin = out.ids.size();
        out.ids.push_back(vocab.cls_id());
        out.ids.insert(out.ids.end(), question_tokens.ids.begin(), question_tokens.ids.end());
        out.ids.push_back(vocab.sep_id());
        out.ids.insert(out.ids.end(), context_tokens.ids.begin() + static_cast<std::ptrdiff_t>(first),
                       context_tokens.ids.begin() + static_cast<std::ptrdiff_t>(stop));
        out.ids.push_back(vocab.sep_id());
        const std::span<const text::text_span> window_offsets(context_tokens.offsets.data() + first, stop - first);
        if (options.labels) detail::label_window(f, window_offsets, example);
        if (options.offsets) {
          f.offsets_begin = out.offsets.size();
          out.offsets.insert(out.offsets.end(), window_offsets.begin(), window_offsets.end());
        }
        out.features.push_back(f);
      });
    }
  });

  qa_features result;
  result.max_seq_length_ = options.max_seq_length;
  result.pad_id_ = vocab.pad_id();
  result.labels_ = options.labels;
  result.offsets_kept_ = options.offsets;
  std::size_t n_features = 0, n_ids = 0, n_offsets = 0;
  for (const auto& out : outputs) {
    n_features += out.features.size();
    n_ids += out.ids.size();
    n_offsets += out.offsets.size();
  }
  result.features_.reserve(n_features);
  result.ids_.reserve(n_ids);
  result.offsets_.reserve(n_offsets);
  for (auto& out : outputs) {
    if (!out.problem.empty()) {
      ++result.report_.skipped;
      result.report_.problems.push_back(std::move(out.problem));
    }
    for (qa_feature f : out.features) {
      f.ids_begin += result.ids_.size();
      f.offsets_begin += result.offsets_.size();
      result.features_.push_back(f);
    }
    result.ids_.insert(result.ids_.end(), out.ids.begin(), out.ids.end());
    result.offsets_.insert(result.offsets_.end(), out.offsets.begin(), out.offsets.end());
    out = example_output{};
  }
  return result;
}

}  // namespace cputrain::data
