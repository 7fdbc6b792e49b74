// cputrain::train::best_model — how Hugging Face's Trainer ranks evaluations during training: the metric that
// decides (metric_for_best_model, "eval_" put in front), whether it beat the best so far, EarlyStoppingCallback's
// patience rule, and the order in which save_total_limit deletes checkpoints so that the best one survives.
#pragma once

#include "cputrain/train/training_options.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::train {

/// The metric that ranks evaluations and which way is better.
struct best_model_rule {
  std::string key;  // "eval_loss", "eval_f1", ...
  bool greater = false;

  [[nodiscard]] static best_model_rule of(const training_options& options) {
    return {options.best_metric_key(), options.best_metric_greater()};
  }

  /// Whether `value` beats `best` (strictly, as the Trainer's np.greater / np.less); anything beats none.
  [[nodiscard]] bool improves(double value, const std::optional<double>& best) const {
    if (!best) return true;
    return greater ? value > *best : value < *best;
  }

  /// EarlyStoppingCallback's test: better than the best by more than `threshold`.
  [[nodiscard]] bool improves_by(double value, const std::optional<double>& best, double threshold) const {
    return !best || (improves(value, best) && std::abs(value - *best) > threshold);
  }

  /// The ranked metric of one evaluation; usage_error listing the metrics there are when it is missing.
  [[nodiscard]] double value_in(const nlohmann::ordered_json& metrics) const;
};

/// The checkpoints in the order save_total_limit deletes them (oldest first), as the Trainer orders them: the best
/// one moved to the second-to-last place, so that only a newer best or the latest checkpoint outlives it. With a
/// limit of 1 and a best that is not the latest, two are kept. Returns how many of `sorted` (by step) to delete.
[[nodiscard]] CPUTRAIN_DECL std::size_t checkpoints_to_delete(std::vector<std::filesystem::path>& sorted,
                                                              std::size_t limit,
                                                              const std::optional<std::filesystem::path>& best);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL double best_model_rule::value_in(const nlohmann::ordered_json& metrics) const {
  const auto it = metrics.find(key);
  if (it != metrics.end() && it->is_number()) return it->get<double>();
  std::string names;
  for (auto m = metrics.begin(); m != metrics.end(); ++m) {
    if (m.value().is_number()) names += (names.empty() ? "" : ", ") + m.key();
  }
  throw usage_error("--metric_for_best_model: the evaluation has no number \"" + key + "\"; it reports " +
                    (names.empty() ? std::string("none") : names));
}

CPUTRAIN_DECL std::size_t checkpoints_to_delete(std::vector<std::filesystem::path>& sorted, std::size_t limit,
                                               const std::optional<std::filesystem::path>& best) {
  if (best) {
    const auto it = std::find(sorted.begin(), sorted.end(), *best);
    if (it != sorted.end()) {
      for (auto i = static_cast<std::size_t>(it - sorted.begin()); i + 2 < sorted.size(); ++i)
        std::swap(sorted[i], sorted[i + 1]);
    }
    if (limit == 1 && !sorted.empty() && sorted.back() != *best) limit = 2;
  }
  return sorted.size() > limit ? sorted.size() - limit : 0;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
