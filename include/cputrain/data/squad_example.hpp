// SQuAD questions in memory, as Hugging Face's run_qa.py sees them after loading a dataset.
//
//   squad_answer     an answer's text and where it starts in the context, counted in Unicode code points
//   squad_example    one question: id, title, question, its context (by index), answers (none = unanswerable)
//   squad_dataset    the examples, each distinct context once, the format and version the file declared, and
//                    what a lenient read skipped
//
// answer_start counts code points because that is what the SQuAD files mean by it: Python indexes str by code
// point, and the official scripts and run_qa.py slice contexts that way. Contexts are kept byte for byte as the
// file has them (answer_start refers to them); questions are left-stripped, as run_qa.py strips them before
// tokenizing. A context is stored once however many questions share it: the Hugging Face flat format repeats
// the context in every record, and SQuAD v2.0's training file would otherwise hold ~130,000 copies of ~20,000
// paragraphs.
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
  std::uint32_t answer_start = 0;  ///< in Unicode code points, as Python indexes str

  friend bool operator==(const squad_answer&, const squad_answer&) = default;
};

/// One question of a SQuAD dataset.
struct squad_example {
  std::string id;
  std::string title;               ///< the article's title (nested format) or the record's "title"; empty if none
  std::string question;            ///< left-stripped of Unicode whitespace, as Python's str.lstrip() does
  std::uint32_t context_index = 0;  ///< into squad_dataset::contexts
  std::vector<squad_answer> answers;            ///< empty = unanswerable (SQuAD v2)
  std::vector<squad_answer> plausible_answers;  ///< SQuAD v2 nested files only, kept for reference

  [[nodiscard]] bool is_impossible() const noexcept { return answers.empty(); }
};

/// The layout a file was read in (detected from its content, see squad_reader.hpp).
enum class squad_format {
  nested,     ///< the official {"version", "data": [{"title", "paragraphs": [{"context", "qas": [...]}]}]}
  flat,       ///< Hugging Face's {"data": [{"id", "question", "context", "answers": {"text", "answer_start"}}]}
  json_lines  ///< one flat record per line
};

/// A whole SQuAD file.
struct squad_dataset {
  std::vector<squad_example> examples;
  std::vector<std::string> contexts;  ///< UTF-8, byte-identical to the file, each distinct context once
  squad_format format = squad_format::nested;
  std::string version;                ///< the file's "version" as text ("1.1", "v2.0", "2.0"); empty if none
  std::size_t skipped = 0;            ///< bad records skipped under bad_record_policy::skip
  std::vector<std::string> problems;  ///< one message per skipped record, the text refusing would have thrown

  [[nodiscard]] std::string_view context(const squad_example& e) const { return contexts[e.context_index]; }

  /// Whether any question has no answer (a SQuAD v2 dataset, which needs the v2 metrics).
  [[nodiscard]] bool has_unanswerable() const {
    return std::any_of(examples.begin(), examples.end(), [](const squad_example& e) { return e.is_impossible(); });
  }
};

}  // namespace cputrain::data
