// cputrain::data::postprocess_qa_predictions — start and end logits to an answer text per question, as
// run_qa.py's postprocess_qa_predictions (utils_qa.py) does it: n-best spans, the SQuAD v2 null answer and its
// threshold, so predictions.json, nbest_predictions.json and null_odds.json come out the same. The logits come
// row by row, one row of `row_length` positions per feature.
#pragma once

#include "cputrain/data/qa_features.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/data/squad_example.hpp"
#include "cputrain/io/atomic_file.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::data {

struct qa_postprocess_options {
  std::size_t n_best_size = 20;
  std::size_t max_answer_length = 30;
  bool version_2_with_negative = false;
  double null_score_diff_threshold = 0.0;
};

/// One entry of nbest_predictions.json.
struct qa_candidate {
  std::string text;
  float start_logit = 0;
  float end_logit = 0;
  double probability = 0;
  bool placeholder = false;  // run_qa.py's "empty" entry when nothing else was found
};

/// The answers of every example, in the dataset's order.
struct qa_predictions_output {
  std::vector<std::pair<std::string, std::string>> predictions;        // id -> answer text ("" = no answer)
  std::vector<std::pair<std::string, std::vector<qa_candidate>>> nbest;  // id -> candidates, best first
  std::vector<std::pair<std::string, double>> null_odds;               // v2: id -> null score - best non-null score

  /// The predictions as the metrics take them.
  [[nodiscard]] std::unordered_map<std::string, std::string> as_map() const {
    return {predictions.begin(), predictions.end()};
  }
};

namespace detail {

// numpy's np.argsort(x)[-1 : -n - 1 : -1]: the n largest, largest first; among equal values the later position
// first (the reverse of a stable ascending sort).
inline std::vector<std::uint32_t> top_positions(std::span<const float> row, std::size_t n) {
  std::vector<std::uint32_t> idx(row.size());
  std::iota(idx.begin(), idx.end(), 0u);
  const auto better = [&](std::uint32_t a, std::uint32_t b) { return row[a] > row[b] || (row[a] == row[b] && a > b); };
  const std::size_t k = std::min(n, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), better);
  idx.resize(k);
  return idx;
}

struct scored_span {
  std::uint32_t begin, end;  // code points of the context; (0, 0) for the null answer
  float score, start_logit, end_logit;
  bool null;
};

// Softmax of `scores` as numpy computes it on a float32 array, or on a float64 one when `wide`.
inline std::vector<double> probabilities(const std::vector<double>& scores, bool wide) {
  std::vector<double> p(scores.size());
  if (wide) {
    const double top = *std::max_element(scores.begin(), scores.end());
    double sum = 0;
    for (std::size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp(scores[i] - top);
    for (double& v : p) v /= sum;
  } else {
    float top = -std::numeric_limits<float>::infinity();
    for (const double s : scores) top = std::max(top, static_cast<float>(s));
    std::vector<float> e(scores.size());
    float sum = 0;  // numpy sums float32 pairwise; at n_best_size terms the order changes nothing visible
    for (std::size_t i = 0; i < e.size(); ++i) sum += e[i] = std::exp(static_cast<float>(scores[i]) - top);
    for (std::size_t i = 0; i < e.size(); ++i) p[i] = static_cast<double>(e[i] / sum);
  }
  return p;
}

}  // namespace detail

