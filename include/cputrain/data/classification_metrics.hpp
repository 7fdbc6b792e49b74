// The metrics run_glue reports, computed as the libraries behind Hugging Face's `glue` metric compute them:
// accuracy, binary F1 (scikit-learn's f1_score), Matthews correlation (matthews_corrcoef, any number of classes),
// Pearson and Spearman correlation (SciPy's pearsonr and spearmanr: average ranks for ties, NaN for a constant
// input), and glue_metrics(task, ...) with run_glue's combined_score. Equal to those libraries to about 1e-15 on
// the fixtures; summation order may differ in the last bits.
#pragma once

#include "cputrain/data/data_error.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::data {

namespace detail {

inline void same_length(std::size_t a, std::size_t b, const char* what) {
  if (a != b)
    throw data_error(std::string(what) + ": " + std::to_string(a) + " predictions but " + std::to_string(b) +
                     " labels");
  if (a == 0) throw data_error(std::string(what) + ": no predictions");
}

}  // namespace detail

/// The share of predictions equal to their label.
CPUTRAIN_DECL double accuracy(std::span<const std::int64_t> predictions, std::span<const std::int64_t> labels);

/// F1 of the positive class 1 (scikit-learn's average="binary"); 0 when there is no true or predicted positive.
/// Throws data_error for a label or prediction outside {0, 1}, as scikit-learn refuses multiclass targets here.
CPUTRAIN_DECL double binary_f1(std::span<const std::int64_t> predictions, std::span<const std::int64_t> labels);

/// Matthews correlation over any number of classes (scikit-learn's confusion-matrix form); 0 when either side has
/// one class only.
CPUTRAIN_DECL double matthews_corrcoef(std::span<const std::int64_t> predictions, std::span<const std::int64_t> labels);

/// Pearson's r (SciPy's pearsonr); NaN when either input is constant. Throws data_error for fewer than 2 values.
CPUTRAIN_DECL double pearson(std::span<const double> x, std::span<const double> y);

/// Ranks from 1, ties sharing their average rank (SciPy's rankdata, method "average").
CPUTRAIN_DECL std::vector<double> average_ranks(std::span<const double> v);

/// Spearman's rho (SciPy's spearmanr): Pearson's r of the average ranks.
CPUTRAIN_DECL double spearman(std::span<const double> x, std::span<const double> y);

/// What run_glue reports for a GLUE task, as the `glue` metric computes it: cola Matthews correlation; stsb Pearson
/// and Spearman (regression: `scores`); mrpc and qqp accuracy and F1; the others accuracy. With more than one
/// metric, combined_score is their mean. Class tasks take `predictions` and `labels`; stsb takes `scores` and
/// `targets`. Throws data_error for a task GLUE does not have.
CPUTRAIN_DECL std::map<std::string, double> glue_metrics(const std::string& task,
                                                         std::span<const std::int64_t> predictions,
                                                         std::span<const std::int64_t> labels,
                                                         std::span<const double> scores = {},
                                                         std::span<const double> targets = {});

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL double accuracy(std::span<const std::int64_t> predictions, std::span<const std::int64_t> labels) {
  detail::same_length(predictions.size(), labels.size(), "accuracy");
  std::size_t right = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) right += predictions[i] == labels[i];
  return static_cast<double>(right) / static_cast<double>(labels.size());
}

CPUTRAIN_DECL double binary_f1(std::span<const std::int64_t> predictions, std::span<const std::int64_t> labels) {
  detail::same_length(predictions.size(), labels.size(), "f1");
  double tp = 0, fp = 0, fn = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if ((labels[i] != 0 && labels[i] != 1) || (predictions[i] != 0 && predictions[i] != 1))
      throw data_error("f1: label or prediction " + std::to_string(labels[i] != 0 && labels[i] != 1 ? labels[i] : predictions[i]) +
                       " at " + std::to_string(i) + "; binary F1 takes classes 0 and 1");
    tp += predictions[i] == 1 && labels[i] == 1;
    fp += predictions[i] == 1 && labels[i] == 0;
    fn += predictions[i] == 0 && labels[i] == 1;
  }
  const double precision = tp + fp > 0 ? tp / (tp + fp) : 0.0;
  const double recall = tp + fn > 0 ? tp / (tp + fn) : 0.0;
  const double denominator = precision + recall;
  return denominator == 0.0 ? 0.0 : 2.0 * precision * recall / denominator;
}

