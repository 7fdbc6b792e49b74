// cputrain::cli::detail::value_from_text — a flag's text as its field's value, by HfArgumentParser's rules: truth
// values in any of Python's spellings, Python's int() and float() (a leading + too), and a usage_error naming the
// flag, the text and what was expected otherwise.
#pragma once

#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "cputrain/train/option_checks.hpp"

namespace cputrain::cli::detail {

using train::checks::bad_flag_value;

/// transformers.hf_argparser.string_to_bool.
inline bool bool_from_text(std::string_view name, const std::string& text) {
  std::string lower;
  for (const char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "yes" || lower == "true" || lower == "t" || lower == "y" || lower == "1") return true;
  if (lower == "no" || lower == "false" || lower == "f" || lower == "n" || lower == "0") return false;
  bad_flag_value(name, text, "expected a truth value: yes/no, true/false, t/f, y/n or 1/0 (in any case)");
}

// Python's int() and float() also take "+5"; from_chars does not, so the sign is skipped here.
inline std::string_view without_plus(std::string_view text) {
  return text.size() > 1 && text.front() == '+' && text[1] != '-' ? text.substr(1) : text;
}

/// Python's int(), within 32 bits.
inline int int_from_text(std::string_view name, const std::string& text) {
  const std::string_view digits = without_plus(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range) bad_flag_value(name, text, "out of the range of a 32-bit integer");
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    bad_flag_value(name, text, "not an integer");
  }
  return value;
}

/// Python's float().
inline double double_from_text(std::string_view name, const std::string& text) {
  const std::string_view digits = without_plus(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range) bad_flag_value(name, text, "out of the range of a double");
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    bad_flag_value(name, text, "not a number");
  }
  return value;
}

/// The value type of a field: T for T and for std::optional<T>.
template <class T>
struct args_value {
  using type = T;
};
template <class T>
struct args_value<std::optional<T>> {
  using type = T;
};

/// The text of flag `name` as a T (bool, int, double or std::string).
template <class T>
T value_from_text(std::string_view name, const std::string& text) {
  if constexpr (std::is_same_v<T, bool>) {
    return bool_from_text(name, text);
  } else if constexpr (std::is_same_v<T, int>) {
    return int_from_text(name, text);
  } else if constexpr (std::is_same_v<T, double>) {
    return double_from_text(name, text);
  } else {
    static_assert(std::is_same_v<T, std::string>);
    return text;
  }
}

}  // namespace cputrain::cli::detail