/// Answers for every example of `dataset` from the logits of `features`. `start_logits` and
/// `end_logits` hold features.size() rows of `row_length` values. Throws usage_error on mismatched sizes.
CPUTRAIN_DECL qa_predictions_output postprocess_qa_predictions(
    const squad_dataset& dataset, const qa_features& features, std::span<const float> start_logits,
    std::span<const float> end_logits, std::size_t row_length, const qa_postprocess_options& options);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL qa_predictions_output postprocess_qa_predictions(
    const squad_dataset& dataset, const qa_features& features, std::span<const float> start_logits,
    std::span<const float> end_logits, std::size_t row_length, const qa_postprocess_options& options) {
  if (row_length == 0 || start_logits.size() != features.size() * row_length ||
      end_logits.size() != start_logits.size())
    throw usage_error("postprocess_qa_predictions: expected " + std::to_string(features.size()) + " rows of " +
                      std::to_string(row_length) + " logits, got " + std::to_string(start_logits.size()) +
                      " start and " + std::to_string(end_logits.size()) + " end logits");
  if (options.n_best_size == 0) throw usage_error("postprocess_qa_predictions: n_best_size must be at least 1");

  std::vector<std::vector<std::uint32_t>> features_of(dataset.examples.size());
  for (std::size_t i = 0; i < features.size(); ++i) {
    const auto example = features[i].example;
    if (example >= dataset.examples.size())
      throw usage_error("postprocess_qa_predictions: feature " + std::to_string(i) + " belongs to example " +
                        std::to_string(example) + ", but the dataset has " +
                        std::to_string(dataset.examples.size()));
    features_of[example].push_back(static_cast<std::uint32_t>(i));
  }

  qa_predictions_output out;
  out.predictions.reserve(dataset.examples.size());
  out.nbest.reserve(dataset.examples.size());
  std::vector<detail::scored_span> prelim;
  for (std::size_t e = 0; e < dataset.examples.size(); ++e) {
    const squad_example& example = dataset.examples[e];
    prelim.clear();
    std::optional<detail::scored_span> min_null;
    for (const std::uint32_t fi : features_of[e]) {
      const auto start = start_logits.subspan(fi * row_length, row_length);
      const auto end = end_logits.subspan(fi * row_length, row_length);
      const float null_score = start[0] + end[0];
      if (!min_null || min_null->score > null_score) min_null = detail::scored_span{0, 0, null_score, start[0], end[0], true};
      const auto starts = detail::top_positions(start, options.n_best_size);
      const auto ends = detail::top_positions(end, options.n_best_size);
      for (const std::uint32_t s : starts) {
        const auto s_offset = features.context_offset(fi, s);
        if (!s_offset) continue;
        for (const std::uint32_t t : ends) {
          const auto t_offset = features.context_offset(fi, t);
          if (!t_offset || t < s || t - s + 1 > options.max_answer_length) continue;
          prelim.push_back({s_offset->begin, t_offset->end, start[s] + end[t], start[s], end[t], false});
        }
      }
    }
    if (options.version_2_with_negative && min_null) prelim.push_back(*min_null);
    std::stable_sort(prelim.begin(), prelim.end(),
                     [](const detail::scored_span& a, const detail::scored_span& b) { return a.score > b.score; });
    if (prelim.size() > options.n_best_size) prelim.resize(options.n_best_size);
    if (options.version_2_with_negative && min_null &&
        std::none_of(prelim.begin(), prelim.end(), [](const auto& p) { return p.begin == 0 && p.end == 0; }))
      prelim.push_back(*min_null);

    // Cut each text once the context's code points are indexed.
    const std::string_view context = dataset.context(example);
    std::vector<std::uint32_t> byte_at;
    byte_at.reserve(context.size() + 1);
    for (std::uint32_t b = 0; b < context.size(); ++b)
      if (!text::is_utf8_continuation(context[b])) byte_at.push_back(b);
    byte_at.push_back(static_cast<std::uint32_t>(context.size()));
    const auto cut = [&](std::uint32_t begin, std::uint32_t end) {
      const std::size_t last = byte_at.size() - 1;  // Python slicing clamps to the string
      begin = static_cast<std::uint32_t>(std::min<std::size_t>(begin, last));
      end = static_cast<std::uint32_t>(std::min<std::size_t>(end, last));
      return end <= begin ? std::string() : std::string(context.substr(byte_at[begin], byte_at[end] - byte_at[begin]));
    };

    std::vector<qa_candidate> candidates;
    std::vector<double> scores;
    for (const auto& p : prelim) {
      candidates.push_back({cut(p.begin, p.end), p.start_logit, p.end_logit, 0.0, false});
      scores.push_back(p.score);
    }
    bool wide = false;  // run_qa.py's placeholder has a Python float score, which makes numpy compute in float64
    if (candidates.empty() || (candidates.size() == 1 && candidates.front().text.empty())) {
      candidates.insert(candidates.begin(), qa_candidate{"empty", 0.0f, 0.0f, 0.0, true});
      scores.insert(scores.begin(), 0.0);
      wide = true;
    }
    const auto probs = detail::probabilities(scores, wide);
    for (std::size_t i = 0; i < candidates.size(); ++i) candidates[i].probability = probs[i];

    if (!options.version_2_with_negative) {
      out.predictions.emplace_back(example.id, candidates.front().text);
    } else {
      std::size_t best = 0;
      while (best + 1 < candidates.size() && candidates[best].text.empty()) ++best;
      const float null_score = min_null ? min_null->score : 0.0f;
      // run_qa.py subtracts numpy float32 scalars: the difference is a float32.
      const float diff = null_score - candidates[best].start_logit - candidates[best].end_logit;
      out.null_odds.emplace_back(example.id, static_cast<double>(diff));
      out.predictions.emplace_back(
          example.id, static_cast<double>(diff) > options.null_score_diff_threshold ? std::string() : candidates[best].text);
    }
    out.nbest.emplace_back(example.id, std::move(candidates));
  }
  return out;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// predictions.json, nbest_predictions.json and (for SQuAD v2) null_odds.json in `dir`, named with
/// "<prefix>_" in front when a prefix is given, in run_qa.py's layout (4-space indent, non-ASCII escaped, keys in
/// its order). Each file is replaced atomically.
CPUTRAIN_DECL void write_qa_predictions(const qa_predictions_output& out, const std::filesystem::path& dir,
                                        const std::string& prefix = {});

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void write_qa_predictions(const qa_predictions_output& out, const std::filesystem::path& dir,
                                        const std::string& prefix) {
  const auto name = [&](const char* file) { return dir / (prefix.empty() ? std::string(file) : prefix + "_" + file); };
  const auto dump = [](const nlohmann::ordered_json& j) { return j.dump(4, ' ', true) + "\n"; };

  nlohmann::ordered_json predictions = nlohmann::ordered_json::object();
  for (const auto& [id, text] : out.predictions) predictions[id] = text;
  nlohmann::ordered_json nbest = nlohmann::ordered_json::object();
  for (const auto& [id, candidates] : out.nbest) {
    auto& list = nbest[id] = nlohmann::ordered_json::array();
    for (const auto& c : candidates) {
      nlohmann::ordered_json entry;
      if (c.placeholder) {
        entry["text"] = c.text;
        entry["start_logit"] = 0.0;
        entry["end_logit"] = 0.0;
      } else {
        entry["start_logit"] = static_cast<double>(c.start_logit);
        entry["end_logit"] = static_cast<double>(c.end_logit);
        entry["text"] = c.text;
      }
      entry["probability"] = c.probability;
      list.push_back(std::move(entry));
    }
  }
  io::write_file_atomically(name("predictions.json"), dump(predictions));
  io::write_file_atomically(name("nbest_predictions.json"), dump(nbest));
  if (!out.null_odds.empty()) {
    nlohmann::ordered_json odds = nlohmann::ordered_json::object();
    for (const auto& [id, v] : out.null_odds) odds[id] = v;
    io::write_file_atomically(name("null_odds.json"), dump(odds));
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
