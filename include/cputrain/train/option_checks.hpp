// cputrain::train::checks — the rules an option's value must follow, each a usage_error that names the option by
// its Hugging Face flag, the value and the rule ("--logging_steps 0: must be >= 1"). Shared by training_options
// and the command line (cli/validate_args.hpp).
#pragma once

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::train::checks {

/// Whether T is a std::optional (an option that may be unset, written as null).
template <class T>
inline constexpr bool is_optional = false;
template <class T>
inline constexpr bool is_optional<std::optional<T>> = true;

/// Shortest text that reads back as the same double (Python's repr), for messages and the help's defaults.
CPUTRAIN_DECL std::string number_text(double x);

/// "--name".
inline std::string flag(std::string_view name) { return "--" + std::string(name); }

/// usage_error "--name value: rule".
[[noreturn]] CPUTRAIN_DECL void bad_flag_value(std::string_view name, const std::string& value,
                                             const std::string& rule);

/// usage_error unless value >= least.
CPUTRAIN_DECL void check_at_least(std::string_view name, int value, int least);

/// usage_error unless the value, when there is one, is >= least.
inline void check_at_least(std::string_view name, const std::optional<int>& value, int least) {
  if (value) check_at_least(name, *value, least);
}

/// usage_error unless value is finite and >= 0.
CPUTRAIN_DECL void check_not_negative(std::string_view name, double value);

/// usage_error saying `why` unless value is one of `valid`.
CPUTRAIN_DECL void check_one_of(std::string_view name, const std::string& value,
                                std::initializer_list<const char*> valid, const std::string& why);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::string number_text(double x) {
  char buffer[32];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, written.ptr);
}

[[noreturn]] CPUTRAIN_DECL void bad_flag_value(std::string_view name, const std::string& value,
                                             const std::string& rule) {
  throw usage_error(flag(name) + " " + value + ": " + rule);
}

CPUTRAIN_DECL void check_at_least(std::string_view name, int value, int least) {
  if (value < least) bad_flag_value(name, std::to_string(value), "must be >= " + std::to_string(least));
}

CPUTRAIN_DECL void check_not_negative(std::string_view name, double value) {
  if (!(value >= 0 && std::isfinite(value))) bad_flag_value(name, number_text(value), "must be >= 0 and finite");
}

CPUTRAIN_DECL void check_one_of(std::string_view name, const std::string& value,
                                std::initializer_list<const char*> valid, const std::string& why) {
  for (const char* v : valid) {
    if (value == v) return;
  }
  bad_flag_value(name, value, why);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train::checks
