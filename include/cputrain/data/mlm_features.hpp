// cputrain::data::mlm_features — texts as masked-LM inputs, as run_mlm.py prepares them: line_by_line (each line
// that is not blank one sequence, cut to max_seq_length) or group_texts (every text with its special tokens, end to
// end, cut into blocks of max_seq_length, each group of texts_per_group texts dropping its remainder); then
// DataCollatorForLanguageModeling's masking per batch (mlm_probability of the non-special tokens chosen: 80%
// [MASK], 10% a random id, 10% kept). The draws come from a counter-based hash of (seed, key, feature, position),
// not from a generator's state, so a batch is the same whatever the thread count, and a resumed run repeats it.
// The features carry their masking settings (mlm_feature_options::masking): a trainer's batch has only them to go by.
#pragma once

#include "cputrain/text/special_tokens.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/core/splitmix64.hpp"
#include "cputrain/data/data_error.hpp"
#include "cputrain/data/python_text.hpp"
#include "cputrain/nn/classification_loss.hpp"
#include "cputrain/nn/token_classification_batch.hpp"
#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/text/truncation.hpp"

namespace cputrain::data {

/// DataCollatorForLanguageModeling's masking. Of the chosen tokens, mask_replace_prob become the mask token,
/// random_replace_prob a random id, the rest stay (its defaults: 0.8 and 0.1).
struct mlm_masking {
  double mlm_probability = 0.15;
  double mask_replace_prob = 0.8;
  double random_replace_prob = 0.1;
  std::uint64_t seed = 42;
};

struct mlm_feature_options {
  std::size_t max_seq_length = 512;  // run_mlm: min(--max_seq_length, model_max_length); 1024 at most when unset
  bool line_by_line = false;
  /// group_texts runs per map() batch of this many texts (datasets' default 1000), each dropping its own
  /// remainder; 0: all texts as one group.
  std::size_t texts_per_group = 1000;
  /// What every batch of the features draws (mlm_features::batch without a masking); checked by make_mlm_features.
  mlm_masking masking;
};

/// How a batch is padded: pad_to_max_length, or to its longest feature. Blocks of group_texts all have
/// max_seq_length tokens.
enum class mlm_padding { max_length, longest };

namespace detail {

// The top 53 bits as a double in [0, 1), so u < p holds with probability p (always for p = 1, never for p = 0).
[[nodiscard]] constexpr double unit_interval(std::uint64_t h) noexcept {
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

inline void check_masking(const mlm_masking& m) {
  const auto probability = [](double p) { return p >= 0.0 && p <= 1.0; };
  if (!probability(m.mlm_probability) || !probability(m.mask_replace_prob) || !probability(m.random_replace_prob))
    throw usage_error("mlm masking: mlm_probability (" + std::to_string(m.mlm_probability) + "), mask_replace_prob (" +
                      std::to_string(m.mask_replace_prob) + ") and random_replace_prob (" +
                      std::to_string(m.random_replace_prob) + ") must each be in [0, 1]");
  if (m.mask_replace_prob + m.random_replace_prob > 1.0 + 1e-12)
    throw usage_error("mlm masking: mask_replace_prob + random_replace_prob must not exceed 1");
}

// Special-tokens mask of every stored token, one bit each: a byte per token would cost a quarter of the ids.
struct bit_vector {
  std::vector<std::uint64_t> words;
  std::size_t size = 0;

  void push_back(bool bit) {
    if (size % 64 == 0) words.push_back(0);
    if (bit) words.back() |= std::uint64_t{1} << (size % 64);
    ++size;
  }
  [[nodiscard]] bool operator[](std::size_t i) const noexcept { return (words[i / 64] >> (i % 64)) & 1U; }
  void shrink_to(std::size_t n) {
    if (n >= size) return;
    size = n;
    words.resize((n + 63) / 64);
    if (n % 64 != 0) words.back() &= (std::uint64_t{1} << (n % 64)) - 1;
  }
};

}  // namespace detail

/// torch_mask_tokens on one sequence, in place: `ids` [seq] get their replacements and `labels` [seq] the original
/// id where a token is chosen, -100 elsewhere. Tokens with special[p] != 0 (special tokens, padding) are never
/// chosen. Random ids are drawn from [0, id_count) (len(tokenizer)), as Python's may be any token, special or not.
/// `sequence` tells sequences of one batch apart: the feature's index, so that data-parallel ranks drawing
/// different features with the same key draw independent masks, and a feature's mask does not depend on its row.
CPUTRAIN_DECL void mask_sequence(std::span<std::int32_t> ids, std::span<const std::uint8_t> special,
                                 std::span<std::int64_t> labels, const mlm_masking& m, std::int32_t mask_id,
                                 std::size_t id_count, std::uint64_t key, std::uint64_t sequence);

class mlm_features {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return starts_.size() - 1; }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] std::size_t max_seq_length() const noexcept { return max_seq_length_; }
  [[nodiscard]] bool line_by_line() const noexcept { return line_by_line_; }
  /// Masked-LM features always have labels: the masking makes them.
  [[nodiscard]] static constexpr bool has_labels() noexcept { return true; }
  [[nodiscard]] std::int32_t mask_id() const noexcept { return mask_id_; }
  /// One past the largest id a random replacement may take (len(tokenizer)).
  [[nodiscard]] std::size_t id_count() const noexcept { return id_count_; }
  /// The masking the features were made with (mlm_feature_options::masking).
  [[nodiscard]] const mlm_masking& masking() const noexcept { return masking_; }
  [[nodiscard]] std::uint32_t length(std::size_t i) const {
    check_index(i);
    return static_cast<std::uint32_t>(starts_[i + 1] - starts_[i]);
  }
  /// Feature i's token ids before masking, special tokens included, padding not.
  [[nodiscard]] std::span<const std::int32_t> input_ids(std::size_t i) const {
    check_index(i);
    return std::span<const std::int32_t>(ids_).subspan(starts_[i], starts_[i + 1] - starts_[i]);
  }
  /// 1 where feature i has a special token (return_special_tokens_mask), 0 elsewhere.
  [[nodiscard]] std::vector<std::uint8_t> special_tokens_mask(std::size_t i) const {
    check_index(i);
    std::vector<std::uint8_t> out(starts_[i + 1] - starts_[i]);
    for (std::size_t p = 0; p < out.size(); ++p) out[p] = special_[starts_[i] + p] ? 1 : 0;
    return out;
  }

