// The CSV and JSON files Hugging Face's example scripts load with datasets.load_dataset("csv" | "json", data_files=...)
// (run_glue.py, run_ner.py, run_mlm.py), read into a dataset_table whose columns have the types datasets would give
// them, since the scripts decide from those types (a float64 label means regression): read_dataset_table(path) for
// .csv, .json and .jsonl, parse_csv_table and parse_json_table for bytes in memory. CSV cells are typed as pandas'
// read_csv types them, JSON values as pyarrow does; a mixed JSON column, a ragged CSV row, invalid UTF-8 or JSON and
// a file without rows are refused with a data_error naming the file, the line and the column. Cells are
// nlohmann::json (null where empty or missing), read through checked accessors that name the same.
#pragma once

#include "cputrain/core/json_message.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/data/data_error.hpp"
#include "cputrain/io/read_file.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::data {

/// A column's type, as the feature Hugging Face datasets would give it (Value("int64"), List(Value("string")), ...).
enum class column_type {
  /// every cell null; only from JSON (an all-empty CSV column is float64, as pandas reads it)
  null_only,
  boolean,
  integer,
  floating,
  string,
  list_of_strings,
  list_of_integers,
  list_of_floats,
  /// an object, or a list of lists, objects, booleans or nulls only: read it with dataset_table::cell
  other
};

/// The type's name in messages, after the Hugging Face dtype ("int64", "float64", "list of string", ...).
[[nodiscard]] constexpr std::string_view column_type_name(column_type type) noexcept {
  switch (type) {
    case column_type::null_only: return "null";
    case column_type::boolean: return "bool";
    case column_type::integer: return "int64";
    case column_type::floating: return "float64";
    case column_type::string: return "string";
    case column_type::list_of_strings: return "list of string";
    case column_type::list_of_integers: return "list of int64";
    case column_type::list_of_floats: return "list of float64";
    case column_type::other: return "nested (an object, or a list of lists, objects or booleans)";
  }
  return "unknown";
}

/// A dataset file as columns. The accessors take a row (from 0) and a column name and throw data_error naming the
/// file, the row's line and the column when the column is missing, has another type, or the cell is null.
struct dataset_table {
  /// the file's name, which starts every message
  std::string source;
  /// in file order: the CSV header (empty names become "Unnamed: <i>", repeats "<name>.1", as in pandas), or the
  /// JSON keys in the order they are first seen
  std::vector<std::string> column_names;
  /// column_types[c] is the type of column_names[c]
  std::vector<column_type> column_types;
  /// columns[c][r] is row r's cell in column c; null where the CSV cell is empty (or "NA", "nan", ... as pandas
  /// reads them) or the JSON row lacks the key or holds null. A float64 column may hold JSON integers.
  std::vector<std::vector<nlohmann::json>> columns;
  /// row_lines[r] is the 1-based line row r starts on (CSV: its record's first line; JSON: its object's first line)
  std::vector<std::size_t> row_lines;

  [[nodiscard]] std::size_t size() const noexcept { return row_lines.size(); }

  [[nodiscard]] bool has_column(std::string_view name) const noexcept {
    return std::find(column_names.begin(), column_names.end(), name) != column_names.end();
  }

  /// The column's position in column_names; data_error naming the columns there are when it has none.
  [[nodiscard]] std::size_t column_index(std::string_view name) const;

  [[nodiscard]] column_type type(std::string_view column) const { return column_types[column_index(column)]; }

  /// The cell as read, whatever the column's type (null included). usage_error for a row past the end.
  [[nodiscard]] const nlohmann::json& cell(std::size_t row, std::string_view column) const;

  [[nodiscard]] bool is_null(std::size_t row, std::string_view column) const { return cell(row, column).is_null(); }

  [[nodiscard]] std::int64_t integer(std::size_t row, std::string_view column) const;

  /// A float64 cell (NaN and infinities included: pandas reads "inf" as a number, "nan" as an empty cell).
  [[nodiscard]] double floating(std::size_t row, std::string_view column) const;

  [[nodiscard]] bool boolean(std::size_t row, std::string_view column) const;

  [[nodiscard]] std::string_view string(std::size_t row, std::string_view column) const;

  [[nodiscard]] std::vector<std::string> strings(std::size_t row, std::string_view column) const;

  [[nodiscard]] std::vector<std::int64_t> integers(std::size_t row, std::string_view column) const;

  [[nodiscard]] std::vector<double> floats(std::size_t row, std::string_view column) const;

 private:
  [[noreturn]] void fail(std::size_t row, std::string_view column, const std::string& problem) const;

