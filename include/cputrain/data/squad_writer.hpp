// cputrain::data::squad_dataset -> the official nested SQuAD JSON (v1.1 or v2.0), which read_squad reads back.
//
//   squad_json_text(dataset)          the file's text
//   write_squad_json(dataset, file)   the file, written atomically (io::write_file_atomically)
#pragma once

#include "cputrain/data/squad_example.hpp"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/atomic_file.hpp"

namespace cputrain::data {

/// `dataset` as the official nested SQuAD JSON text: consecutive examples with the same title form an article,
/// consecutive examples with the same context a paragraph. "is_impossible" is written for SQuAD v2 datasets
/// (version not "1.1", or any unanswerable question), "plausible_answers" when an example has some. read_squad
/// gives back an equal dataset when the contexts are stored in the order the examples first use them, each used
/// (as read_squad and the demo generator store them). usage_error if an example's context_index is out of range.
[[nodiscard]] CPUTRAIN_DECL std::string squad_json_text(const squad_dataset& dataset);

/// Writes squad_json_text(dataset) to `file` atomically (io::write_file_atomically). Throws io_error.
CPUTRAIN_DECL void write_squad_json(const squad_dataset& dataset, const std::filesystem::path& file);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::string squad_json_text(const squad_dataset& dataset) {
  using json = nlohmann::ordered_json;
  const bool v2 = dataset.version != "1.1" || dataset.has_unanswerable();
  const auto answers_json = [](const std::vector<squad_answer>& answers) {
    json list = json::array();
    for (const squad_answer& a : answers) list.push_back(json{{"text", a.text}, {"answer_start", a.answer_start}});
    return list;
  };
  json data = json::array();
  const squad_example* previous = nullptr;
  for (const squad_example& e : dataset.examples) {
    if (e.context_index >= dataset.contexts.size()) {
      throw usage_error("write_squad_json: question \"" + e.id + "\" refers to context " +
                        std::to_string(e.context_index) + ", but the dataset has " +
                        std::to_string(dataset.contexts.size()));
    }
    if (previous == nullptr || previous->title != e.title) {
      data.push_back(json{{"title", e.title}, {"paragraphs", json::array()}});
    }
    json& paragraphs = data.back()["paragraphs"];
    if (previous == nullptr || previous->title != e.title || previous->context_index != e.context_index) {
      paragraphs.push_back(json{{"context", dataset.contexts[e.context_index]}, {"qas", json::array()}});
    }
    json qa{{"id", e.id}, {"question", e.question}, {"answers", answers_json(e.answers)}};
    if (v2) qa["is_impossible"] = e.is_impossible();
    if (!e.plausible_answers.empty()) qa["plausible_answers"] = answers_json(e.plausible_answers);
    paragraphs.back()["qas"].push_back(std::move(qa));
    previous = &e;
  }
  const json top{{"version", dataset.version}, {"data", std::move(data)}};
  return top.dump() + "\n";
}

CPUTRAIN_DECL void write_squad_json(const squad_dataset& dataset, const std::filesystem::path& file) {
  io::write_file_atomically(file, squad_json_text(dataset));
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
