// SQuAD files -> cputrain::data::squad_dataset: parse_squad(bytes, source_name [, options]) and read_squad(path
// [, options]) read the official nested, Hugging Face flat and JSON Lines layouts (detected from the content), and
// check what run_qa.py would trip over or silently train on. A bad record is refused (the default) or skipped
// (squad_read_options::on_bad_record); only data_error leaves. Layouts and checks: docs/text-and-data.md.
#pragma once

#include "cputrain/io/read_file.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/json_message.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/data/data_error.hpp"
#include "cputrain/data/python_text.hpp"
#include "cputrain/data/squad_example.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::data {

/// What a record that breaks the format does to the read.
enum class bad_record_policy {
  /// throw data_error at the first one
  refuse,
  /// leave it out, count it in squad_dataset::skipped and keep its message in ::problems
  skip
};

struct squad_read_options {
  bad_record_policy on_bad_record = bad_record_policy::refuse;
};

/// Reads the text of a SQuAD file (see the header comment for the formats and the checks). `source_name` (the
/// file's path, say) starts every message. Throws data_error.
[[nodiscard]] CPUTRAIN_DECL squad_dataset parse_squad(std::string_view bytes, const std::string& source_name,
                                                      const squad_read_options& options = {});

/// Reads a SQuAD file: data_error naming it if it cannot be opened or read, then parse_squad.
[[nodiscard]] CPUTRAIN_DECL squad_dataset read_squad(const std::filesystem::path& file,
                                                     const squad_read_options& options = {});

// The parser is only needed where the functions are defined: under CPUTRAIN_SEPARATE_COMPILATION the other files
// of a program neither parse it nor instantiate nlohmann/json's parser for it.
#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

/// `s` with every invalid UTF-8 byte replaced by '?': nlohmann quotes the bytes it stopped at ("last read:
/// '...'"), which may be half a character, and a message must stay valid text.
[[nodiscard]] inline std::string valid_utf8_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp = 0;
    const std::size_t n = text::decode_utf8(s, pos, cp);
    if (n == 0) {
      out += '?';
      ++pos;
    } else {
      out.append(s.substr(pos, n));
      pos += n;
    }
  }
  return out;
}

/// A string as a JSON literal for a message: quoted, control characters escaped, cut after about 60 bytes, so a
/// hostile id cannot make a message ambiguous or enormous.
[[nodiscard]] inline std::string squad_quote(std::string_view s) { return quote_for_message<nlohmann::json>(s, 60); }

/// What a JSON value is, for "is X, not Y" messages, with the value when it is short enough to help.
[[nodiscard]] inline std::string squad_kind(const nlohmann::json& v) {
  using value_t = nlohmann::json::value_t;
  const auto shown = [&] { return " (" + json_text_for_message(v, 63) + ")"; };
  switch (v.type()) {
    case value_t::null: return "null";
    case value_t::boolean: return v.get<bool>() ? "true" : "false";
    case value_t::string: return "a string" + shown();
    case value_t::number_integer:
    case value_t::number_unsigned: return "an integer" + shown();
    case value_t::number_float: return "a non-integer number" + shown();
    case value_t::array: return "a list";
    case value_t::object: return "an object";
    case value_t::binary:
    case value_t::discarded: break;
  }
  return v.type_name();
}

/// "line L, column C (byte offset B)" of a byte offset into `text`; columns count bytes from 1.
[[nodiscard]] inline std::string squad_position(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t last_newline = before.rfind('\n');
  const std::size_t column = last_newline == std::string_view::npos ? offset + 1 : offset - last_newline;
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + " (byte offset " +
         std::to_string(offset) + ")";
}

/// The outcome of parsing one JSON text: the value, or the problem and (when known) the byte it was found at.
struct json_parse_result {
  std::optional<nlohmann::json> value;
  bool invalid_utf8 = false;
  /// without position
  std::string problem;
  /// into the parsed text
  std::optional<std::size_t> offset;
};