  const nlohmann::json& typed_cell(std::size_t row, std::string_view column, column_type want) const;

  template <class T>
  std::vector<T> list(std::size_t row, std::string_view column, column_type want) const {
    const nlohmann::json& value = typed_cell(row, column, want);
    std::vector<T> out;
    out.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (value[i].is_null()) fail(row, column, "element " + std::to_string(i) + " of the list is null");
      out.push_back(value[i].get<T>());
    }
    return out;
  }
};

namespace detail::table {

[[noreturn]] inline void fail_at_line(std::string_view source, std::size_t line, const std::string& problem) {
  throw data_error(std::string(source) + ": line " + std::to_string(line) + ": " + problem);
}

/// "line L, column C" of a byte offset (lines end at '\n', columns count bytes from 1).
[[nodiscard]] inline std::string line_and_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const auto line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t newline = before.rfind('\n');
  const std::size_t column = newline == std::string_view::npos ? offset + 1 : offset - newline;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

/// The text after a UTF-8 byte order mark (pandas skips one; Python's json would not, but nothing is lost).
[[nodiscard]] inline std::string_view without_bom(std::string_view bytes) noexcept {
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  return bytes.substr(0, 3) == bom ? bytes.substr(3) : bytes;
}

inline void check_utf8(std::string_view text, std::string_view source) {
  if (const std::size_t bad = text::find_invalid_utf8(text); bad != std::string_view::npos)
    throw data_error(std::string(source) + ": invalid UTF-8 at " + line_and_column(text, bad));
}

/// `s` with each invalid UTF-8 byte replaced by '?': nlohmann quotes the bytes it stopped at, which may be half a
/// character, and a message must stay valid text.
[[nodiscard]] inline std::string valid_text(std::string_view s) {
  std::string out;
  for (std::size_t pos = 0; pos < s.size();) {
    char32_t cp = 0;
    const std::size_t n = text::decode_utf8(s, pos, cp);
    out += n == 0 ? std::string_view("?") : s.substr(pos, n);
    pos += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace detail::table

}  // namespace cputrain::data

// The CSV half: pandas.read_csv's tokenizer and type inference with the options datasets passes (its defaults).
// The readers are only needed where the functions are defined: under CPUTRAIN_SEPARATE_COMPILATION the other
// files of a program neither parse them nor instantiate nlohmann/json's parser for them.
#if CPUTRAIN_DEFINE_FUNCTIONS
namespace cputrain::data::detail::table {

/// Splits CSV text into records as pandas' C tokenizer does with its defaults: fields separated by ',', records by
/// "\r\n", "\n" or "\r", '"' quoting with "" for a quote (text after a closing quote is kept: "a"b is ab), and
/// blank or spaces-only lines skipped. Fields are views into the text or into the reader (unescaped copies).
class csv_reader {
 public:
  csv_reader(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  /// Appends the next record's fields and sets `line` to where it starts; false at the end of the text.
  bool next(std::vector<std::string_view>& fields, std::size_t& line) {
    skip_blank_lines();
    if (at_end()) return false;
    line = line_;
    for (;;) {
      fields.push_back(!at_end() && text_[pos_] == '"' ? quoted_field() : plain_field());
      if (at_end()) return true;
      if (text_[pos_] != ',') {
        end_line();
        return true;
      }
      ++pos_;
    }
  }

 private:
  [[nodiscard]] bool at_end() const noexcept { return pos_ >= text_.size(); }
  [[nodiscard]] static bool ends_field(char c) noexcept { return c == ',' || c == '\n' || c == '\r'; }

  /// Consumes the line break at pos_.
  void end_line() noexcept {
    if (text_[pos_++] == '\r' && !at_end() && text_[pos_] == '\n') ++pos_;
    ++line_;
  }

  void skip_blank_lines() noexcept {
    while (!at_end()) {
      std::size_t p = pos_;
      while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
      if (p < text_.size() && text_[p] != '\n' && text_[p] != '\r') return;
      pos_ = p;
      if (!at_end()) end_line();
    }
  }

  std::string_view plain_field() noexcept {
    const std::size_t start = pos_;
    while (!at_end() && !ends_field(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  [[nodiscard]] static std::size_t line_breaks(std::string_view s) noexcept {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
      n += s[i] == '\n' || (s[i] == '\r' && (i + 1 == s.size() || s[i + 1] != '\n'));
    return n;
  }

  std::string_view quoted_field() {
    const std::size_t open_line = line_;
    const std::size_t start = ++pos_;
    std::string* copy = nullptr;  // only a field with "" or text after its closing quote needs one
    for (;;) {
      const std::size_t quote = text_.find('"', pos_);
      if (quote == std::string_view::npos)
        fail_at_line(source_, open_line, "a quoted field starts here and is not closed before the end of the file");
      line_ += line_breaks(text_.substr(pos_, quote - pos_));
      if (copy != nullptr) copy->append(text_.substr(pos_, quote - pos_));
      pos_ = quote + 1;
      if (at_end() || text_[pos_] != '"') break;
      if (copy == nullptr) copy = &unescaped_.emplace_back(text_.substr(start, quote - start));
      copy->push_back('"');
      ++pos_;
    }
    const std::size_t close = pos_ - 1;
    if (!at_end() && !ends_field(text_[pos_])) {
      if (copy == nullptr) copy = &unescaped_.emplace_back(text_.substr(start, close - start));
      copy->append(plain_field());
    }
    return copy != nullptr ? std::string_view(*copy) : text_.substr(start, close - start);
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::deque<std::string> unescaped_;  // a deque, so the views into earlier copies stay valid
};

/// The header's names as pandas makes them: "Unnamed: <i>" for an empty one, then "<name>.<k>" for the k-th repeat
/// (skipping names already taken, the loop of pandas' dedup).
[[nodiscard]] inline std::vector<std::string> csv_column_names(const std::vector<std::string_view>& header) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < header.size(); ++i)
    names.push_back(header[i].empty() ? "Unnamed: " + std::to_string(i) : std::string(header[i]));
  std::unordered_map<std::string, std::size_t> counts;
  for (std::string& slot : names) {
    std::string name = slot;  // the list is searched with this entry still holding its old name, as in pandas
    std::size_t count = counts[name];
    while (count > 0) {
      counts[slot] = count + 1;
      name = slot + "." + std::to_string(count);
      count = std::find(names.begin(), names.end(), name) != names.end() ? count + 1 : counts[name];
    }
    counts[name] = count + 1;
    slot = std::move(name);
  }
  return names;
}

/// pandas' default na_values: such a cell is NaN, whatever the column.
[[nodiscard]] inline bool is_na(std::string_view s) noexcept {
  static constexpr std::array<std::string_view, 19> na = {
      "",    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
      "<NA>", "N/A", "NA",       "NULL", "NaN",    "None",     "n/a",  "nan",  "null"};
  return s.size() <= 8 && std::find(na.begin(), na.end(), s) != na.end();
}

[[nodiscard]] inline bool iequals(std::string_view a, std::string_view lower) noexcept {
  return a.size() == lower.size() && std::equal(a.begin(), a.end(), lower.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? static_cast<char>(x - 'A' + 'a') : x) == y;
         });
}

/// pandas' bool cells: "true" and "false" in any case (its true_values, then to_boolean's strcasecmp).
[[nodiscard]] inline std::optional<bool> csv_bool(std::string_view s) noexcept {
  if (iequals(s, "true")) return true;
  if (iequals(s, "false")) return false;
  return std::nullopt;
}

/// pandas' number parsers skip ASCII whitespace around the number (but not around "inf" or "True").
[[nodiscard]] inline std::string_view trim_space(std::string_view s) noexcept {
  constexpr std::string_view space = " \t\n\v\f\r";
  const std::size_t first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

[[nodiscard]] inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// [+-]digits, as str_to_int64 takes it (after the whitespace is trimmed).
[[nodiscard]] inline bool integer_syntax(std::string_view s) noexcept {
  const std::size_t digits = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
  return s.size() > digits && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(digits), s.end(), is_digit);
}

/// [+-]digits[.digits][e[+-]digits] with a digit on one side of the point, as pandas' xstrtod takes it.
[[nodiscard]] inline bool float_syntax(std::string_view s) noexcept {
  std::size_t i = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
  std::size_t digits = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) ++digits;
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && is_digit(s[i]); ++i) ++digits;
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1 < s.size() && (s[i + 1] == '+' || s[i + 1] == '-') ? i + 2 : i + 1;
    const std::size_t exponent = j;
    while (j < s.size() && is_digit(s[j])) ++j;
    if (j == exponent) return false;
    i = j;
  }
  return i == s.size();
}

[[nodiscard]] inline std::string_view without_plus(std::string_view s) noexcept {
  return !s.empty() && s[0] == '+' ? s.substr(1) : s;  // from_chars takes '-' only
}

/// The number pandas reads from a cell: the inf spellings of its _try_double, else a decimal number; nullopt for a
/// cell that is no float64 (pandas' parser fails on a value beyond double's range too).
[[nodiscard]] inline std::optional<double> csv_number(std::string_view cell) noexcept {
  for (const std::string_view inf : {"inf", "+inf", "infinity", "+infinity"})
    if (iequals(cell, inf)) return std::numeric_limits<double>::infinity();
  for (const std::string_view inf : {"-inf", "-infinity"})
    if (iequals(cell, inf)) return -std::numeric_limits<double>::infinity();
  const std::string_view s = trim_space(cell);
  if (!float_syntax(s)) return std::nullopt;
  const std::string_view digits = without_plus(s);
  double value = 0;
  const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (result.ec != std::errc() || result.ptr != digits.data() + digits.size()) return std::nullopt;
  return value;
}

/// What one CSV cell can be read as, in pandas' order of preference for a column (int64, float64, bool, object).
enum class csv_kind : std::uint8_t { missing, integer, too_big, number, boolean, text };

[[nodiscard]] inline csv_kind classify_csv(std::string_view cell) noexcept {
  if (is_na(cell)) return csv_kind::missing;
  if (csv_bool(cell)) return csv_kind::boolean;
  const std::string_view s = trim_space(cell);
  if (integer_syntax(s)) {
    const std::string_view digits = without_plus(s);
    std::int64_t value = 0;
    const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return result.ec == std::errc() ? csv_kind::integer : csv_kind::too_big;
  }
  return csv_number(cell) ? csv_kind::number : csv_kind::text;
}

/// A view of column `c` of the records read: rows x width fields, row-major.
struct csv_column {
  const std::vector<std::string_view>& fields;
  std::size_t width;
  std::size_t c;
  [[nodiscard]] std::string_view operator[](std::size_t row) const { return fields[row * width + c]; }
};

/// The column's type as pandas infers it: int64 if every cell is an integer, float64 if the cells are numbers or
/// empty (an empty cell makes an integer column float64, as NaN does in pandas), bool if all are true/false or
/// empty, else string. An integer beyond int64 among integers only is refused: pandas would make the column uint64
/// or text.
[[nodiscard]] inline column_type csv_column_type(const dataset_table& table, const csv_column& column) {
  std::array<std::size_t, 6> counts{};
  std::size_t first_too_big = 0;
  for (std::size_t r = 0; r < table.size(); ++r) {
    const csv_kind kind = classify_csv(column[r]);
    if (kind == csv_kind::too_big && counts[static_cast<std::size_t>(kind)] == 0) first_too_big = r;
    ++counts[static_cast<std::size_t>(kind)];
  }
  const auto count = [&](csv_kind k) { return counts[static_cast<std::size_t>(k)]; };
  const std::size_t numbers = count(csv_kind::integer) + count(csv_kind::number) + count(csv_kind::too_big);
  if (count(csv_kind::text) > 0 || (count(csv_kind::boolean) > 0 && numbers > 0)) return column_type::string;
  if (count(csv_kind::boolean) > 0) return column_type::boolean;
  if (count(csv_kind::number) > 0) return column_type::floating;  // pandas skips int64 once it sees a fraction
  if (count(csv_kind::too_big) > 0) {
    fail_at_line(table.source, table.row_lines[first_too_big],
                 "column '" + table.column_names[column.c] + "': " + std::string(trim_space(column[first_too_big])) +
                     " is beyond the int64 range (pandas would read the column as uint64 or as text; this reader "
                     "does neither)");
  }
  return count(csv_kind::missing) > 0 ? column_type::floating : column_type::integer;
}

[[nodiscard]] inline nlohmann::json csv_value(std::string_view cell, column_type type) {
  if (is_na(cell)) return nullptr;
  switch (type) {
    case column_type::boolean: return *csv_bool(cell);
    case column_type::floating: return *csv_number(cell);
    case column_type::integer: {
      const std::string_view digits = without_plus(trim_space(cell));
      std::int64_t value = 0;
      std::from_chars(digits.data(), digits.data() + digits.size(), value);
      return value;
    }
    default: return std::string(cell);
  }
}

}  // namespace cputrain::data::detail::table
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

