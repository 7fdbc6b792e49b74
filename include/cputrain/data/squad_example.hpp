// SQuAD questions in memory, as Hugging Face's run_qa.py sees them after loading a dataset: squad_answer,
// squad_example (one question; no answers = unanswerable) and squad_dataset (each distinct context stored once).
// answer_start counts Unicode code points, as the SQuAD files and Python mean it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cputrain::data {

/// One answer: its text and its first code point's index in the context.
struct squad_answer {
  std::string text;
  /// in Unicode code points, as Python indexes str
  std::uint32_t answer_start = 0;

  friend bool operator==(const squad_answer&, const squad_answer&) = default;
};

/// One question of a SQuAD dataset.
struct squad_example {
  std::string id;
  /// the article's title (nested format) or the record's "title"; empty if none
  std::string title;
  /// left-stripped of Unicode whitespace, as Python's str.lstrip() does
  std::string question;
  /// into squad_dataset::contexts
  std::uint32_t context_index = 0;
  /// empty = unanswerable (SQuAD v2)
  std::vector<squad_answer> answers;
  /// SQuAD v2 nested files only, kept for reference
  std::vector<squad_answer> plausible_answers;

  [[nodiscard]] bool is_impossible() const noexcept { return answers.empty(); }
};

/// The layout a file was read in (detected from its content, see squad_reader.hpp).
enum class squad_format {
  /// the official {"version", "data": [{"title", "paragraphs": [{"context", "qas": [...]}]}]}
  nested,
  /// Hugging Face's {"data": [{"id", "question", "context", "answers": {"text", "answer_start"}}]}
  flat,
  /// one flat record per line
  json_lines
};

/// A whole SQuAD file.
struct squad_dataset {
  std::vector<squad_example> examples;
  /// UTF-8, byte-identical to the file, each distinct context once
  std::vector<std::string> contexts;
  squad_format format = squad_format::nested;
  /// the file's "version" as text ("1.1", "v2.0", "2.0"); empty if none
  std::string version;
  /// bad records skipped under bad_record_policy::skip
  std::size_t skipped = 0;
  /// one message per skipped record, the text refusing would have thrown
  std::vector<std::string> problems;

  [[nodiscard]] std::string_view context(const squad_example& e) const { return contexts[e.context_index]; }

  /// Whether any question has no answer (a SQuAD v2 dataset, which needs the v2 metrics).
  [[nodiscard]] bool has_unanswerable() const {
    return std::any_of(examples.begin(), examples.end(), [](const squad_example& e) { return e.is_impossible(); });
  }
};

}  // namespace cputrain::data