  /// The features `indices` as a masked batch (nn::masked_lm_batch, the masked LM head's, is this type): padded
  /// as asked (padding never chosen), then each row masked by mask_sequence with `key` (a trainer's: the epoch, or
  /// one key for evaluation) and its feature's index, so a feature's mask does not depend on its batch.
  [[nodiscard]] nn::token_classification_batch batch(std::span<const std::size_t> indices, mlm_padding padding,
                                          const mlm_masking& masking, std::uint64_t key) const;
  /// The same with the features' own masking: what a trainer's task calls, which has only the features.
  [[nodiscard]] nn::token_classification_batch batch(std::span<const std::size_t> indices, mlm_padding padding,
                                                     std::uint64_t key) const {
    return batch(indices, padding, masking_, key);
  }

  /// Keeps the first `n` features (run_mlm's --max_train_samples selects blocks or lines after grouping).
  void truncate(std::size_t n) {
    if (n >= size()) return;
    starts_.resize(n + 1);
    ids_.resize(starts_.back());
    special_.shrink_to(starts_.back());
  }

  /// Bytes held: an id and a bit per token, a start per feature.
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return ids_.capacity() * sizeof(std::int32_t) + special_.words.capacity() * sizeof(std::uint64_t) +
           starts_.capacity() * sizeof(std::size_t);
  }

 private:
  friend mlm_features make_mlm_features(std::span<const std::string>, const text::tokenizer&,
                                        const mlm_feature_options&);

  void check_index(std::size_t i) const {
    if (i >= size())
      throw usage_error("mlm_features: feature " + std::to_string(i) + " of " + std::to_string(size()));
  }
  // group_texts on the tokens stored from `from` on: whole blocks of max_seq_length become features, the
  // remainder goes.
  void cut_blocks(std::size_t from) {
    const std::size_t blocks = (ids_.size() - from) / max_seq_length_;
    ids_.resize(from + blocks * max_seq_length_);
    special_.shrink_to(ids_.size());
    for (std::size_t b = 1; b <= blocks; ++b) starts_.push_back(from + b * max_seq_length_);
  }

  std::vector<std::int32_t> ids_;     // every feature's tokens end to end
  detail::bit_vector special_;        // [ids_.size()]
  std::vector<std::size_t> starts_{0};  // [size + 1]: feature i is [starts_[i], starts_[i + 1])
  std::size_t max_seq_length_ = 0;
  std::int32_t pad_id_ = 0;  // group_texts' blocks are never padded, and need no padding token
  std::int32_t mask_id_ = 0;
  std::size_t id_count_ = 0;
  bool line_by_line_ = false;
  mlm_masking masking_;
};