[[nodiscard]] inline json_parse_result parse_json_text(std::string_view text) {
  json_parse_result result;
  // nlohmann would take a NUL byte outside a string for the end of the input and ignore the rest.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    result.problem = "a NUL byte, which JSON text cannot contain";
    result.offset = nul;
  } else {
    try {
      result.value = nlohmann::json::parse(text);
      return result;
    } catch (const nlohmann::json::parse_error& e) {
      // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error ..." — the position is
      // given by the caller, in the file's terms, so only the part after it is kept.
      std::string what = e.what();
      if (const std::size_t tag = what.find("] "); tag != std::string::npos) what.erase(0, tag + 2);
      if (what.rfind("parse error at line ", 0) == 0) {
        if (const std::size_t colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
      }
      result.problem = valid_utf8_text(what);
      // e.byte counts the bytes read, the offending one included.
      result.offset = e.byte == 0 ? 0 : std::min<std::size_t>(e.byte - 1, text.size());
    } catch (const nlohmann::json::exception& e) {
      // out_of_range.406 (a number beyond double's range) carries no position.
      std::string what = e.what();
      if (const std::size_t tag = what.find("] "); tag != std::string::npos) what.erase(0, tag + 2);
      result.problem = valid_utf8_text(what);
    }
  }
  // nlohmann stops at invalid UTF-8 with a message about the byte; say what it is, and where. (A failure before
  // the bad bytes is a different problem; one without a position comes from a number, after any bad bytes.)
  if (result.offset) {
    if (const auto bad = text::find_invalid_utf8(text); bad != std::string_view::npos && bad <= *result.offset) {
      result.invalid_utf8 = true;
      result.problem = "invalid UTF-8";
      result.offset = bad;
    }
  }
  return result;
}

/// One line of a text: its number (from 1), where it starts, and its content without the line break.
struct text_line {
  std::size_t number = 0;
  std::size_t offset = 0;
  std::string_view content;
};

[[nodiscard]] inline std::vector<text_line> split_lines(std::string_view text) {
  std::vector<text_line> lines;
  std::size_t start = 0;
  std::size_t number = 1;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view content = text.substr(start, end - start);
    if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
    lines.push_back({number, start, content});
    start = end + 1;
    ++number;
  }
  return lines;
}

[[nodiscard]] inline std::string_view trim_json_space(std::string_view s) noexcept {
  constexpr std::string_view space = " \t\r\n";
  const std::size_t first = s.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(space) - first + 1);
}

[[nodiscard]] inline bool is_blank_line(const text_line& line) noexcept {
  return trim_json_space(line.content).empty();
}

/// A context's length in code points and whether it is ASCII (then code points are bytes).
struct context_shape {
  std::size_t code_points = 0;
  bool ascii = true;
};

[[nodiscard]] inline context_shape measure_context(std::string_view text) noexcept {
  context_shape shape;
  std::size_t pos = 0;
  while (pos < text.size()) {
    char32_t cp = 0;
    const std::size_t n = text::decode_utf8(text, pos, cp);
    // The parser let only valid UTF-8 through; a byte that is not is counted alone rather than looped on.
    pos += n == 0 ? 1 : n;
    if (n != 1) shape.ascii = false;
    ++shape.code_points;
  }
  return shape;
}

/// The byte offset of code point `index` (< the text's code points).
[[nodiscard]] inline std::size_t code_point_offset(std::string_view text, const context_shape& shape,
                                                   std::size_t index) noexcept {
  if (shape.ascii) return index;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < index && pos < text.size(); ++i) {
    char32_t cp = 0;
    const std::size_t n = text::decode_utf8(text, pos, cp);
    pos += n == 0 ? 1 : n;
  }
  return pos;
}

/// The first `count` code points of `text` (all of it if it has fewer).
[[nodiscard]] inline std::string_view first_code_points(std::string_view text, std::size_t count) noexcept {
  std::size_t pos = 0;
  for (std::size_t i = 0; i < count && pos < text.size(); ++i) {
    char32_t cp = 0;
    const std::size_t n = text::decode_utf8(text, pos, cp);
    pos += n == 0 ? 1 : n;
  }
  return text.substr(0, pos);
}

/// Thrown for a problem that makes the whole file unusable even under bad_record_policy::skip.
class squad_file_error : public data_error {
 public:
  using data_error::data_error;
};

class squad_parser {
 public:
  squad_parser(std::string_view source, const squad_read_options& options) : source_(source), options_(options) {}