namespace cputrain::data {

/// Reads CSV text as datasets' csv loader does (pandas.read_csv with its defaults): the first line is the header,
/// quoted fields may hold commas, quotes ("") and line breaks, CRLF or LF, a UTF-8 BOM is skipped, blank lines are
/// skipped. Types as csv_column_type says. Unlike pandas, a record with more or fewer fields than the header is
/// refused (pandas fills a short one with NaN); so is a file without rows. Throws data_error.
[[nodiscard]] CPUTRAIN_DECL dataset_table parse_csv_table(std::string_view bytes, std::string source);

}  // namespace cputrain::data

// The JSON half: datasets' json loader, which reads JSON Lines with pyarrow and, when that fails, the whole file
// as one JSON value (a list of objects); pyarrow's type inference decides the columns' types.
#if CPUTRAIN_DEFINE_FUNCTIONS
namespace cputrain::data::detail::table {

/// What a JSON value is to pyarrow's inference; integer and number unify to number, null to anything.
enum class json_kind : std::uint8_t { null, boolean, integer, number, string, list, object };

[[nodiscard]] inline std::optional<json_kind> unify(json_kind a, json_kind b) noexcept {
  if (a == json_kind::null || a == b) return b;
  if (b == json_kind::null) return a;
  const auto numeric = [](json_kind k) { return k == json_kind::integer || k == json_kind::number; };
  if (numeric(a) && numeric(b)) return json_kind::number;
  return std::nullopt;
}

/// A value for a message: what it is, with the value itself when short.
[[nodiscard]] inline std::string describe(const nlohmann::json& v) {
  const std::string shown = " (" + json_text_for_message(v, 40) + ")";
  switch (v.type()) {
    case nlohmann::json::value_t::boolean: return "a boolean" + shown;
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer" + shown;
    case nlohmann::json::value_t::number_float: return "a non-integer number" + shown;
    case nlohmann::json::value_t::string: return "a string" + shown;
    case nlohmann::json::value_t::array: return "a list";
    case nlohmann::json::value_t::object: return "an object";
    default: return "null";
  }
}

/// The outcome of parsing a JSON text: nothing, or where (a byte offset into the text, when known) and why not.
struct json_failure {
  std::optional<std::size_t> offset;
  std::string problem;
};

/// Parses `text` into `out`; `callback` (may be empty) sees every event, as nlohmann's parser callback.
[[nodiscard]] inline std::optional<json_failure> parse_json(std::string_view text, nlohmann::json& out,
                                                            const nlohmann::json::parser_callback_t& callback) {
  try {
    out = nlohmann::json::parse(text.begin(), text.end(), callback);
    return std::nullopt;
  } catch (const nlohmann::json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error ..." — the position is
    // said in the file's terms by the caller, so only the part after it is kept.
    std::string what = e.what();
    const std::size_t at = what.find(": ", what.find("parse error"));
    if (at != std::string::npos) what.erase(0, at + 2);
    return json_failure{e.byte == 0 ? 0 : std::min<std::size_t>(e.byte - 1, text.size()), valid_text(what)};
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406, a number beyond double's range, carries no position.
    std::string what = e.what();
    if (const std::size_t tag = what.find("] "); tag != std::string::npos) what.erase(0, tag + 2);
    return json_failure{std::nullopt, valid_text(what)};
  }
}

/// Per column: the kind seen so far (and the line that set it, for messages), and the kind of list elements.
struct json_column_state {
  json_kind kind = json_kind::null;
  std::size_t kind_line = 0;
  std::string kind_shown;
  json_kind element = json_kind::null;
  std::size_t element_line = 0;
  std::string element_shown;
};

/// Gathers the rows of a JSON file into columns, checking each value against its column's kind as it goes.
class json_table_builder {
 public:
  explicit json_table_builder(dataset_table& table) : table_(table) {}

