// The demo's paraphrase pairs, in GLUE MRPC's columns: make_demo_glue(options) states a made-up fact twice, either
// reworded (label 1) or as a near miss (label 0: one value changed — by default the year; options may allow a
// person, a town, a number, a company, a product, or the relation swapped for another about the same person, town
// and year), and write_demo_glue_csv(pairs, path) writes sentence1,sentence2,label,idx. Deterministic like
// make_demo_squad; an eval split names people, towns, companies and rivers a train split never does, so the model
// has to compare the two sentences rather than remember facts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/io/atomic_file.hpp"
#include "demo/demo_names.hpp"
#include "demo/demo_paragraph.hpp"
#include "demo/demo_rng.hpp"
#include "demo/demo_task_words.hpp"
#include "demo/demo_words.hpp"

namespace cputrain::demo {

struct demo_glue_options {
  std::uint64_t seed = 1;
  demo_split split = demo_split::train;
  std::size_t pairs = 20000;
  /// Share of label 1, near MRPC's 68% but closer to even, so that always saying "same" scores poorly.
  double paraphrase_fraction = 0.6;
  /// Share of pairs worded differently, whatever their label: wording then tells nothing about the label.
  double reworded_fraction = 0.8;
  /// The values a near miss changes (letters of demo_glue_relations(): Y a year, P a person, T a town, ...); facts
  /// are drawn only from relations that state one of them. A year by default: demo_bert_config() trained from
  /// scratch learns to compare one kind of value within a demo's minutes (0.938 after scripts/demo.sh glue's 6,000
  /// steps), while with every kind allowed it stays near the majority share for thousands of steps
  /// (docs/training.md, "The other demos").
  std::string near_miss_values = "Y";
  /// Whether a near miss may also swap the relation for another of its family (born, died, moved).
  bool swap_relations = false;
};

struct demo_glue_pair {
  std::string sentence1, sentence2;
  int label = 0;  // 1: the same fact
};

namespace detail {

/// A name of two pieces — a first and a last name, or a start and an ending — and for a company its kind. Near
/// misses change one piece and keep the other, so that two names differ by a single token.
struct demo_glue_name {
  std::size_t i = 0, j = 0, kind = 0;
  bool operator==(const demo_glue_name&) const = default;
};

/// How many pieces each kind of name draws from.
struct demo_glue_name_space {
  std::size_t starts, ends, kinds;
};
inline constexpr demo_glue_name_space demo_glue_people{demo_names::first_count, demo_names::last_count, 1};
inline constexpr demo_glue_name_space demo_glue_towns{demo_town_starts.size(), demo_town_ends.size(), 1};
inline constexpr demo_glue_name_space demo_glue_rivers{demo_river_starts.size(), demo_river_ends.size(), 1};
inline constexpr demo_glue_name_space demo_glue_companies{demo_company_starts.size(), demo_company_ends.size(),
                                                          demo_company_kinds.size()};

/// One relation: its wordings, the letters of the values its sentences state (each one a near miss may change),
/// the range of its number {N}, and its family: relations of one family (> 0) state the same values, so swapping
/// one for another is a near miss too.
struct demo_glue_relation {
  std::span<const std::string_view> wordings;
  std::string_view letters;
  int family = 0;
  int lo = 0, hi = 0;
};

inline const std::array<demo_glue_relation, 8>& demo_glue_relations() {
  static const std::array<demo_glue_relation, 8> relations{{{demo_glue_birth, "PTY", 1},
                                                            {demo_glue_death, "PTY", 1},
                                                            {demo_glue_move, "PTY", 1},
                                                            {demo_glue_sibling, "PKQ"},
                                                            {demo_glue_founding, "PCYR"},
                                                            {demo_glue_employees, "CN", 0, 12, 4800},
                                                            {demo_glue_river, "WTN", 0, 20, 890},
                                                            {demo_glue_population, "TNY", 0, 400, 9800}}};
  return relations;
}

/// A fact: a relation and every value any relation may need.
struct demo_glue_fact {
  const demo_glue_relation* relation = nullptr;
  demo_glue_name p, q, t, w, c;
  int y = 0, n = 0;
  std::size_t r = 0, k = 0;
};

inline std::string demo_glue_person_name(const demo_glue_name& x) {
  return demo_names::first_name(x.i) + " " + demo_names::last_name(x.j);
}

/// The fact's values by letter, as demo_render takes them.
inline demo_values demo_glue_values(const demo_glue_fact& f) {
  std::string company = demo_join(demo_company_starts, demo_company_ends, f.c.i, f.c.j);
  company += ' ';
  company += demo_company_kinds[f.c.kind];
  return demo_values()
      .set('P', demo_glue_person_name(f.p))
      .set('Q', demo_glue_person_name(f.q))
      .set('T', demo_join(demo_town_starts, demo_town_ends, f.t.i, f.t.j))
      .set('W', demo_join(demo_river_starts, demo_river_ends, f.w.i, f.w.j))
      .set('C', std::move(company))
      .set('Y', std::to_string(f.y))
      .set('N', std::to_string(f.n))
      .set('R', std::string(demo_products[f.r]))
      .set('K', std::string(demo_kin[f.k]));
}

/// Draws the pairs of one split.
class demo_glue_maker {
 public:
  explicit demo_glue_maker(const demo_glue_options& options)
      // As in make_demo_squad: the split is mixed into the seed, so a train and an eval set of one seed differ.
      : options_(options), rng_(options.seed * 2 + (options.split == demo_split::eval ? 1 : 0)),
        eval_(options.split == demo_split::eval), eligible_(eligible_relations(options)) {}

