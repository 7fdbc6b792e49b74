// cputrain::data text classification datasets as run_glue.py (and run_classification.py) read them from a
// dataset_table: which columns hold the texts (glue_columns), what the labels are (label_scheme: GLUE's names for a
// task, a float column meaning regression, a list column meaning multi-label, else the sorted distinct labels),
// and the examples in the form classification_features takes, each bad row refused by file, line and column.
#pragma once

#include "cputrain/data/dataset_table.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/data/classification_features.hpp"
#include "cputrain/data/data_error.hpp"

namespace cputrain::data {

/// The columns an example is read from.
struct text_columns {
  std::vector<std::string> first;      // joined by `delimiter` when several (run_classification's text_column_names)
  std::optional<std::string> second;   // the pair's second text
  std::string label = "label";
  std::string delimiter = " ";
};

/// GLUE's text columns for `task` (run_glue.py's task_to_keys); usage_error for a task GLUE does not have.
[[nodiscard]] CPUTRAIN_DECL text_columns glue_columns(std::string_view task);

/// run_glue.py's choice without a task: sentence1 and sentence2 when both exist, else the first two columns that
/// are not the label, else the first.
[[nodiscard]] CPUTRAIN_DECL text_columns default_text_columns(const dataset_table& table,
                                                          const std::string& label = "label");

/// What the labels are and, for classification, their names by id (config.json's id2label).
struct label_scheme {
  enum class kind { classification, regression, multi_label } type = kind::classification;
  std::vector<std::string> names;  // by id; one unnamed value for regression

  [[nodiscard]] int num_labels() const noexcept { return type == kind::regression ? 1 : static_cast<int>(names.size()); }
};

/// GLUE's label names of `task` (the datasets' ClassLabel names); stsb is regression.
[[nodiscard]] CPUTRAIN_DECL label_scheme glue_labels(std::string_view task);

namespace detail {

/// A label cell's text: the string, or the integer as Python's str() writes it.
[[nodiscard]] inline std::string label_text(const nlohmann::json& cell) {
  return cell.is_string() ? cell.get<std::string>() : cell.dump();
}

}  // namespace detail

/// The labels of a training table as run_glue.py infers them: float64 is regression; a list column is multi-label
/// (run_classification.py: the distinct elements, sorted); otherwise the distinct labels, sorted (numbers as numbers).
[[nodiscard]] CPUTRAIN_DECL label_scheme infer_labels(const dataset_table& table, const std::string& column);

namespace detail {

/// Row r's text of `columns` joined by the delimiter; data_error for a null or empty text.
[[nodiscard]] inline std::string row_text(const dataset_table& table, std::size_t r, const std::vector<std::string>& columns,
                                          const std::string& delimiter) {
  std::string out;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const nlohmann::json& cell = table.cell(r, columns[k]);
    if (!cell.is_string() || cell.get_ref<const std::string&>().empty())
      throw data_error(table.source + ": line " + std::to_string(table.row_lines[r]) + ": column '" + columns[k] +
                       "': " + (cell.is_null() ? "no text" : cell.is_string() ? "an empty text" : "not a text: " + cell.dump()));
    if (k > 0) out += delimiter;
    out += cell.get_ref<const std::string&>();
  }
  return out;
}

/// The id of one label cell: an integer is the id itself under GLUE's names (as its ClassLabel stores them), else
/// the position of its text among the names; data_error naming the row otherwise.
[[nodiscard]] CPUTRAIN_DECL std::int64_t label_id(const dataset_table& table, std::size_t r, const std::string& column,
                                                  const nlohmann::json& cell, const label_scheme& labels,
                                                  bool integers_are_ids);

}  // namespace detail

/// The examples of `table` with the labels `labels` says (with_labels false: texts only, for --do_predict).
/// `integers_are_ids`: integer labels are ids into the names (GLUE's files), not names themselves.
[[nodiscard]] CPUTRAIN_DECL classification_examples read_classification_examples(const dataset_table& table,
                                                                                  const text_columns& columns,
                                                                                  const label_scheme& labels,
                                                                                  bool with_labels,
                                                                                  bool integers_are_ids = false);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL text_columns glue_columns(std::string_view task) {
  struct keys { const char* task; const char* first; const char* second; };
  static constexpr keys table[] = {{"cola", "sentence", nullptr},      {"mnli", "premise", "hypothesis"},
                                   {"mrpc", "sentence1", "sentence2"}, {"qnli", "question", "sentence"},
                                   {"qqp", "question1", "question2"},  {"rte", "sentence1", "sentence2"},
                                   {"sst2", "sentence", nullptr},      {"stsb", "sentence1", "sentence2"},
                                   {"wnli", "sentence1", "sentence2"}};
  for (const keys& k : table) {
    if (task != k.task) continue;
    text_columns c;
    c.first = {k.first};
    if (k.second != nullptr) c.second = k.second;
    return c;
  }
  throw usage_error("--task_name " + std::string(task) + ": not a GLUE task");
}

CPUTRAIN_DECL text_columns default_text_columns(const dataset_table& table, const std::string& label) {
  std::vector<std::string> others;
  for (const std::string& name : table.column_names) {
    if (name != label) others.push_back(name);
  }
  if (others.empty()) throw data_error(table.source + ": no column besides '" + label + "' to read texts from");
  text_columns c;
  c.label = label;
  const auto has = [&](const char* n) { return std::find(others.begin(), others.end(), n) != others.end(); };
  if (has("sentence1") && has("sentence2")) {
    c.first = {"sentence1"};
    c.second = "sentence2";
  } else {
    c.first = {others[0]};
    if (others.size() >= 2) c.second = others[1];
  }
  return c;
}