  /// Registers a row's key as the parser meets it, so that columns keep the order of the file (nlohmann's objects
  /// keep theirs sorted).
  void saw_key(const std::string& key) { column(key); }

  void add_row(nlohmann::json& row, std::size_t line) {
    const std::size_t r = table_.size();
    for (auto it = row.begin(); it != row.end(); ++it) {
      const std::size_t c = column(it.key());
      check_kind(c, *it, line);
      std::vector<nlohmann::json>& cells = table_.columns[c];
      cells.resize(r);
      cells.push_back(std::move(*it));
    }
    table_.row_lines.push_back(line);
  }

  void finish() {
    if (table_.size() == 0) throw data_error(table_.source + ": no rows");
    table_.column_types.clear();
    for (std::size_t c = 0; c < table_.columns.size(); ++c) {
      table_.columns[c].resize(table_.size());
      table_.column_types.push_back(type_of(states_[c]));
    }
  }

 private:
  std::size_t column(const std::string& key) {
    const auto [it, added] = index_.try_emplace(key, table_.column_names.size());
    if (added) {
      table_.column_names.push_back(key);
      table_.columns.emplace_back();
      states_.emplace_back();
    }
    return it->second;
  }

  [[noreturn]] void fail(std::size_t c, std::size_t line, const std::string& problem) const {
    fail_at_line(table_.source, line, "column '" + table_.column_names[c] + "': " + problem);
  }