  std::vector<demo_glue_pair> make() {
    std::vector<demo_glue_pair> pairs;
    pairs.reserve(options_.pairs);
    for (std::size_t n = 0; n < options_.pairs; ++n) pairs.push_back(pair());
    return pairs;
  }

 private:
  demo_glue_pair pair() {
    const demo_glue_fact a = fact();
    demo_glue_fact b = a;
    const bool same = rng_.chance(options_.paraphrase_fraction);
    if (!same) change(b);
    const std::size_t wa = rng_.below(a.relation->wordings.size());
    const std::size_t count = b.relation->wordings.size();
    std::size_t wb = wa % count;
    if (count > 1 && rng_.chance(options_.reworded_fraction)) {
      while (wb == wa % count) wb = rng_.below(count);
    }
    return {demo_render(a.relation->wordings[wa], demo_glue_values(a)),
            demo_render(b.relation->wordings[wb], demo_glue_values(b)), same ? 1 : 0};
  }

  // Every value any relation needs, so that a near miss can swap the relation and keep the values.
  demo_glue_fact fact() {
    demo_glue_fact f;
    f.relation = eligible_[rng_.below(eligible_.size())];
    f.p = name(demo_glue_people);
    f.q = sibling_of(f.p);
    f.t = name(demo_glue_towns);
    f.w = name(demo_glue_rivers);
    f.c = name(demo_glue_companies);
    f.y = rng_.between(1800, 1920);
    f.n = f.relation->hi > 0 ? rng_.between(f.relation->lo, f.relation->hi) : 0;
    f.r = rng_.below(demo_products.size());
    f.k = rng_.below(demo_kin.size());
    return f;
  }

  demo_glue_name name(const demo_glue_name_space& s) {
    for (;;) {
      const demo_glue_name x{rng_.below(s.starts), rng_.below(s.ends), rng_.below(s.kinds)};
      if (demo_in_eval(x.i, x.j) == eval_) return x;
    }
  }

  // As in the QA demo, siblings share the last name (a near miss may then change one's first name alone).
  demo_glue_name sibling_of(const demo_glue_name& p) {
    for (;;) {
      const demo_glue_name q{rng_.below(demo_glue_people.starts), p.j, 0};
      if (q.i != p.i && demo_in_eval(q.i, q.j) == eval_) return q;
    }
  }

  // Another name of the split, differing from `x` by its start (first name), its ending (last name), both, or a
  // company's kind alone.
  demo_glue_name near(const demo_glue_name& x, const demo_glue_name_space& s) {
    const std::uint64_t mode = rng_.below(s.kinds > 1 ? 4 : 3);
    for (;;) {
      demo_glue_name y = x;
      if (mode == 0 || mode == 2) y.i = rng_.below(s.starts);
      if (mode == 1 || mode == 2) y.j = rng_.below(s.ends);
      if (mode == 3) y.kind = rng_.below(s.kinds);
      if (!(y == x) && demo_in_eval(y.i, y.j) == eval_) return y;
    }
  }