CPUTRAIN_DECL double matthews_corrcoef(std::span<const std::int64_t> predictions, std::span<const std::int64_t> labels) {
  detail::same_length(predictions.size(), labels.size(), "matthews_correlation");
  std::map<std::int64_t, std::pair<double, double>> sums;  // class -> (true count, predicted count)
  double correct = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    sums[labels[i]].first += 1;
    sums[predictions[i]].second += 1;
    correct += predictions[i] == labels[i];
  }
  const auto n = static_cast<double>(labels.size());
  double t_dot_p = 0, p_dot_p = 0, t_dot_t = 0;
  for (const auto& [label, s] : sums) {
    t_dot_p += s.first * s.second;
    p_dot_p += s.second * s.second;
    t_dot_t += s.first * s.first;
  }
  const double cov_tp = correct * n - t_dot_p, cov_pp = n * n - p_dot_p, cov_tt = n * n - t_dot_t;
  if (cov_pp * cov_tt == 0) return 0.0;
  return cov_tp / std::sqrt(cov_tt * cov_pp);
}

CPUTRAIN_DECL double pearson(std::span<const double> x, std::span<const double> y) {
  detail::same_length(x.size(), y.size(), "pearson");
  if (x.size() < 2) throw data_error("pearson: needs at least 2 values");
  const auto constant = [](std::span<const double> v) {
    return std::all_of(v.begin(), v.end(), [&](double a) { return a == v[0]; });
  };
  if (constant(x) || constant(y)) return std::numeric_limits<double>::quiet_NaN();
  const auto n = static_cast<double>(x.size());
  const double x_mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double y_mean = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double xx = 0, yy = 0, xy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double a = x[i] - x_mean, b = y[i] - y_mean;
    xx += a * a;
    yy += b * b;
    xy += a * b;
  }
  return std::clamp(xy / (std::sqrt(xx) * std::sqrt(yy)), -1.0, 1.0);
}

CPUTRAIN_DECL std::vector<double> average_ranks(std::span<const double> v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

CPUTRAIN_DECL double spearman(std::span<const double> x, std::span<const double> y) {
  detail::same_length(x.size(), y.size(), "spearmanr");
  const auto rx = average_ranks(x), ry = average_ranks(y);
  return pearson(rx, ry);
}

CPUTRAIN_DECL std::map<std::string, double> glue_metrics(const std::string& task,
                                                         std::span<const std::int64_t> predictions,
                                                         std::span<const std::int64_t> labels,
                                                         std::span<const double> scores,
                                                         std::span<const double> targets) {
  std::map<std::string, double> out;
  if (task == "cola") {
    out["matthews_correlation"] = matthews_corrcoef(predictions, labels);
  } else if (task == "stsb") {
    out["pearson"] = pearson(scores, targets);
    out["spearmanr"] = spearman(scores, targets);
  } else if (task == "mrpc" || task == "qqp") {
    out["accuracy"] = accuracy(predictions, labels);
    out["f1"] = binary_f1(predictions, labels);
  } else if (task == "sst2" || task == "mnli" || task == "mnli_mismatched" || task == "mnli_matched" ||
             task == "qnli" || task == "rte" || task == "wnli" || task == "hans") {
    out["accuracy"] = accuracy(predictions, labels);
  } else {
    throw data_error("--task_name " + task +
                     ": not a GLUE task (cola, mnli, mrpc, qnli, qqp, rte, sst2, stsb, wnli)");
  }
  if (out.size() > 1) {
    double sum = 0;
    for (const auto& [name, value] : out) sum += value;
    out["combined_score"] = sum / static_cast<double>(out.size());
  }
  return out;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