  json_kind kind_of(const nlohmann::json& v, std::size_t c, std::size_t line) const {
    switch (v.type()) {
      case nlohmann::json::value_t::boolean: return json_kind::boolean;
      case nlohmann::json::value_t::number_unsigned:
        if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          fail(c, line, v.dump() + " is beyond the int64 range");
        return json_kind::integer;
      case nlohmann::json::value_t::number_integer: return json_kind::integer;
      case nlohmann::json::value_t::number_float: return json_kind::number;
      case nlohmann::json::value_t::string: return json_kind::string;
      case nlohmann::json::value_t::array: return json_kind::list;
      case nlohmann::json::value_t::object: return json_kind::object;
      default: return json_kind::null;
    }
  }

  /// Unifies the value's kind into the column's (and a list's elements into the column's element kind); pyarrow
  /// refuses what does not unify. Inside objects and nested lists nothing is checked.
  void check_kind(std::size_t c, const nlohmann::json& value, std::size_t line) {
    json_column_state& s = states_[c];
    const json_kind kind = kind_of(value, c, line);
    const std::optional<json_kind> both = unify(s.kind, kind);
    if (!both) {
      fail(c, line, describe(value) + ", but line " + std::to_string(s.kind_line) + " has " + s.kind_shown +
                        "; Hugging Face datasets (pyarrow) cannot hold both in one column");
    }
    if (*both != s.kind) {
      s.kind = *both;
      s.kind_line = line;
      s.kind_shown = describe(value);
    }
    if (kind != json_kind::list) return;
    for (const nlohmann::json& element : value) {
      const json_kind element_kind = kind_of(element, c, line);
      const std::optional<json_kind> elements = unify(s.element, element_kind);
      if (!elements) {
        fail(c, line, "a list holding " + describe(element) + ", but line " + std::to_string(s.element_line) +
                          " has a list holding " + s.element_shown +
                          "; Hugging Face datasets (pyarrow) cannot hold both in one column");
      }
      if (*elements != s.element) {
        s.element = *elements;
        s.element_line = line;
        s.element_shown = describe(element);
      }
    }
  }

