// The demo's SQuAD dataset of made-up facts: make_demo_squad(options) writes paragraphs about invented people,
// towns, companies and rivers, and questions on them (some unanswerable); the same options give the same dataset,
// byte for byte once written (data::write_squad_json), on every platform. What the task is and why:
// docs/training.md, "The demo".
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/data/squad_example.hpp"
#include "demo/demo_names.hpp"
#include "demo/demo_paragraph.hpp"
#include "demo/demo_paragraph_builder.hpp"
#include "demo/demo_rng.hpp"

namespace cputrain::demo {

struct demo_squad_options {
  std::uint64_t seed = 1;
  demo_split split = demo_split::train;
  std::size_t paragraphs = 8000;
  std::size_t questions_per_paragraph = 5;
  /// 0 gives a SQuAD v1.1 dataset (version "1.1"), else "v2.0"
  double unanswerable_fraction = 0.2;
  /// Share of long paragraphs (200+ tokens: several windows at max_seq_length 128 / doc_stride 32).
  double long_paragraph_fraction = 1.0 / 40.0;
};

namespace detail {

inline void demo_check_options(const demo_squad_options& options) {
  if (!(options.unanswerable_fraction >= 0.0 && options.unanswerable_fraction <= 1.0)) {
    throw usage_error("make_demo_squad: unanswerable_fraction = " + std::to_string(options.unanswerable_fraction) +
                      " must lie in [0, 1]");
  }
  if (!(options.long_paragraph_fraction >= 0.0 && options.long_paragraph_fraction <= 1.0)) {
    throw usage_error("make_demo_squad: long_paragraph_fraction = " +
                      std::to_string(options.long_paragraph_fraction) + " must lie in [0, 1]");
  }
}

/// The paragraph's sentences in a random order; `fact_start` gets where each starts in the context.
inline std::string demo_context(demo_rng& rng, const demo_paragraph& p, std::vector<std::size_t>& fact_start) {
  std::vector<std::size_t> order(p.facts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  rng.shuffle(order);
  fact_start.assign(p.facts.size(), 0);
  std::string context;
  for (const std::size_t i : order) {
    if (!context.empty()) context += ' ';
    fact_start[i] = context.size();  // ASCII: bytes are code points
    context += p.facts[i].text;
  }
  return context;
}

/// A paragraph's question candidates in a random order: answerable ones, and unanswerable ones drawn family
/// first so that no family crowds out the others.
class demo_question_queue {
 public:
  demo_question_queue(demo_rng& rng, demo_paragraph& p)
      : rng_(rng), p_(p), next_unanswerable_(p.unanswerable.size(), 0) {
    rng_.shuffle(p_.answerable);
    for (auto& family : p_.unanswerable) rng_.shuffle(family);
  }

  /// The next question, unanswerable with probability `unanswerable_fraction` while any is left; nullptr when
  /// the answerable ones run out.
  const demo_question_candidate* next(double unanswerable_fraction) {
    if (rng_.chance(unanswerable_fraction)) {
      std::vector<std::size_t> open;  // families with questions left
      for (std::size_t f = 0; f < p_.unanswerable.size(); ++f) {
        if (next_unanswerable_[f] < p_.unanswerable[f].size()) open.push_back(f);
      }
      if (!open.empty()) {
        const std::size_t f = open[rng_.below(open.size())];
        return &p_.unanswerable[f][next_unanswerable_[f]++];
      }
    }
    if (next_answerable_ >= p_.answerable.size()) return nullptr;
    return &p_.answerable[next_answerable_++];
  }

 private:
  demo_rng& rng_;
  demo_paragraph& p_;
  std::size_t next_answerable_ = 0;
  std::vector<std::size_t> next_unanswerable_;
};

/// Makes the dataset paragraph by paragraph.
class demo_dataset_maker {
 public:
  explicit demo_dataset_maker(const demo_squad_options& options)
      // The split is mixed into the seed so that a train and an eval set made with one seed differ in every draw.
      : options_(options), rng_(options.seed * 2 + (options.split == demo_split::eval ? 1 : 0)),
        prefix_(options.split == demo_split::train ? "demo-train-" : "demo-eval-") {
    out_.format = data::squad_format::nested;
    out_.version = std::string(options.unanswerable_fraction > 0.0 ? "v2.0" : "1.1");
  }

  data::squad_dataset make() {
    for (std::size_t n = 0; n < options_.paragraphs; ++n) add_paragraph();
    return std::move(out_);
  }

 private:
  void add_paragraph() {
    std::string title;
    const bool long_paragraph = rng_.chance(options_.long_paragraph_fraction);
    demo_paragraph p = demo_make_paragraph(rng_, options_.split, long_paragraph, title);
    std::vector<std::size_t> fact_start;
    const auto context_index = static_cast<std::uint32_t>(out_.contexts.size());
    out_.contexts.push_back(demo_context(rng_, p, fact_start));

    demo_question_queue queue(rng_, p);
    std::set<std::string> asked;
    for (std::size_t q = 0; q < options_.questions_per_paragraph; ++q) {
      const demo_question_candidate* c = queue.next(options_.unanswerable_fraction);
      if (c == nullptr) break;
      std::string question = demo_render(rng_.pick(c->set->wordings), c->values);
      if (!asked.insert(question).second) continue;  // the same question twice in one paragraph: asked once
      add_example(std::move(question), title, context_index, p, *c, fact_start);
    }
    // A context no question refers to would not survive a round trip through a file.
    if (out_.examples.empty() || out_.examples.back().context_index != context_index) out_.contexts.pop_back();
  }

  void add_example(std::string question, const std::string& title, std::uint32_t context_index,
                   const demo_paragraph& p, const demo_question_candidate& c,
                   const std::vector<std::size_t>& fact_start) {
    data::squad_example e;
    std::string id = std::to_string(next_id_++);
    if (id.size() < 6) id.insert(0, 6 - id.size(), '0');
    e.id = prefix_ + id;
    e.title = title;
    e.question = std::move(question);
    e.context_index = context_index;
    if (c.answer != 0) {  // answer 0: unanswerable
      const auto& fact = p.facts[c.fact];
      const std::ptrdiff_t slot = fact.slots[static_cast<std::size_t>(c.answer - 'A')];
      if (slot < 0) throw usage_error("make_demo_squad: a sentence lacks the answer its question asks for");
      e.answers.push_back(data::squad_answer{
          fact.values.get(c.answer), static_cast<std::uint32_t>(fact_start[c.fact] + static_cast<std::size_t>(slot))});
    }
    out_.examples.push_back(std::move(e));
  }

  const demo_squad_options& options_;
  demo_rng rng_;
  std::string prefix_;
  data::squad_dataset out_;
  std::size_t next_id_ = 0;
};

}  // namespace detail

/// A SQuAD dataset of made-up facts. Deterministic: the same options give the same dataset, byte for byte once
/// written, with any standard library. Ids are "demo-train-000000", "demo-eval-..." in order; each paragraph is
/// its own article, titled after its first person. usage_error for a fraction outside [0, 1].
[[nodiscard]] inline data::squad_dataset make_demo_squad(const demo_squad_options& options) {
  detail::demo_check_options(options);
  return detail::demo_dataset_maker(options).make();
}

}  // namespace cputrain::demo

