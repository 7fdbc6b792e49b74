// cputrain::cli::parse_training_args — a program's command line read as HfArgumentParser reads it, with
// Boost.Program_options: a boolean alone means true and also takes yes/no, true/false, t/f, y/n, 1/0; a boolean
// whose default is true also has --no_<name>; --do-train is --do_train; the last of repeated flags wins; no flag
// may be abbreviated; a single argument ending in .json is an args.json file (args_file.hpp); -h prints the help.
#pragma once

#include "cputrain/cli/args_file.hpp"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <boost/program_options/errors.hpp>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/value_semantic.hpp>

#include "cputrain/cli/args_fields.hpp"
#include "cputrain/cli/compat_flags.hpp"
#include "cputrain/cli/flag_values.hpp"
#include "cputrain/cli/training_args.hpp"
#include "cputrain/cli/validate_args.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/train/option_checks.hpp"

namespace cputrain::cli {

/// What parse_training_args found: the arguments, or a request for help (then args is not validated).
struct parsed_command_line {
  training_args args;
  bool help = false;
  std::string help_text;
};

namespace detail {

namespace po = boost::program_options;

/// A field's default as --help shows it ("" for an unset optional).
inline std::string default_text(const training_args& defaults, const args_member& member) {
  return std::visit(
      [&]<class F>(F training_args::*m) -> std::string {
        const F& value = defaults.*m;
        if constexpr (std::is_same_v<F, bool>) {
          return value ? "true" : "false";
        } else if constexpr (std::is_same_v<F, int>) {
          return std::to_string(value);
        } else if constexpr (std::is_same_v<F, double>) {
          return train::checks::number_text(value);
        } else if constexpr (std::is_same_v<F, std::string>) {
          return value;
        } else {
          return "";  // optional: unset
        }
      },
      member);
}

/// The value's type as argparse names it in --help.
inline const char* value_name(const args_member& member) {
  return std::visit(
      []<class F>(F training_args::*) -> const char* {
        using T = typename args_value<F>::type;
        if constexpr (std::is_same_v<T, bool>) {
          return "bool";
        } else if constexpr (std::is_same_v<T, int>) {
          return "int";
        } else if constexpr (std::is_same_v<T, double>) {
          return "float";
        } else {
          return "str";
        }
      },
      member);
}

/// Whether the field is a boolean (a flag alone means true), maybe unset (greater_is_better).
inline bool is_bool(const args_member& member) {
  return std::holds_alternative<bool training_args::*>(member) ||
         std::holds_alternative<std::optional<bool> training_args::*>(member);
}

/// Whether the field is a boolean whose default is true: it has --no_<name> too.
inline bool has_no_flag(const training_args& defaults, const args_member& member) {
  const auto* b = std::get_if<bool training_args::*>(&member);
  return b != nullptr && defaults.**b;
}

/// A boolean flag's value: optional, "true" when absent.
inline po::typed_value<std::string>* bool_value() {
  return po::value<std::string>()->value_name("bool")->implicit_value("true");
}

/// The options, grouped as --help shows them. Values stay text: converting them here gives messages that name the
/// flag and the rule, and leaves repeated flags to the last one, as argparse does.
CPUTRAIN_DECL po::options_description args_options(const std::string& caption, program p);

/// "--do-train" is "--do_train", as HfArgumentParser registers both spellings of every flag.
inline std::string underscored(const std::string& token) {
  if (token.size() < 3 || token.compare(0, 2, "--") != 0) return token;
  std::string out = token;
  const std::size_t end = std::min(out.find('='), out.size());
  std::replace(out.begin() + 2, out.begin() + static_cast<std::ptrdiff_t>(end), '-', '_');
  return out;
}

/// Sets the field (or applies the extra flag) that one parsed option names.
inline void apply_option(training_args& args, const po::option& option) {
  const std::string& name = option.string_key;
  if (name.empty()) {
    throw usage_error("unexpected argument \"" + option.value.front() + "\": every value follows its --flag (" +
                      program_name(args.which) + " --help lists them)");
  }
  const std::string text = option.value.empty() ? "true" : option.value.front();
  if (const args_field* f = find_field(name)) {
    std::visit(
        [&]<class F>(F training_args::*member) {
          args.*member = value_from_text<typename args_value<F>::type>(name, text);
        },
        f->member);
  } else if (name.rfind("no_", 0) == 0 && find_field(name.substr(3)) &&
             has_no_flag(defaults_for(args.which), find_field(name.substr(3))->member)) {
    args.*std::get<bool training_args::*>(find_field(name.substr(3))->member) = false;
  } else if (find_extra_flag(name)) {
    apply_extra_flag(args, name, text);
  } else {
    throw usage_error("cputrain::cli: no handler for --" + name);
  }
}

/// What --help prints.
inline std::string help_text(const std::string& name, program p) {
  std::ostringstream text;
  text << "Usage: " << name << " [options]\n       " << name
       << " args.json    (the same options as one JSON object)\n\n"
       << args_options("Options", p);
  return text.str();
}

/// The message for a flag the program does not take: another program's, or none at all.
inline std::string unknown_flag_message(const po::unknown_option& e, const std::string& name, program p) {
  std::string flag = e.get_option_name();
  flag.erase(0, flag.find_first_not_of('-'));
  if (const args_field* f = find_field(flag)) {
    return "--" + flag + " is " + programs_taking(*f) + "'s flag; " + program_name(p) + " does not take it (" +
           name + " --help lists its flags)";
  }
  return std::string(e.what()) + " (" + name + " --help lists the flags cputrain accepts)";
}

}  // namespace detail

/// Program `p`'s command line, as its Python script reads it: flags (see the header comment), or a single argument
/// ending in ".json" naming a file of them. --help or -h anywhere returns the help text instead. The arguments are
/// validated; every mistake is a usage_error naming the flag.
[[nodiscard]] CPUTRAIN_DECL parsed_command_line parse_training_args(int argc, const char* const* argv,
                                                                    cli::program p = cli::program::qa);

#if CPUTRAIN_DEFINE_FUNCTIONS

namespace detail {

CPUTRAIN_DECL po::options_description args_options(const std::string& caption, program p) {
  po::options_description model("Model", 80, 40), data("Data", 80, 40), training("Training", 80, 40),
      compat("Compatibility (accepted, no effect)", 80, 40);
  const auto group = [&](args_group g) -> po::options_description& {
    switch (g) {
      case args_group::model:
        return model;
      case args_group::data:
        return data;
      case args_group::training:
        return training;
      case args_group::compatibility:
        break;
    }
    return compat;
  };
  const training_args defaults = defaults_for(p);
  for (const args_field& f : args_fields) {
    if (!f.taken_by(p)) continue;
    std::string help = f.help;
    if (const std::string d = default_text(defaults, f.member); !d.empty()) help += " (default: " + d + ")";
    if (is_bool(f.member)) {
      group(f.group).add_options()(f.name, bool_value(), help.c_str());
      if (has_no_flag(defaults, f.member)) {
        const std::string no = std::string("no_") + f.name;
        group(f.group).add_options()(no.c_str(), po::value<std::string>()->zero_tokens(),
                                     ("Set --" + std::string(f.name) + " false").c_str());
      }
    } else {
      group(f.group).add_options()(f.name, po::value<std::string>()->value_name(value_name(f.member)),
                                   help.c_str());
    }
  }
  for (const args_extra_flag& x : args_extra_flags) {
    if (x.boolean) {
      group(x.group).add_options()(x.name, bool_value(), x.help);
    } else {
      group(x.group).add_options()(x.name, po::value<std::string>()->value_name("str"), x.help);
    }
  }
  po::options_description all(caption, 80, 40);
  all.add_options()("help,h", "Print this help and exit");
  all.add(model).add(data).add(training).add(compat);
  return all;
}

}  // namespace detail

CPUTRAIN_DECL parsed_command_line parse_training_args(int argc, const char* const* argv, cli::program p) {
  namespace po = boost::program_options;
  const std::string command = argc > 0 && argv[0] != nullptr ? std::filesystem::path(argv[0]).filename().string()
                                                              : std::string(program_name(p));
  std::vector<std::string> tokens;
  for (int i = 1; i < argc; ++i) tokens.push_back(detail::underscored(argv[i]));

  parsed_command_line result;
  result.args = defaults_for(p);
  // argparse acts on -h as soon as it meets it, whatever else is wrong with the line.
  if (std::find_if(tokens.begin(), tokens.end(), [](const std::string& t) { return t == "-h" || t == "--help"; }) !=
      tokens.end()) {
    result.help = true;
    result.help_text = detail::help_text(command, p);
    return result;
  }
  // run_qa.py's rule, except that "--train_file=x.json" alone is a flag (its missing companions are the error).
  if (argc == 2 && std::string_view(argv[1]).ends_with(".json") && !std::string_view(argv[1]).starts_with("-")) {
    result.args = read_training_args_json(argv[1], p);
    return result;
  }

  const po::options_description options = detail::args_options(command, p);
  po::parsed_options parsed(&options);
  try {
    // No abbreviations: a typo must not silently become another flag.
    parsed = po::command_line_parser(tokens)
                 .options(options)
                 .style(po::command_line_style::unix_style & ~po::command_line_style::allow_guessing)
                 .run();
  } catch (const po::unknown_option& e) {
    throw usage_error(detail::unknown_flag_message(e, command, p));
  } catch (const po::error& e) {
    throw usage_error(e.what());
  }
  for (const po::option& option : parsed.options) detail::apply_option(result.args, option);
  detail::apply_post_init(result.args);
  validate(result.args);
  return result;
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::cli