  static column_type type_of(const json_column_state& s) noexcept {
    switch (s.kind) {
      case json_kind::null: return column_type::null_only;
      case json_kind::boolean: return column_type::boolean;
      case json_kind::integer: return column_type::integer;
      case json_kind::number: return column_type::floating;
      case json_kind::string: return column_type::string;
      case json_kind::object: return column_type::other;
      case json_kind::list: break;
    }
    switch (s.element) {
      case json_kind::string: return column_type::list_of_strings;
      case json_kind::integer: return column_type::list_of_integers;
      case json_kind::number: return column_type::list_of_floats;
      default: return column_type::other;
    }
  }

  dataset_table& table_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<json_column_state> states_;
};

/// A callback that hands the keys of row objects (at `row_depth`: 1 in JSON Lines, 2 in a list) to the builder.
[[nodiscard]] inline nlohmann::json::parser_callback_t key_recorder(json_table_builder& builder, int row_depth) {
  return [&builder, row_depth](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && depth == row_depth)
      builder.saw_key(parsed.get_ref<const std::string&>());
    return true;
  };
}

[[nodiscard]] inline bool is_json_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/// The line each element of the top-level list starting at `open` ('[') starts on. `text` is valid JSON.
[[nodiscard]] inline std::vector<std::size_t> element_lines(std::string_view text, std::size_t open) {
  std::vector<std::size_t> lines;
  const std::string_view before = text.substr(0, open);
  auto line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  int depth = 0;
  bool expecting = false;  // at depth 1, before an element
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (is_json_space(c)) continue;
    if (depth == 1 && expecting && c != ']') {
      lines.push_back(line);
      expecting = false;
    }
    if (c == '"') {
      for (++i; text[i] != '"'; ++i) i += text[i] == '\\';  // strings hold no raw line break
    } else if (c == '[' || c == '{') {
      expecting = ++depth == 1;
    } else if (c == ']' || c == '}') {
      if (--depth == 0) break;
    } else if (c == ',') {
      expecting = depth == 1;
    }
  }
  return lines;
}

