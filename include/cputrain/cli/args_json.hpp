// cputrain::cli — training_args as JSON: to_json (every field, in run_qa.py's order: what training_args.json in a
// checkpoint and in output_dir holds) and from_json (its inverse; also HfArgumentParser.parse_json_file's form,
// where missing keys keep their defaults). Types only: from_json checks no value and no path (args_file.hpp does).
#pragma once

#include "cputrain/cli/args_fields.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/cli/compat_flags.hpp"
#include "cputrain/cli/flag_values.hpp"
#include "cputrain/cli/training_args.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/core/json_message.hpp"
#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::cli {

namespace detail {

/// The arguments a JSON object holds; messages start with `source` (a file's name, or what the JSON is).
CPUTRAIN_DECL training_args args_from_json(const nlohmann::ordered_json& json, std::string_view source, program p);

}  // namespace detail

/// Every field of the program's (not the notices), in the scripts' order, as training_args.json in a checkpoint
/// holds them; an unset optional is null, as Python's None.
[[nodiscard]] CPUTRAIN_DECL nlohmann::ordered_json to_json(const training_args& args);

/// The fields of a JSON object as to_json writes it (or as HfArgumentParser.parse_json_file reads it: missing keys
/// keep their defaults). usage_error for an unknown key or a value of the wrong type, naming the key. Types only:
/// the values are not validated, so that a checkpoint's arguments read on another machine need not find its files.
[[nodiscard]] inline training_args from_json(const nlohmann::ordered_json& json, program p = program::qa) {
  return detail::args_from_json(json, "training arguments JSON", p);
}

#if CPUTRAIN_DEFINE_FUNCTIONS

namespace detail {

// The reader's helpers, compiled only where the functions are (core/separate_compilation.hpp).
/// Whether `value` nests arrays or objects more than `levels` deep; recurses at most `levels` times.
inline bool json_nests_deeper_than(const nlohmann::ordered_json& value, int levels) {
  if (!value.is_structured()) return false;
  if (levels == 0) return true;
  for (const auto& child : value) {
    if (json_nests_deeper_than(child, levels - 1)) return true;
  }
  return false;
}

/// A value as a message shows it: short, and never recursing deeper than 20 levels.
inline std::string json_value_text(const nlohmann::ordered_json& value) {
  // dump() recurses once per level, and from_json takes any caller's JSON: a value nested a million levels deep
  // must not overflow the stack just to be named in a message.
  constexpr int max_shown_nesting = 20;
  if (json_nests_deeper_than(value, max_shown_nesting)) {
    return std::string(value.is_array() ? "a list" : "an object") + " nested more than " +
           std::to_string(max_shown_nesting) + " levels deep";
  }
  return json_text_for_message(value);
}

/// usage_error "<source>: \"key\" is <value>, but must be <wanted>".
[[noreturn]] inline void bad_json_value(std::string_view source, std::string_view key,
                                        const nlohmann::ordered_json& value, const char* wanted) {
  throw usage_error(std::string(source) + ": \"" + std::string(key) + "\" is " + json_value_text(value) +
                    ", but must be " + wanted);
}

/// A JSON value as a T, with the types Hugging Face's dataclasses declare.
template <class T>
T value_from_json(std::string_view source, std::string_view key, const nlohmann::ordered_json& value) {
  if constexpr (std::is_same_v<T, bool>) {
    // A string "true" would be truthy to Python and "false" too: only JSON's booleans say what they mean.
    if (!value.is_boolean()) bad_json_value(source, key, value, "true or false");
    return value.get<bool>();
  } else if constexpr (std::is_same_v<T, int>) {
    // 8.0 is a float to Python, and a batch of 8.0 windows fails much later: integers are written as integers.
    if (value.is_number_unsigned()) {
      const auto v = value.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
        bad_json_value(source, key, value, "a 32-bit integer");
      }
      return static_cast<int>(v);
    }
    if (value.is_number_integer()) {
      const auto v = value.get<std::int64_t>();
      if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
        bad_json_value(source, key, value, "a 32-bit integer");
      }
      return static_cast<int>(v);
    }
    bad_json_value(source, key, value, "an integer");
  } else if constexpr (std::is_same_v<T, double>) {
    if (!value.is_number()) bad_json_value(source, key, value, "a number");
    return value.get<double>();
  } else {
    static_assert(std::is_same_v<T, std::string>);
    if (!value.is_string()) bad_json_value(source, key, value, "a string");
    return value.get<std::string>();
  }
}

/// Sets `field` from `value` (null resets an optional field).
inline void set_field_from_json(training_args& args, const args_field& field, std::string_view source,
                                const std::string& key, const nlohmann::ordered_json& value) {
  std::visit(
      [&]<class F>(F training_args::*member) {
        using T = typename args_value<F>::type;
        if constexpr (!std::is_same_v<T, F>) {
          if (value.is_null()) {
            args.*member = std::nullopt;
            return;
          }
        }
        args.*member = value_from_json<T>(source, key, value);
      },
      field.member);
}

/// Applies an extra flag given as a JSON value (null: not given).
inline void apply_extra_flag_from_json(training_args& args, const args_extra_flag& flag, std::string_view source,
                                       const std::string& key, const nlohmann::ordered_json& value) {
  if (value.is_null()) return;  // None: the flag was not given
  // Hugging Face's own training_args.json writes report_to as a list.
  std::vector<std::string> texts;
  if (key == "report_to" && value.is_array()) {
    for (const auto& item : value) texts.push_back(value_from_json<std::string>(source, key, item));
  } else if (flag.boolean) {
    texts.emplace_back(value_from_json<bool>(source, key, value) ? "true" : "false");
  } else {
    texts.push_back(value_from_json<std::string>(source, key, value));
  }
  try {
    for (const std::string& text : texts) apply_extra_flag(args, key, text);
  } catch (const usage_error& e) {
    throw usage_error(std::string(source) + ": " + e.what());
  }
}

CPUTRAIN_DECL training_args args_from_json(const nlohmann::ordered_json& json, std::string_view source, program p) {
  if (!json.is_object()) {
    throw usage_error(std::string(source) + ": the top level is " + std::string(json.type_name()) +
                      ", not a JSON object of arguments");
  }
  training_args args = defaults_for(p);
  for (auto it = json.begin(); it != json.end(); ++it) {
    const args_field* f = find_field(it.key());
    if (f != nullptr && !f->taken_by(p)) {
      throw usage_error(std::string(source) + ": \"" + it.key() + "\" is " + programs_taking(*f) + "'s, not " +
                        program_name(p) + "'s");
    }
    if (f != nullptr) {
      set_field_from_json(args, *f, source, it.key(), it.value());
    } else if (const args_extra_flag* x = find_extra_flag(it.key())) {
      apply_extra_flag_from_json(args, *x, source, it.key(), it.value());
    } else {
      throw usage_error(std::string(source) + ": unknown key \"" + it.key() +
                        "\"; the keys are the names of " + program_name(p) + "'s flags without the leading --");
    }
  }
  apply_post_init(args);
  return args;
}

}  // namespace detail

CPUTRAIN_DECL nlohmann::ordered_json to_json(const training_args& args) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const detail::args_field& f : detail::args_fields) {
    if (!f.taken_by(args.which)) continue;
    std::visit(
        [&]<class F>(F training_args::*member) {
          const F& value = args.*member;
          if constexpr (train::checks::is_optional<F>) {
            json[f.name] = value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
          } else {
            json[f.name] = value;
          }
        },
        f.member);
  }
  return json;
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::cli
