// One paragraph of the demo: its sentences (facts with the places of their values) and the questions they
// answer or, asking for a relation the paragraph does not state, cannot answer.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/core/error.hpp"
#include "demo/demo_rng.hpp"
#include "demo/demo_words.hpp"

namespace cputrain::demo::detail {

/// Values of the placeholders, by letter (A to Z).
class demo_values {
 public:
  demo_values& set(char key, std::string value) {
    slot(key) = std::move(value);
    return *this;
  }
  [[nodiscard]] const std::string& get(char key) const {
    const auto& value = values_[index(key)];
    if (!value) throw usage_error(std::string("make_demo_squad: no value for placeholder {") + key + "}");
    return *value;
  }

 private:
  static std::size_t index(char key) {
    if (key < 'A' || key > 'Z') {
      throw usage_error(std::string("make_demo_squad: placeholder {") + key + "} is not a letter from A to Z");
    }
    return static_cast<std::size_t>(key - 'A');
  }
  std::optional<std::string>& slot(char key) { return values_[index(key)]; }

  std::array<std::optional<std::string>, 26> values_;
};

/// `pattern` with its placeholders filled; `first` receives where each letter's value first starts (-1: absent).
inline std::string demo_render(std::string_view pattern, const demo_values& values,
                               std::array<std::ptrdiff_t, 26>* first = nullptr) {
  if (first != nullptr) first->fill(-1);
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '{' && i + 2 < pattern.size() && pattern[i + 2] == '}') {
      const char key = pattern[i + 1];
      if (first != nullptr && (*first)[static_cast<std::size_t>(key - 'A')] < 0) {
        (*first)[static_cast<std::size_t>(key - 'A')] = static_cast<std::ptrdiff_t>(out.size());
      }
      out += values.get(key);
      i += 2;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

/// A question the paragraph can be asked: its kind, the values its wording needs, and the answer's letter in
/// the sentence `fact` (answer 0: unanswerable).
struct demo_question_candidate {
  const demo_question_set* set = nullptr;
  demo_values values;
  std::size_t fact = 0;
  char answer = 0;
};

/// One paragraph being written: its sentences and the questions they answer.
struct demo_paragraph {
  struct fact {
    std::string text;
    std::array<std::ptrdiff_t, 26> slots{};  // where each placeholder's value starts in `text`
    demo_values values;
  };
  std::vector<fact> facts;
  std::vector<demo_question_candidate> answerable;
  // Unanswerable questions by family (someone absent, a relation not stated, ...), drawn family first so that no
  // family crowds out the others.
  std::vector<std::vector<demo_question_candidate>> unanswerable;

  std::size_t add(demo_rng& rng, std::span<const std::string_view> wordings, demo_values values) {
    fact f;
    f.text = demo_render(rng.pick(wordings), values, &f.slots);
    f.values = std::move(values);
    facts.push_back(std::move(f));
    return facts.size() - 1;
  }
  void ask(const demo_question_set& set, demo_values values, std::size_t fact, char answer) {
    answerable.push_back({&set, std::move(values), fact, answer});
  }
  void new_unanswerable_family() { unanswerable.emplace_back(); }
  void ask_unanswerable(const demo_question_set& set, demo_values values) {
    unanswerable.back().push_back({&set, std::move(values), 0, 0});
  }
};

}  // namespace cputrain::demo::detail