inline void read_json_list(std::string_view text, std::size_t open, json_table_builder& builder,
                           std::string_view source) {
  nlohmann::json list;
  if (const auto failure = parse_json(text, list, key_recorder(builder, 2))) {
    throw data_error(std::string(source) + (failure->offset ? ": " + line_and_column(text, *failure->offset) : "") +
                     ": not valid JSON: " + failure->problem);
  }
  const std::vector<std::size_t> lines = element_lines(text, open);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object()) {
      fail_at_line(source, lines[i], "element " + std::to_string(i) + " of the top-level list is " +
                                         describe(list[i]) + ", not an object (one object per row)");
    }
    builder.add_row(list[i], lines[i]);
  }
}

/// The first line of a file that does not start with '[' is not JSON: datasets then reads the whole file as one
/// value. Says why neither works, for the whole file when its problem lies past the first line.
[[noreturn]] inline void refuse_first_line(std::string_view text, std::size_t line_end, std::size_t line,
                                           const json_failure& line_failure, std::string_view source) {
  nlohmann::json whole;
  const std::optional<json_failure> failure = parse_json(text, whole, nullptr);
  const std::string file(source);
  if (!failure && whole.is_object()) {
    std::string keys;
    for (auto it = whole.begin(); it != whole.end(); ++it)
      keys += (keys.empty() ? "" : ", ") + quote_for_message<nlohmann::json>(it.key(), 40);
    throw data_error(file + ": the top level is one object (keys " + keys + "), not JSON Lines or a list of "
                     "objects; Hugging Face's json loader reads such a file only with field=<the key of its list>");
  }
  if (!failure)
    throw data_error(file + ": the top level is " + describe(whole) + ", not JSON Lines or a list of objects");
  if (failure->offset && *failure->offset > line_end)
    throw data_error(file + ": " + line_and_column(text, *failure->offset) + ": not valid JSON: " + failure->problem);
  const std::string column = line_failure.offset ? ", column " + std::to_string(*line_failure.offset + 1) : "";
  throw data_error(file + ": line " + std::to_string(line) + column + ": not valid JSON: " + line_failure.problem);
}

inline void read_json_lines(std::string_view text, json_table_builder& builder, std::string_view source) {
  const nlohmann::json::parser_callback_t callback = key_recorder(builder, 1);
  bool first = true;
  std::size_t line = 0;
  for (std::size_t start = 0; start < text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view content = text.substr(start, end - start);
    start = end + 1;
    if (std::all_of(content.begin(), content.end(), is_json_space)) continue;
    nlohmann::json row;
    if (const auto failure = parse_json(content, row, callback)) {
      if (first) refuse_first_line(text, end, line + 1, *failure, source);
      const std::string column = failure->offset ? ", column " + std::to_string(*failure->offset + 1) : "";
      throw data_error(std::string(source) + ": line " + std::to_string(line + 1) + column + ": not valid JSON: " +
                       failure->problem);
    }
    first = false;
    if (!row.is_object())
      fail_at_line(source, line + 1, describe(row) + ", not an object (JSON Lines: one object per line)");
    builder.add_row(row, line + 1);
  }
}

}  // namespace cputrain::data::detail::table
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