/// Features of `texts` (a dataset's rows, in order; group_texts keeps empty ones, which still bring their
/// special tokens), tokenized in parallel. Throws usage_error for a tokenizer without a mask token (as
/// DataCollatorForLanguageModeling does), a max_seq_length without room for a token (line_by_line: besides the
/// special tokens) or a masking probability outside [0, 1]; text_error when line_by_line has no padding token;
/// data_error naming a text that cannot be tokenized (invalid UTF-8). With fewer tokens than max_seq_length in a
/// group, group_texts makes no feature.
CPUTRAIN_DECL mlm_features make_mlm_features(std::span<const std::string> texts, const text::tokenizer& tokenizer,
                                             const mlm_feature_options& options);

/// The same for BERT's WordPiece tokenizer.
CPUTRAIN_DECL mlm_features make_mlm_features(std::span<const std::string> texts,
                                             const text::bert_tokenizer& tokenizer, const mlm_feature_options& options);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void mask_sequence(std::span<std::int32_t> ids, std::span<const std::uint8_t> special,
                                 std::span<std::int64_t> labels, const mlm_masking& m, std::int32_t mask_id,
                                 std::size_t id_count, std::uint64_t key, std::uint64_t sequence) {
  if (special.size() != ids.size() || labels.size() != ids.size())
    throw usage_error("mask_sequence: ids, special and labels must have the same length");
  if (id_count == 0) throw usage_error("mask_sequence: id_count must be positive");
  const std::uint64_t base =
      splitmix64_finalizer(splitmix64_finalizer(splitmix64_finalizer(m.seed + splitmix64_gamma) ^ key) ^ sequence);
  for (std::size_t p = 0; p < ids.size(); ++p) {
    labels[p] = nn::ignored_label;
    if (special[p] != 0) continue;
    const std::uint64_t h = splitmix64_finalizer(base + (p + 1) * splitmix64_gamma);
    if (!(detail::unit_interval(h) < m.mlm_probability)) continue;
    labels[p] = ids[p];
    const double how = detail::unit_interval(splitmix64_finalizer(h ^ 0x5851f42d4c957f2dULL));
    if (how < m.mask_replace_prob) ids[p] = mask_id;
    else if (how < m.mask_replace_prob + m.random_replace_prob)
      ids[p] = static_cast<std::int32_t>(splitmix64_finalizer(h ^ 0x14057b7ef767814fULL) % id_count);
  }
}

CPUTRAIN_DECL nn::token_classification_batch mlm_features::batch(std::span<const std::size_t> indices,
                                                             mlm_padding padding, const mlm_masking& masking,
                                                             std::uint64_t key) const {
  detail::check_masking(masking);
  nn::token_classification_batch b;
  b.batch = indices.size();
  b.seq = max_seq_length_;
  if (padding == mlm_padding::longest) {
    b.seq = 0;
    for (const std::size_t i : indices) b.seq = std::max<std::size_t>(b.seq, length(i));
  }
  // Every array [batch, seq], padded on the right; only line_by_line features can be short of seq.
  b.input_ids.assign(b.tokens(), pad_id_);
  b.token_type_ids.assign(b.tokens(), 0);
  b.attention_mask.assign(b.tokens(), 0);
  b.labels.assign(b.tokens(), nn::ignored_label);
  std::vector<std::uint8_t> special(b.seq);
  for (std::size_t r = 0; r < indices.size(); ++r) {
    const std::size_t i = indices[r];
    const auto ids = input_ids(i);
    const std::span<std::int32_t> row(b.input_ids.data() + r * b.seq, b.seq);
    std::copy(ids.begin(), ids.end(), row.begin());
    std::fill_n(b.attention_mask.begin() + static_cast<std::ptrdiff_t>(r * b.seq), ids.size(), 1);
    std::fill(special.begin(), special.end(), std::uint8_t{1});  // tokenizer.pad pads the mask with 1
    for (std::size_t p = 0; p < ids.size(); ++p) special[p] = special_[starts_[i] + p] ? 1 : 0;
    mask_sequence(row, special, std::span<std::int64_t>(b.labels.data() + r * b.seq, b.seq), masking, mask_id_,
                  id_count_, key, i);
  }
  return b;
}

