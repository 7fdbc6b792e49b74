// cputrain::optim::lr_schedule — Hugging Face's learning-rate schedules (linear, cosine, constant,
// constant_with_warmup) and the warmup_ratio rule. lr(k) is the rate of the step after k steps, computed in double
// so it equals LambdaLR's bit for bit: pass it to adamw::step unrounded.
#pragma once

#include "cputrain/core/separate_compilation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <string_view>
#include <utility>

#include "cputrain/core/error.hpp"
#include "cputrain/optim/param_ranges.hpp"

namespace cputrain::optim {

enum class schedule_kind { linear, cosine, constant, constant_with_warmup };

namespace detail {
inline constexpr std::array<std::pair<std::string_view, schedule_kind>, 4> schedule_names{{
    {"linear", schedule_kind::linear},
    {"cosine", schedule_kind::cosine},
    {"constant", schedule_kind::constant},
    {"constant_with_warmup", schedule_kind::constant_with_warmup},
}};
}  // namespace detail

/// Hugging Face's name of the schedule (the value of --lr_scheduler_type).
CPUTRAIN_DECL std::string_view to_string(schedule_kind kind);

/// The schedule called `name` by Hugging Face; usage_error, listing the names it knows, for any other.
CPUTRAIN_DECL schedule_kind parse_schedule(std::string_view name);

/// Warmup steps for a --warmup_ratio, as TrainingArguments.get_warmup_steps computes them when --warmup_steps is 0:
/// math.ceil(num_training_steps * warmup_ratio) in double, so a product that rounds just above an integer counts
/// one step more (0.07 * 100 gives 8). The ratio must lie in [0, 1], as TrainingArguments requires.
CPUTRAIN_DECL std::int64_t warmup_steps_from_ratio(double ratio, std::int64_t total_steps);

/// A learning-rate schedule: base_lr times a multiplier of the completed-step count.
struct lr_schedule {
  /// Hugging Face's default
  schedule_kind kind = schedule_kind::linear;
  /// --learning_rate
  double base_lr = 5e-5;
  /// --warmup_steps, or warmup_steps_from_ratio()
  std::int64_t warmup_steps = 0;
  /// optimizer steps of the whole run (max_steps)
  std::int64_t total_steps = 0;

  /// usage_error naming the first field out of range: base_lr >= 0 and finite, warmup_steps >= 0, total_steps >= 0.
  void validate() const;

  /// The lambda of transformers' get_<kind>_schedule_with_warmup at `step` completed steps (step >= 0). Past
  /// total_steps, linear stays at 0 and cosine (num_cycles 0.5) rises again, as Hugging Face's formula does.
  double multiplier(std::int64_t step) const;

  /// base_lr * multiplier(step): the learning rate of optimizer step step + 1, LambdaLR's value exactly.
  double lr(std::int64_t step) const { return base_lr * multiplier(step); }
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::string_view to_string(schedule_kind kind) {
  for (const auto& [name, k] : detail::schedule_names) {
    if (k == kind) return name;
  }
  throw usage_error("cputrain::optim::to_string: schedule_kind " + std::to_string(static_cast<int>(kind)) +
                    " is not a schedule");
}

CPUTRAIN_DECL schedule_kind parse_schedule(std::string_view name) {
  std::string valid;
  for (const auto& [n, kind] : detail::schedule_names) {
    if (n == name) return kind;
    valid += valid.empty() ? "" : ", ";
    valid += n;
  }
  throw usage_error("cputrain::optim::parse_schedule: unknown lr_scheduler_type \"" + std::string(name) +
                    "\"; valid names: " + valid);
}

CPUTRAIN_DECL std::int64_t warmup_steps_from_ratio(double ratio, std::int64_t total_steps) {
  if (!(ratio >= 0 && ratio <= 1)) {
    throw usage_error("cputrain::optim::warmup_steps_from_ratio: warmup_ratio = " + detail::number_text(ratio) +
                      " must lie in [0, 1]");
  }
  if (total_steps < 0) {
    throw usage_error("cputrain::optim::warmup_steps_from_ratio: total_steps = " + std::to_string(total_steps) +
                      " must be >= 0");
  }
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(total_steps) * ratio));
}

CPUTRAIN_DECL void lr_schedule::validate() const {
  if (!(base_lr >= 0 && std::isfinite(base_lr))) {
    throw usage_error("cputrain::optim::lr_schedule: base_lr = " + detail::number_text(base_lr) +
                      " must be >= 0 and finite");
  }
  if (warmup_steps < 0) {
    throw usage_error("cputrain::optim::lr_schedule: warmup_steps = " + std::to_string(warmup_steps) +
                      " must be >= 0");
  }
  if (total_steps < 0) {
    throw usage_error("cputrain::optim::lr_schedule: total_steps = " + std::to_string(total_steps) +
                      " must be >= 0");
  }
}

CPUTRAIN_DECL double lr_schedule::multiplier(std::int64_t step) const {
  validate();
  if (step < 0) {
    throw usage_error("cputrain::optim::lr_schedule: step = " + std::to_string(step) + " must be >= 0");
  }
  const auto d = [](std::int64_t x) { return static_cast<double>(x); };
  const std::int64_t warmup_divisor = std::max<std::int64_t>(1, warmup_steps);
  switch (kind) {
    case schedule_kind::constant:
      return 1.0;
    case schedule_kind::constant_with_warmup:
      return step < warmup_steps ? d(step) / d(warmup_divisor) : 1.0;
    case schedule_kind::linear:
      if (step < warmup_steps) return d(step) / d(warmup_divisor);
      return std::max(0.0, d(total_steps - step) / d(std::max<std::int64_t>(1, total_steps - warmup_steps)));
    case schedule_kind::cosine: {
      if (step < warmup_steps) return d(step) / d(warmup_divisor);
      const double progress =
          d(step - warmup_steps) / d(std::max<std::int64_t>(1, total_steps - warmup_steps));
      constexpr double num_cycles = 0.5;
      // Python's left-to-right order: ((pi * num_cycles) * 2.0) * progress.
      return std::max(0.0, 0.5 * (1.0 + std::cos(std::numbers::pi * num_cycles * 2.0 * progress)));
    }
  }
  throw usage_error("cputrain::optim::lr_schedule: kind " + std::to_string(static_cast<int>(kind)) +
                    " is not a schedule");
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::optim