namespace cputrain::data {

/// Reads JSON text as datasets' json loader does: JSON Lines (one object per line, blank lines skipped), or one
/// top-level list of objects. A top-level object is refused (datasets needs field=... for it). Column types as
/// pyarrow infers them: int64; float64 where integers and non-integers meet; bool; string; a list of strings,
/// int64 or float64; null_only; anything else other. A column holding two kinds that do not unify (a string and a
/// number, a boolean and a number) is refused, naming the lines of both. Throws data_error.
[[nodiscard]] CPUTRAIN_DECL dataset_table parse_json_table(std::string_view bytes, std::string source);

/// Reads a .csv (parse_csv_table) or .json / .jsonl file (parse_json_table), the extensions run_glue.py and
/// run_ner.py take; any other extension is refused before the file is read. Throws data_error.
[[nodiscard]] CPUTRAIN_DECL dataset_table read_dataset_table(const std::filesystem::path& path);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::size_t dataset_table::column_index(std::string_view name) const {
  const auto it = std::find(column_names.begin(), column_names.end(), name);
  if (it != column_names.end()) return static_cast<std::size_t>(it - column_names.begin());
  std::string known;
  for (const std::string& n : column_names) known += (known.empty() ? "'" : ", '") + n + "'";
  throw data_error(source + ": no column '" + std::string(name) + "'; the columns are " + known);
}

CPUTRAIN_DECL const nlohmann::json& dataset_table::cell(std::size_t row, std::string_view column) const {
  const std::size_t c = column_index(column);
  if (row >= size()) {
    throw usage_error(source + ": row " + std::to_string(row) + " asked for, but the table has " +
                      std::to_string(size()) + " rows");
  }
  return columns[c][row];
}

CPUTRAIN_DECL std::int64_t dataset_table::integer(std::size_t row, std::string_view column) const {
  return typed_cell(row, column, column_type::integer).get<std::int64_t>();
}

CPUTRAIN_DECL double dataset_table::floating(std::size_t row, std::string_view column) const {
  return typed_cell(row, column, column_type::floating).get<double>();
}

CPUTRAIN_DECL bool dataset_table::boolean(std::size_t row, std::string_view column) const {
  return typed_cell(row, column, column_type::boolean).get<bool>();
}

CPUTRAIN_DECL std::string_view dataset_table::string(std::size_t row, std::string_view column) const {
  return typed_cell(row, column, column_type::string).get_ref<const std::string&>();
}

CPUTRAIN_DECL std::vector<std::string> dataset_table::strings(std::size_t row, std::string_view column) const {
  return list<std::string>(row, column, column_type::list_of_strings);
}

CPUTRAIN_DECL std::vector<std::int64_t> dataset_table::integers(std::size_t row, std::string_view column) const {
  return list<std::int64_t>(row, column, column_type::list_of_integers);
}

CPUTRAIN_DECL std::vector<double> dataset_table::floats(std::size_t row, std::string_view column) const {
  return list<double>(row, column, column_type::list_of_floats);
}

CPUTRAIN_DECL void dataset_table::fail(std::size_t row, std::string_view column, const std::string& problem) const {
  throw data_error(source + ": line " + std::to_string(row_lines[row]) + ": column '" + std::string(column) +
                   "': " + problem);
}

CPUTRAIN_DECL const nlohmann::json& dataset_table::typed_cell(std::size_t row, std::string_view column,
                                                              column_type want) const {
  const nlohmann::json& value = cell(row, column);
  const column_type have = column_types[column_index(column)];
  if (have != want) {
    fail(row, column, "the column is " + std::string(column_type_name(have)) + ", not " +
                          std::string(column_type_name(want)));
  }
  if (value.is_null()) fail(row, column, "is null (an empty cell or a missing key)");
  return value;
}

CPUTRAIN_DECL dataset_table parse_csv_table(std::string_view bytes, std::string source) {
  using namespace detail::table;
  const std::string_view text = without_bom(bytes);
  check_utf8(text, source);
  csv_reader reader(text, source);
  std::vector<std::string_view> fields;
  std::size_t line = 0;
  if (!reader.next(fields, line)) throw data_error(source + ": the file is empty: no header and no rows");
  dataset_table table;
  table.column_names = csv_column_names(fields);
  const std::size_t width = fields.size();
  fields.clear();
  while (reader.next(fields, line)) {
    const std::size_t got = fields.size() - width * table.size();
    if (got != width) {
      fail_at_line(source, line, std::to_string(got) + (got == 1 ? " field" : " fields") + ", the header has " +
                                     std::to_string(width));
    }
    table.row_lines.push_back(line);
  }
  table.source = std::move(source);
  if (table.size() == 0) throw data_error(table.source + ": no rows, only the header line");
  for (std::size_t c = 0; c < width; ++c) {
    const csv_column column{fields, width, c};
    const column_type type = csv_column_type(table, column);
    std::vector<nlohmann::json> cells;
    cells.reserve(table.size());
    for (std::size_t r = 0; r < table.size(); ++r) cells.push_back(csv_value(column[r], type));
    table.column_types.push_back(type);
    table.columns.push_back(std::move(cells));
  }
  return table;
}

CPUTRAIN_DECL dataset_table parse_json_table(std::string_view bytes, std::string source) {
  using namespace detail::table;
  const std::string_view text = without_bom(bytes);
  check_utf8(text, source);
  dataset_table table;
  table.source = std::move(source);
  json_table_builder builder(table);
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) throw data_error(table.source + ": the file is empty: no rows");
  if (text[first] == '[') {
    read_json_list(text, first, builder, table.source);
  } else {
    read_json_lines(text, builder, table.source);
  }
  builder.finish();
  return table;
}

CPUTRAIN_DECL dataset_table read_dataset_table(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  if (extension != ".csv" && extension != ".json" && extension != ".jsonl") {
    throw data_error(path.string() + ": " + (extension.empty() ? "no extension" : "extension '" + extension + "'") +
                     "; a dataset table is read from a .csv, .json or .jsonl file");
  }
  const std::string bytes = io::read_whole_file<data_error>(path);
  return extension == ".csv" ? parse_csv_table(bytes, path.string()) : parse_json_table(bytes, path.string());
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