  // Another number in [lo, hi]: half the time within `close` of `x` (1843 against 1845), else anywhere.
  int other_number(int x, int lo, int hi, int close) {
    const bool near_x = rng_.chance(0.5);
    for (;;) {
      const int y = near_x ? x + rng_.between(-close, close) : rng_.between(lo, hi);
      if (y != x && y >= lo && y <= hi) return y;
    }
  }

  // One of the allowed values the fact's relation states changes, or (where allowed) the relation itself.
  void change(demo_glue_fact& f) {
    std::string letters;
    for (const char c : f.relation->letters)
      if (options_.near_miss_values.find(c) != std::string::npos) letters += c;
    const bool swaps = options_.swap_relations && f.relation->family > 0;
    const std::size_t choice = rng_.below(letters.size() + (swaps ? 1 : 0));
    if (choice == letters.size()) return swap_relation(f);
    switch (letters[choice]) {
      case 'P': do f.p = near(f.p, demo_glue_people); while (f.p.i == f.q.i); break;
      case 'Q': do f.q = near(f.q, demo_glue_people); while (f.q.i == f.p.i); break;
      case 'T': f.t = near(f.t, demo_glue_towns); break;
      case 'W': f.w = near(f.w, demo_glue_rivers); break;
      case 'C': f.c = near(f.c, demo_glue_companies); break;
      case 'Y': f.y = other_number(f.y, 1800, 1920, 5); break;
      case 'N': f.n = other_number(f.n, f.relation->lo, f.relation->hi, f.n / 10 + 1); break;
      case 'R': f.r = (f.r + 1 + rng_.below(demo_products.size() - 1)) % demo_products.size(); break;
      case 'K': f.k = 1 - f.k; break;
      default: throw usage_error(std::string("make_demo_glue: no near miss for {") + letters[choice] + "}");
    }
  }

  // Another relation of the fact's family about the same values: born against died or moved.
  void swap_relation(demo_glue_fact& f) {
    const auto& relations = demo_glue_relations();
    for (;;) {
      const demo_glue_relation& r = relations[rng_.below(relations.size())];
      if (&r != f.relation && r.family == f.relation->family) {
        f.relation = &r;
        return;
      }
    }
  }

  // The relations a near miss can change: one of their values is allowed, or they can be swapped.
  static std::vector<const demo_glue_relation*> eligible_relations(const demo_glue_options& options) {
    std::vector<const demo_glue_relation*> eligible;
    for (const demo_glue_relation& r : demo_glue_relations()) {
      const bool has_value = r.letters.find_first_of(options.near_miss_values) != std::string_view::npos;
      if (has_value || (options.swap_relations && r.family > 0)) eligible.push_back(&r);
    }
    if (eligible.empty())
      throw usage_error("make_demo_glue: no relation states any of the near-miss values \"" +
                        options.near_miss_values + "\" (letters of P Q T W C Y N R K)");
    return eligible;
  }

  const demo_glue_options& options_;
  demo_rng rng_;
  bool eval_;
  std::vector<const demo_glue_relation*> eligible_;
};

/// `s` as one CSV field (RFC 4180): quoted, with its quotes doubled, when it holds a comma, a quote or a line break.
inline std::string demo_csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace detail

/// Paraphrase pairs of made-up facts. Deterministic: the same options give the same pairs. usage_error for a
/// fraction outside [0, 1].
[[nodiscard]] inline std::vector<demo_glue_pair> make_demo_glue(const demo_glue_options& options) {
  for (const double fraction : {options.paraphrase_fraction, options.reworded_fraction}) {
    if (!(fraction >= 0.0 && fraction <= 1.0)) {
      throw usage_error("make_demo_glue: fraction " + std::to_string(fraction) + " must lie in [0, 1]");
    }
  }
  return detail::demo_glue_maker(options).make();
}

/// Writes `pairs` as GLUE MRPC's CSV (header sentence1,sentence2,label,idx; idx counts from 0; lines end in "\n"),
/// atomically. io_error on failure.
inline void write_demo_glue_csv(std::span<const demo_glue_pair> pairs, const std::filesystem::path& path) {
  std::string text = "sentence1,sentence2,label,idx\n";
  for (std::size_t n = 0; n < pairs.size(); ++n) {
    text += detail::demo_csv_field(pairs[n].sentence1) + ',' + detail::demo_csv_field(pairs[n].sentence2) + ',' +
            std::to_string(pairs[n].label) + ',' + std::to_string(n) + '\n';
  }
  io::write_file_atomically(path, text);
}

}  // namespace cputrain::demo