  [[nodiscard]] squad_dataset parse(std::string_view bytes) {
    json_parse_result doc = parse_json_text(bytes);
    if (!doc.value) {
      if (looks_like_json_lines(bytes)) {
        read_json_lines(bytes);
        return std::move(out_);
      }
      if (doc.invalid_utf8) fail_file("invalid UTF-8 at " + squad_position(bytes, *doc.offset));
      fail_file("not valid JSON" + (doc.offset ? " at " + squad_position(bytes, *doc.offset) : std::string()) +
                ": " + doc.problem);
    }
    nlohmann::json& top = *doc.value;
    if (!top.is_object()) {
      fail_file("the top level is " + squad_kind(top) + ", not an object with a \"data\" list");
    }
    const auto data = top.find("data");
    if (data == top.end()) {
      // One line holding one record is a JSON Lines file of one record.
      if (is_one_line(bytes) && looks_like_record(top)) {
        out_.format = squad_format::json_lines;
        const std::string location = "line " + std::to_string(first_nonblank_line(bytes));
        guarded(location, [&] { read_flat_record(top, location); });
        return std::move(out_);
      }
      fail_file("the top level has no \"data\" member (a SQuAD file is {\"version\": ..., \"data\": [...]})");
    }
    if (!data->is_array()) {
      fail_file("field \"data\" is " + squad_kind(*data) + ", not a list of articles or records");
    }
    read_version(top);
    out_.format = detect_format(*data);
    for (std::size_t i = 0; i < data->size(); ++i) {
      const std::string location = "data[" + std::to_string(i) + "]";
      nlohmann::json& element = (*data)[i];
      if (out_.format == squad_format::nested) {
        guarded(location, [&] { read_article(element, location); });
      } else {
        guarded(location, [&] { read_flat_record(element, location); });
      }
      element = nullptr;  // what was kept has been moved out; free the rest as we go
    }
    return std::move(out_);
  }

 private:
  /// The record a message is about: where it is, and its id once read.
  struct record {
    std::string location;
    std::string id;
    bool has_id = false;
  };

  /// A paragraph's context: the DOM string until a kept question moves it into the dataset, then its index.
  struct paragraph_context {
    std::string* text = nullptr;
    context_shape shape;
    std::optional<std::uint32_t> index;
  };

  [[noreturn]] void fail_file(const std::string& problem) const {
    throw squad_file_error(std::string(source_) + ": " + problem);
  }

  [[noreturn]] void fail(const record& r, std::string_view field, const std::string& problem) const {
    std::string message = std::string(source_) + ": record ";
    if (r.has_id) {
      message += squad_quote(r.id) + " (" + r.location + ")";
    } else {
      message += r.location;
    }
    if (!field.empty()) message += ": field \"" + std::string(field) + "\"";
    throw data_error(message + ": " + problem);
  }

  /// Runs the reading of one record; under skip, a record-level data_error is recorded and reading goes on.
  template <class Body>
  void guarded(const std::string& location, Body&& body) {
    try {
      std::forward<Body>(body)();
    } catch (const squad_file_error&) {
      throw;
    } catch (const data_error& e) {
      if (options_.on_bad_record == bad_record_policy::refuse) throw;
      out_.problems.emplace_back(e.what());
      ++out_.skipped;
    } catch (const nlohmann::json::exception& e) {
      // Every access is checked first, so this is a safety net that keeps the "only data_error" promise.
      data_error wrapped(std::string(source_) + ": record " + location + ": " + valid_utf8_text(e.what()));
      if (options_.on_bad_record == bad_record_policy::refuse) throw wrapped;
      out_.problems.emplace_back(wrapped.what());
      ++out_.skipped;
    }
  }

  nlohmann::json& need(const record& r, nlohmann::json& object, const char* key, std::string_view field) const {
    const auto it = object.find(key);
    if (it == object.end()) fail(r, field, "is missing");
    return *it;
  }

  void need_object(const record& r, const nlohmann::json& v, std::string_view field) const {
    if (!v.is_object()) fail(r, field, "is " + squad_kind(v) + ", not an object");
  }

  void need_array(const record& r, const nlohmann::json& v, std::string_view field) const {
    if (!v.is_array()) fail(r, field, "is " + squad_kind(v) + ", not a list");
  }

  std::string& need_string(const record& r, nlohmann::json& v, std::string_view field) const {
    if (!v.is_string()) fail(r, field, "is " + squad_kind(v) + ", not a string");
    return v.get_ref<std::string&>();
  }