CPUTRAIN_DECL label_scheme glue_labels(std::string_view task) {
  label_scheme s;
  if (task == "stsb") {
    s.type = label_scheme::kind::regression;
    return s;
  }
  if (task == "cola") s.names = {"unacceptable", "acceptable"};
  else if (task == "sst2") s.names = {"negative", "positive"};
  else if (task == "mrpc") s.names = {"not_equivalent", "equivalent"};
  else if (task == "qqp") s.names = {"not_duplicate", "duplicate"};
  else if (task == "mnli") s.names = {"entailment", "neutral", "contradiction"};
  else if (task == "wnli") s.names = {"not_entailment", "entailment"};
  else s.names = {"entailment", "not_entailment"};  // qnli, rte
  return s;
}

CPUTRAIN_DECL label_scheme infer_labels(const dataset_table& table, const std::string& column) {
  label_scheme s;
  const column_type type = table.type(column);
  if (type == column_type::floating) {
    s.type = label_scheme::kind::regression;
    return s;
  }
  if (type != column_type::integer && type != column_type::string && type != column_type::boolean &&
      type != column_type::list_of_strings && type != column_type::list_of_integers)
    throw data_error(table.source + ": the label column '" + column + "' is " +
                     std::string(column_type_name(type)) + "; labels are integers, strings or lists of them");
  const bool lists = type == column_type::list_of_strings || type == column_type::list_of_integers;
  if (lists) s.type = label_scheme::kind::multi_label;
  std::set<std::int64_t> numbers;
  std::set<std::string> texts;
  const std::size_t c = table.column_index(column);
  for (std::size_t r = 0; r < table.size(); ++r) {
    const nlohmann::json& cell = table.columns[c][r];
    if (cell.is_null()) continue;  // a row without a label is refused when the examples are read
    for (const nlohmann::json& label : lists ? cell : nlohmann::json::array({cell})) {
      if (label.is_number_integer()) numbers.insert(label.get<std::int64_t>());
      else texts.insert(detail::label_text(label));
    }
  }
  for (const std::int64_t n : numbers) s.names.push_back(std::to_string(n));
  s.names.insert(s.names.end(), texts.begin(), texts.end());
  if (s.names.empty()) throw data_error(table.source + ": the label column '" + column + "' holds no label");
  return s;
}

namespace detail {

CPUTRAIN_DECL std::int64_t label_id(const dataset_table& table, std::size_t r, const std::string& column,
                                   const nlohmann::json& cell, const label_scheme& labels, bool integers_are_ids) {
  // A CSV column mixing ids and names is text to pandas: "0" is then still GLUE's id 0.
  const bool id_text = cell.is_string() && !cell.get_ref<const std::string&>().empty() &&
                       cell.get_ref<const std::string&>().size() < 10 &&
                       std::all_of(cell.get_ref<const std::string&>().begin(), cell.get_ref<const std::string&>().end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
  if (integers_are_ids && (cell.is_number_integer() || id_text)) {
    const auto id = id_text ? std::stoll(cell.get<std::string>()) : cell.get<std::int64_t>();
    if (id >= 0 && id < static_cast<std::int64_t>(labels.names.size())) return id;
  } else {
    const std::string text = label_text(cell);
    const auto it = std::find(labels.names.begin(), labels.names.end(), text);
    if (it != labels.names.end()) return it - labels.names.begin();
  }
  std::string names;
  for (const std::string& n : labels.names) names += (names.empty() ? "" : ", ") + n;
  throw data_error(table.source + ": line " + std::to_string(table.row_lines[r]) + ": column '" + column + "': the label " +
                   cell.dump() + " is not among the labels (" + names + ")" +
                   (integers_are_ids ? " nor an id below " + std::to_string(labels.names.size()) : ""));
}

}  // namespace detail

CPUTRAIN_DECL classification_examples read_classification_examples(const dataset_table& table, const text_columns& columns,
                                                                   const label_scheme& labels, bool with_labels,
                                                                   bool integers_are_ids) {
  classification_examples ex;
  const std::size_t n = table.size();
  ex.first.reserve(n);
  for (std::size_t r = 0; r < n; ++r) ex.first.push_back(detail::row_text(table, r, columns.first, columns.delimiter));
  if (columns.second) {
    for (std::size_t r = 0; r < n; ++r) ex.second.push_back(detail::row_text(table, r, {*columns.second}, columns.delimiter));
  }
  if (!with_labels) return ex;
  const auto line = [&](std::size_t r) { return table.source + ": line " + std::to_string(table.row_lines[r]) + ": column '" + columns.label + "': "; };
  ex.label_kind = labels.type == label_scheme::kind::classification ? classification_labels::class_id : classification_labels::values;
  ex.values_per_example = labels.type == label_scheme::kind::multi_label ? labels.names.size() : 1;
  for (std::size_t r = 0; r < n; ++r) {
    const nlohmann::json& cell = table.cell(r, columns.label);
    if (cell.is_null()) throw data_error(line(r) + "no label");
    if (labels.type == label_scheme::kind::regression) {
      if (!cell.is_number()) throw data_error(line(r) + "not a number: " + cell.dump());
      ex.values.push_back(cell.get<float>());
    } else if (labels.type == label_scheme::kind::multi_label) {
      if (!cell.is_array()) throw data_error(line(r) + "not a list of labels: " + cell.dump());
      const std::size_t at = ex.values.size();
      ex.values.resize(at + labels.names.size(), 0.0f);
      for (const auto& label : cell)
        ex.values[at + static_cast<std::size_t>(detail::label_id(table, r, columns.label, label, labels, false))] = 1.0f;
    } else {
      ex.class_ids.push_back(detail::label_id(table, r, columns.label, cell, labels, integers_are_ids));
    }
  }
  return ex;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
