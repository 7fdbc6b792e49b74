// The demo's named entities, CoNLL-2003 style: make_demo_ner(options) writes sentences about made-up people,
// towns, rivers, companies and fairs, cut into words with punctuation and "'s" as words of their own, each word
// tagged in IOB2 — PER (people), LOC (towns, rivers), ORG (companies), MISC (fairs: "the Kelbury Fair"), O (the
// rest, years and products too, as in CoNLL) — and write_demo_ner_json_lines(sentences, path) writes one
// {"id", "tokens", "ner_tags"} object a line. Some names need their context: a company may carry a person's or a
// town's name ("Ashson Mills", "Kelbury Works") and a fair a town's. Deterministic like make_demo_squad; an eval
// split names what a train split never does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/io/atomic_file.hpp"
#include "demo/demo_names.hpp"
#include "demo/demo_paragraph.hpp"
#include "demo/demo_rng.hpp"
#include "demo/demo_task_words.hpp"
#include "demo/demo_words.hpp"

namespace cputrain::demo {

struct demo_ner_options {
  std::uint64_t seed = 1;
  demo_split split = demo_split::train;
  std::size_t sentences = 10000;
};

struct demo_ner_sentence {
  std::vector<std::string> tokens, tags;  // one tag per token
};

namespace detail {

/// The entity type of a placeholder's value; "" for O.
inline std::string_view demo_ner_type(char key) {
  switch (key) {
    case 'P': case 'Q': return "PER";
    case 'T': case 'W': return "LOC";
    case 'C': return "ORG";
    case 'E': return "MISC";
    default: return "";
  }
}

inline bool demo_ner_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/// Appends the words of `text` tagged O: runs of letters and digits, "'s", and each other mark alone.
inline void demo_ner_add_words(std::string_view text, demo_ner_sentence& out) {
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    if (demo_ner_alnum(text[i])) {
      while (end < text.size() && demo_ner_alnum(text[end])) ++end;
    } else if (text[i] == '\'' && end < text.size() && text[end] == 's' &&
               (end + 1 == text.size() || !demo_ner_alnum(text[end + 1]))) {
      ++end;
    }
    out.tokens.emplace_back(text.substr(i, end - i));
    out.tags.emplace_back("O");
    i = end;
  }
}

/// `pattern` with its placeholders filled, as words with their tags.
inline demo_ner_sentence demo_ner_render(std::string_view pattern, const demo_values& values) {
  demo_ner_sentence out;
  std::size_t literal = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{' || i + 2 >= pattern.size() || pattern[i + 2] != '}') continue;
    demo_ner_add_words(pattern.substr(literal, i - literal), out);
    const std::size_t first = out.tokens.size();
    demo_ner_add_words(values.get(pattern[i + 1]), out);
    const std::string_view type = demo_ner_type(pattern[i + 1]);
    for (std::size_t k = first; !type.empty() && k < out.tags.size(); ++k) {
      out.tags[k] = (k == first ? "B-" : "I-") + std::string(type);
    }
    i += 2;
    literal = i + 1;
  }
  demo_ner_add_words(pattern.substr(literal), out);
  return out;
}

/// Draws the sentences of one split.
class demo_ner_maker {
 public:
  explicit demo_ner_maker(const demo_ner_options& options)
      // As in make_demo_squad: the split is mixed into the seed, so a train and an eval set of one seed differ.
      : options_(options), rng_(options.seed * 2 + (options.split == demo_split::eval ? 1 : 0)) {}

  std::vector<demo_ner_sentence> make() {
    std::vector<demo_ner_sentence> out;
    out.reserve(options_.sentences);
    for (std::size_t n = 0; n < options_.sentences; ++n) out.push_back(sentence());
    return out;
  }

 private:
  // The QA demo's relations in 45% of the sentences, things named in passing in 40%, its fillers (half of them
  // without a name: sentences of O alone, as CoNLL has) in 15%.
  demo_ner_sentence sentence() {
    static constexpr std::array<std::span<const std::string_view>, 8> relations{
        demo_birth_sentences,    demo_death_sentences, demo_sibling_sentences, demo_founding_sentences,
        demo_move_sentences,     demo_employees_sentences, demo_river_sentences, demo_population_sentences};
    const std::uint64_t u = rng_.below(100);
    std::span<const std::string_view> wordings = demo_filler_sentences;
    if (u < 45) {
      wordings = relations[rng_.below(relations.size())];
    } else if (u < 85) {
      wordings = demo_ner_sentences;
    }
    const std::string_view pattern = rng_.pick(wordings);
    return demo_ner_render(pattern, values());
  }

  // Every value a pattern may need, each name new within the sentence.
  demo_values values() {
    demo_names names(rng_, options_.split);
    const std::string p = names.person();
    const std::string last = demo_names::last_name(names.last_family());
    const std::string q = rng_.chance(0.5) ? names.person(names.last_family()) : names.person();
    std::string fair = names.town() + " Fair";
    return demo_values()
        .set('P', p)
        .set('Q', q)
        .set('T', names.town())
        .set('W', names.river())
        .set('C', company(names, last))
        .set('E', std::move(fair))
        .set('Y', std::to_string(rng_.between(1800, 1920)))
        .set('N', std::to_string(rng_.between(12, 4800)))
        .set('R', std::string(rng_.pick(std::span<const std::string_view>(demo_products))))
        .set('K', std::string(rng_.pick(std::span<const std::string_view>(demo_kin))));
  }

  // Mostly a made-up name; a fifth carry the sentence's person's last name ("Alvar Ashson founded Ashson Mills")
  // and some a town's, which only the company's kind after them tells from a person or a place.
  std::string company(demo_names& names, const std::string& last) {
    const std::uint64_t u = rng_.below(10);
    if (u >= 3) return names.company();
    std::string name = u < 2 ? last : names.town();
    name += ' ';
    name += rng_.pick(std::span<const std::string_view>(demo_company_kinds));
    return name;
  }

  const demo_ner_options& options_;
  demo_rng rng_;
};

}  // namespace detail

/// NER sentences of made-up facts. Deterministic: the same options give the same sentences.
[[nodiscard]] inline std::vector<demo_ner_sentence> make_demo_ner(const demo_ner_options& options) {
  return detail::demo_ner_maker(options).make();
}

/// Writes `sentences` as JSON Lines, {"id":"0","tokens":[...],"ner_tags":[...]} a line (ids count from 0), as
/// Hugging Face's run_ner reads them, atomically. io_error on failure.
inline void write_demo_ner_json_lines(std::span<const demo_ner_sentence> sentences, const std::filesystem::path& path) {
  std::string text;
  for (std::size_t n = 0; n < sentences.size(); ++n) {
    const nlohmann::ordered_json line{
        {"id", std::to_string(n)}, {"tokens", sentences[n].tokens}, {"ner_tags", sentences[n].tags}};
    text += line.dump();
    text += '\n';
  }
  io::write_file_atomically(path, text);
}

}  // namespace cputrain::demo