CPUTRAIN_DECL mlm_features make_mlm_features(std::span<const std::string> texts,
                                             const text::bert_tokenizer& tokenizer, const mlm_feature_options& options) {
  return make_mlm_features(texts, text::tokenizer(tokenizer), options);
}

CPUTRAIN_DECL mlm_features make_mlm_features(std::span<const std::string> texts, const text::tokenizer& tokenizer,
                                             const mlm_feature_options& options) {
  detail::check_masking(options.masking);
  const text::special_tokens& specials = tokenizer.specials();
  if (!specials.mask)
    throw usage_error("masked language modeling needs a mask token; this " + std::string(tokenizer.family()) +
                      " tokenizer has none");
  const std::size_t least = options.line_by_line ? specials.added(false) + 1 : 1;
  if (options.max_seq_length < least)
    throw usage_error("max_seq_length " + std::to_string(options.max_seq_length) + " leaves no room for a token" +
                      (options.line_by_line ? " besides the special tokens" : ""));
  mlm_features result;
  result.max_seq_length_ = options.max_seq_length;
  result.line_by_line_ = options.line_by_line;
  result.mask_id_ = *specials.mask;
  result.id_count_ = tokenizer.id_count();
  result.masking_ = options.masking;
  if (options.line_by_line) result.pad_id_ = specials.pad_id("masked LM batches (line_by_line)");
  else result.pad_id_ = specials.pad.value_or(0);
  const text::truncation_options truncation{options.max_seq_length, text::truncation_strategy::longest_first,
                                            text::text_side::right};

  // Texts a chunk at a time (a group of group_texts), tokenized in parallel, appended in order.
  const std::size_t chunk = options.texts_per_group > 0 ? options.texts_per_group : 1024;
  std::vector<text::encoding> encodings;
  std::vector<std::uint8_t> kept;  // line_by_line: 0 for a blank line
  for (std::size_t first = 0; first < texts.size(); first += chunk) {
    const std::size_t count = std::min(chunk, texts.size() - first);
    encodings.assign(count, text::encoding{});
    kept.assign(count, 1);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 16), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t t = r.begin(); t < r.end(); ++t) {
        const std::string& line = texts[first + t];
        // line_by_line keeps `len(line) > 0 and not line.isspace()`.
        if (options.line_by_line && detail::python_lstrip(line).empty()) {
          kept[t] = 0;
          continue;
        }
        try {
          encodings[t] = options.line_by_line ? tokenizer.encode(line, truncation) : tokenizer.encode(line);
        } catch (const text::text_error& e) {
          throw data_error("text " + std::to_string(first + t) + ": " + e.what());
        }
      }
    });
    const std::size_t group_start = result.ids_.size();
    for (std::size_t t = 0; t < count; ++t) {
      if (!kept[t]) continue;
      const text::encoding& e = encodings[t];
      result.ids_.insert(result.ids_.end(), e.ids.begin(), e.ids.end());
      for (const std::uint8_t s : e.special_tokens_mask) result.special_.push_back(s != 0);
      if (options.line_by_line) result.starts_.push_back(result.ids_.size());
    }
    if (!options.line_by_line && options.texts_per_group > 0) result.cut_blocks(group_start);
  }
  if (!options.line_by_line && options.texts_per_group == 0) result.cut_blocks(0);
  result.ids_.shrink_to_fit();
  result.special_.words.shrink_to_fit();
  return result;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