  std::uint64_t need_index(const record& r, const nlohmann::json& v, std::string_view field) const {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer()) fail(r, field, std::to_string(v.get<std::int64_t>()) + " is negative");
    fail(r, field, "is " + squad_kind(v) + ", not an integer");
  }

  /// Reads the record's id (a non-empty string) and names the record by it from then on.
  void read_id(record& r, nlohmann::json& object) const {
    const std::string& id = need_string(r, need(r, object, "id", "id"), "id");
    if (id.empty()) fail(r, "id", "is empty");
    r.id = id;
    r.has_id = true;
  }

  std::string_view read_question(const record& r, nlohmann::json& object) const {
    const std::string& raw = need_string(r, need(r, object, "question", "question"), "question");
    const std::string_view question = python_lstrip(raw);
    if (question.empty()) fail(r, "question", raw.empty() ? "is empty" : "is only whitespace");
    return question;
  }

  std::string& read_context(const record& r, nlohmann::json& object) const {
    std::string& context = need_string(r, need(r, object, "context", "context"), "context");
    if (context.empty()) fail(r, "context", "is empty");
    return context;
  }

  /// One answer, checked against its context: answer_start inside it, and the text found there.
  squad_answer read_answer(const record& r, std::string_view context, const context_shape& shape,
                           nlohmann::json& text_value, const std::string& text_field, nlohmann::json& start_value,
                           const std::string& start_field) const {
    const std::string& text = need_string(r, text_value, text_field);
    if (text.empty()) fail(r, text_field, "is empty (an unanswerable question has no answers at all)");
    const std::uint64_t start = need_index(r, start_value, start_field);
    if (start >= shape.code_points) {
      fail(r, start_field, std::to_string(start) + " is outside the context (" + std::to_string(shape.code_points) +
                               " characters)");
    }
    const std::size_t offset = code_point_offset(context, shape, static_cast<std::size_t>(start));
    if (context.substr(offset, text.size()) != text) {
      const std::size_t text_code_points = measure_context(text).code_points;
      const std::string_view there =
          first_code_points(context.substr(offset), std::min<std::size_t>(text_code_points, 60));
      fail(r, text_field, squad_quote(text) + " is not in the context at answer_start " + std::to_string(start) +
                              ", which has " + squad_quote(there) + " there (answer_start counts characters)");
    }
    return {text, static_cast<std::uint32_t>(start)};
  }

  /// A nested-format list of {"text", "answer_start"} objects (answers or plausible_answers).
  std::vector<squad_answer> read_answer_list(const record& r, nlohmann::json& list, const std::string& name,
                                             std::string_view context, const context_shape& shape) const {
    need_array(r, list, name);
    std::vector<squad_answer> answers;
    answers.reserve(list.size());
    for (std::size_t k = 0; k < list.size(); ++k) {
      const std::string field = name + "[" + std::to_string(k) + "]";
      nlohmann::json& answer = list[k];
      need_object(r, answer, field);
      answers.push_back(read_answer(r, context, shape, need(r, answer, "text", field + ".text"), field + ".text",
                                    need(r, answer, "answer_start", field + ".answer_start"),
                                    field + ".answer_start"));
    }
    return answers;
  }

  /// Refuses an id a kept record already has, else remembers it.
  void claim_id(const record& r) {
    const auto [it, inserted] = first_location_.try_emplace(r.id, r.location);
    if (!inserted) fail(r, "id", "is also the id of an earlier record (" + it->second + ")");
  }

  /// The index of `context` in the dataset, storing it (moved) if no identical context is stored yet.
  std::uint32_t intern(std::string&& context) {
    // Flat files repeat a context in consecutive records: try the last one before hashing.
    if (last_context_ && out_.contexts[*last_context_] == context) return *last_context_;
    const std::size_t hash = std::hash<std::string_view>{}(context);
    const auto [first, last] = context_by_hash_.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      if (out_.contexts[it->second] == context) return *(last_context_ = it->second);
    }
    if (out_.contexts.size() >= std::numeric_limits<std::uint32_t>::max()) {
      fail_file("has more distinct contexts than a 32-bit index holds");
    }
    const auto index = static_cast<std::uint32_t>(out_.contexts.size());
    out_.contexts.push_back(std::move(context));
    context_by_hash_.emplace(hash, index);
    last_context_ = index;
    return index;
  }

  void read_version(const nlohmann::json& top) {
    const auto it = top.find("version");
    if (it == top.end()) return;
    if (it->is_string()) {
      out_.version = it->get<std::string>();
    } else if (it->is_number()) {
      out_.version = it->dump();  // 2.0 -> "2.0", 1.1 -> "1.1", as Python's str() prints them
    } else {
      fail_file("field \"version\" is " + squad_kind(*it) + ", not a string or a number");
    }
  }

  /// Nested if the first article-like element has "paragraphs"; flat if it has a record's members.
  static squad_format detect_format(const nlohmann::json& data) {
    for (const nlohmann::json& element : data) {
      if (!element.is_object()) continue;
      if (element.contains("paragraphs")) return squad_format::nested;
      if (looks_like_record(element)) return squad_format::flat;
    }
    return squad_format::nested;
  }

  static bool looks_like_record(const nlohmann::json& object) {
    return object.contains("id") || object.contains("question") || object.contains("context") ||
           object.contains("answers");
  }

  static bool is_one_line(std::string_view bytes) {
    std::size_t nonblank = 0;
    for (const text_line& line : split_lines(bytes)) nonblank += is_blank_line(line) ? 0 : 1;
    return nonblank == 1;
  }

  static std::size_t first_nonblank_line(std::string_view bytes) {
    for (const text_line& line : split_lines(bytes)) {
      if (!is_blank_line(line)) return line.number;
    }
    return 1;
  }

  /// Whether a text that is not one JSON document is JSON Lines: its first line holds one whole object (not a
  /// SQuAD top level, which would make the rest trailing garbage) and a second line follows. A broken
  /// pretty-printed file starts with a lone "{" and is reported as the JSON error it is.
  static bool looks_like_json_lines(std::string_view bytes) {
    const std::vector<text_line> lines = split_lines(bytes);
    const text_line* first = nullptr;
    std::size_t nonblank = 0;
    for (const text_line& line : lines) {
      if (is_blank_line(line)) continue;
      if (first == nullptr) first = &line;
      ++nonblank;
    }
    if (first == nullptr || nonblank < 2) return false;
    std::string_view content = trim_json_space(first->content);
    if (content.substr(0, 3) == "\xef\xbb\xbf") content.remove_prefix(3);  // a byte order mark
    if (content.size() < 2 || content.front() != '{' || content.back() != '}') return false;
    const json_parse_result parsed = parse_json_text(content);
    return !(parsed.value && parsed.value->is_object() && parsed.value->contains("data"));
  }

  void read_json_lines(std::string_view bytes) {
    out_.format = squad_format::json_lines;
    for (const text_line& line : split_lines(bytes)) {
      if (is_blank_line(line)) continue;
      const std::string location = "line " + std::to_string(line.number);
      guarded(location, [&] {
        json_parse_result parsed = parse_json_text(line.content);
        if (!parsed.value) {
          const record r{location, {}, false};
          std::string where;
          if (parsed.offset) {
            where = " at column " + std::to_string(*parsed.offset + 1) + " (byte offset " +
                    std::to_string(line.offset + *parsed.offset) + ")";
          }
          if (parsed.invalid_utf8) fail(r, {}, "invalid UTF-8" + where);
          fail(r, {}, "not valid JSON" + where + ": " + parsed.problem);
        }
        read_flat_record(*parsed.value, location);
      });
    }
  }

  void read_article(nlohmann::json& article, const std::string& location) {
    const record r{location, {}, false};
    if (!article.is_object()) fail(r, {}, "is " + squad_kind(article) + ", not an object");
    std::string title;
    if (const auto it = article.find("title"); it != article.end()) title = need_string(r, *it, "title");
    nlohmann::json& paragraphs = need(r, article, "paragraphs", "paragraphs");
    need_array(r, paragraphs, "paragraphs");
    for (std::size_t j = 0; j < paragraphs.size(); ++j) {
      const std::string paragraph_location = location + ".paragraphs[" + std::to_string(j) + "]";
      guarded(paragraph_location, [&] { read_paragraph(paragraphs[j], paragraph_location, title); });
    }
  }

  void read_paragraph(nlohmann::json& paragraph, const std::string& location, const std::string& title) {
    const record r{location, {}, false};
    if (!paragraph.is_object()) fail(r, {}, "is " + squad_kind(paragraph) + ", not an object");
    paragraph_context context;
    context.text = &read_context(r, paragraph);
    context.shape = measure_context(*context.text);
    nlohmann::json& qas = need(r, paragraph, "qas", "qas");
    need_array(r, qas, "qas");
    for (std::size_t k = 0; k < qas.size(); ++k) {
      const std::string question_location = location + ".qas[" + std::to_string(k) + "]";
      guarded(question_location, [&] { read_nested_question(qas[k], question_location, context, title); });
    }
  }

  void read_nested_question(nlohmann::json& qa, const std::string& location, paragraph_context& context,
                            const std::string& title) {
    record r{location, {}, false};
    if (!qa.is_object()) fail(r, {}, "is " + squad_kind(qa) + ", not an object");
    read_id(r, qa);
    const std::string_view question = read_question(r, qa);
    const std::string_view text = context.index ? std::string_view(out_.contexts[*context.index])
                                                : std::string_view(*context.text);
    std::vector<squad_answer> answers = read_answer_list(r, need(r, qa, "answers", "answers"), "answers", text,
                                                         context.shape);
    if (const auto it = qa.find("is_impossible"); it != qa.end()) {
      if (!it->is_boolean()) fail(r, "is_impossible", "is " + squad_kind(*it) + ", not true or false");
      if (it->get<bool>() && !answers.empty()) {
        fail(r, "is_impossible", "is true, but the question has " + std::to_string(answers.size()) + " answer" +
                                     (answers.size() == 1 ? "" : "s") + " (an unanswerable question has none)");
      }
      if (!it->get<bool>() && answers.empty()) fail(r, "answers", "is empty, but is_impossible is false");
    }
    std::vector<squad_answer> plausible;
    if (const auto it = qa.find("plausible_answers"); it != qa.end()) {
      plausible = read_answer_list(r, *it, "plausible_answers", text, context.shape);
    }
    claim_id(r);
    if (!context.index) context.index = intern(std::move(*context.text));
    out_.examples.push_back(squad_example{r.id, title, std::string(question), *context.index, std::move(answers),
                                          std::move(plausible)});
  }

  void read_flat_record(nlohmann::json& object, const std::string& location) {
    record r{location, {}, false};
    if (!object.is_object()) fail(r, {}, "is " + squad_kind(object) + ", not an object");
    read_id(r, object);
    const std::string_view question = read_question(r, object);
    std::string& context = read_context(r, object);
    nlohmann::json& answers_value = need(r, object, "answers", "answers");
    if (!answers_value.is_object()) {
      fail(r, "answers", "is " + squad_kind(answers_value) +
                             ", not an object of two lists, {\"text\": [...], \"answer_start\": [...]}");
    }
    nlohmann::json& texts = need(r, answers_value, "text", "answers.text");
    need_array(r, texts, "answers.text");
    nlohmann::json& starts = need(r, answers_value, "answer_start", "answers.answer_start");
    need_array(r, starts, "answers.answer_start");
    if (texts.size() != starts.size()) {
      fail(r, "answers", "\"text\" has " + std::to_string(texts.size()) + " entries but \"answer_start\" has " +
                             std::to_string(starts.size()));
    }
    const context_shape shape = measure_context(context);
    std::vector<squad_answer> answers;
    answers.reserve(texts.size());
    for (std::size_t k = 0; k < texts.size(); ++k) {
      const std::string index = "[" + std::to_string(k) + "]";
      answers.push_back(
          read_answer(r, context, shape, texts[k], "answers.text" + index, starts[k], "answers.answer_start" + index));
    }
    std::string title;
    if (const auto it = object.find("title"); it != object.end()) title = need_string(r, *it, "title");
    claim_id(r);
    const std::uint32_t context_index = intern(std::move(context));
    out_.examples.push_back(
        squad_example{r.id, std::move(title), std::string(question), context_index, std::move(answers), {}});
  }

  std::string_view source_;
  const squad_read_options& options_;
  squad_dataset out_;
  std::unordered_map<std::string, std::string> first_location_;  // id -> where it was first kept
  std::unordered_multimap<std::size_t, std::uint32_t> context_by_hash_;
  std::optional<std::uint32_t> last_context_;
};

}  // namespace detail

CPUTRAIN_DECL squad_dataset parse_squad(std::string_view bytes, const std::string& source_name,
                                        const squad_read_options& options) {
  return detail::squad_parser(source_name, options).parse(bytes);
}

CPUTRAIN_DECL squad_dataset read_squad(const std::filesystem::path& file, const squad_read_options& options) {
  const std::string bytes = io::read_whole_file<data_error>(file);
  return parse_squad(bytes, file.string(), options);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
