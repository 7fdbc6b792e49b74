// Draws one demo paragraph: its people and towns, at most one sentence per relation about the first person,
// filler sentences, and the questions. The order of the draws is the dataset: changing it changes every file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "demo/demo_names.hpp"
#include "demo/demo_paragraph.hpp"
#include "demo/demo_rng.hpp"
#include "demo/demo_words.hpp"

namespace cputrain::demo::detail {

inline std::string demo_year(demo_rng& rng, int lo, int hi) { return std::to_string(rng.between(lo, hi)); }

/// Builds the facts and question candidates of one paragraph. docs/training.md ("The demo") says why each relation
/// is stated at most once, and why unanswerable questions name someone the paragraph names.
class demo_paragraph_builder {
 public:
  demo_paragraph_builder(demo_rng& rng, demo_split split, bool long_paragraph)
      : rng_(rng), names_(rng, split), long_(long_paragraph) {}

  /// The paragraph; `title` gets its first person's name.
  demo_paragraph build(std::string& title) {
    draw_cast(title);
    born_ = rng_.between(1800, 1880);
    if (sibling_) state_sibling();
    if (maybe(0.85)) state_birth();
    if (maybe(0.45)) state_move();
    if (maybe(0.35)) state_death();
    if (maybe(0.6)) state_company();
    if (maybe(0.3)) state_population();
    if (maybe(0.4)) state_river();
    if (p_.answerable.empty()) state_birth();  // every paragraph states something
    add_fillers();
    const std::string any_year = demo_year(rng_, 1800, 1920);
    ask_unstated_about_people();
    ask_unstated_about_things(any_year);
    std::erase_if(p_.unanswerable, [](const auto& family) { return family.empty(); });
    return std::move(p_);
  }

 private:
  bool maybe(double probability) { return rng_.chance(probability); }
  template <class Array>
  std::string pick(const Array& array) {
    return std::string(rng_.pick(std::span<const std::string_view>(array)));
  }
  std::string someone() { return people_[rng_.below(people_.size())]; }
  std::string some_town() { return towns_[rng_.below(towns_.size())]; }
  void mention(const std::string& name) {
    mentioned_[static_cast<std::size_t>(std::find(people_.begin(), people_.end(), name) - people_.begin())] = true;
  }

  // The first person, maybe a sibling, in long paragraphs a neighbour named in passing; three towns.
  void draw_cast(std::string& title) {
    people_.push_back(names_.person());
    title = people_[0];
    const std::size_t family = names_.last_family();
    sibling_ = maybe(0.5);
    if (sibling_) people_.push_back(names_.person(family));
    if (long_) people_.push_back(names_.person());
    for (int i = 3; i > 0; --i) towns_.push_back(names_.town());
    mentioned_.assign(people_.size(), false);
  }

  void state_sibling() {
    const std::string kin = pick(demo_kin);
    const std::size_t f = p_.add(rng_, demo_sibling_sentences,
                                 demo_values().set('P', people_[0]).set('Q', people_[1]).set('K', kin));
    p_.ask(demo_sibling_who, demo_values().set('P', people_[0]).set('K', kin), f, 'Q');
    mentioned_[0] = mentioned_[1] = true;
  }

  void state_birth() {
    has_birth_ = true;
    born_who_ = people_[0];
    born_in_ = some_town();
    mention(born_who_);
    const std::size_t f = p_.add(rng_, demo_birth_sentences,
                                 demo_values().set('P', born_who_).set('T', born_in_).set('Y', std::to_string(born_)));
    p_.ask(demo_born_when, demo_values().set('P', born_who_), f, 'Y');
    p_.ask(demo_born_where, demo_values().set('P', born_who_), f, 'T');
  }

  void state_move() {
    has_move_ = true;
    const std::string who = people_[0];
    std::string to = some_town();
    while (who == born_who_ && to == born_in_) to = some_town();  // moving to one's birthplace would read oddly
    mention(who);
    const std::size_t f = p_.add(
        rng_, demo_move_sentences,
        demo_values().set('P', who).set('T', to).set('Y', demo_year(rng_, born_ + 18, born_ + 40)));
    p_.ask(demo_moved_where, demo_values().set('P', who), f, 'T');
    p_.ask(demo_moved_when, demo_values().set('P', who).set('T', to), f, 'Y');
  }

  void state_death() {
    has_death_ = true;
    const std::string who = people_[0];
    mention(who);
    const std::size_t f = p_.add(
        rng_, demo_death_sentences,
        demo_values().set('P', who).set('T', some_town()).set('Y', demo_year(rng_, born_ + 45, born_ + 85)));
    p_.ask(demo_died_when, demo_values().set('P', who), f, 'Y');
    p_.ask(demo_died_where, demo_values().set('P', who), f, 'T');
  }

  void state_company() {
    has_company_ = true;
    company_ = names_.company();
    const std::string who = people_[0];
    mention(who);
    const int year = rng_.between(born_ + 20, born_ + 45);
    const std::size_t f = p_.add(
        rng_, demo_founding_sentences,
        demo_values().set('P', who).set('C', company_).set('Y', std::to_string(year)).set('R', pick(demo_products)));
    p_.ask(demo_founder_who, demo_values().set('C', company_), f, 'P');
    p_.ask(demo_company_which, demo_values().set('P', who), f, 'C');
    p_.ask(demo_founded_when, demo_values().set('C', company_).set('P', who), f, 'Y');
    p_.ask(demo_made_what, demo_values().set('C', company_), f, 'R');
    if (maybe(0.5)) {
      has_employees_ = true;
      const std::size_t g = p_.add(rng_, demo_employees_sentences,
                                   demo_values().set('C', company_).set('N', std::to_string(rng_.between(12, 4800))));
      p_.ask(demo_employees, demo_values().set('C', company_), g, 'N');
    }
  }

  void state_population() {
    has_population_ = true;
    const std::string t = some_town(), year = demo_year(rng_, 1850, 1920);
    const std::size_t f = p_.add(
        rng_, demo_population_sentences,
        demo_values().set('T', t).set('N', std::to_string(rng_.between(400, 9800))).set('Y', year));
    p_.ask(demo_population, demo_values().set('T', t).set('Y', year), f, 'N');
  }

  void state_river() {
    has_river_ = true;
    const std::string river = names_.river(), t = some_town();
    const std::size_t f = p_.add(
        rng_, demo_river_sentences,
        demo_values().set('W', river).set('T', t).set('N', std::to_string(rng_.between(20, 890))));
    p_.ask(demo_river_length, demo_values().set('W', river).set('T', t), f, 'N');
    p_.ask(demo_river_town, demo_values().set('W', river), f, 'T');
    p_.ask(demo_river_which, demo_values().set('T', t), f, 'W');
  }

  // Everyone named is named for something: people without a relation get the first filler sentence. Long
  // paragraphs get 18-22 of the others, each once, in a random order (repeated sentences would read like a
  // broken record).
  void add_fillers() {
    std::vector<std::size_t> filler_order(demo_filler_sentences.size() - 1);
    for (std::size_t i = 0; i < filler_order.size(); ++i) filler_order[i] = i + 1;
    rng_.shuffle(filler_order);
    const std::size_t fillers = long_ ? static_cast<std::size_t>(rng_.between(18, 22)) : 0;
    for (std::size_t i = 0; i < people_.size(); ++i) {
      if (!mentioned_[i]) {
        p_.add(rng_, std::span<const std::string_view>(demo_filler_sentences).subspan(0, 1),
               demo_values().set('P', people_[i]));
      }
    }
    for (std::size_t i = 0; i < fillers; ++i) {
      p_.add(rng_, std::span<const std::string_view>(demo_filler_sentences).subspan(filler_order[i], 1),
             demo_values().set('P', someone()));
    }
  }

  // Unanswerable questions ask for a relation the paragraph does not state, about someone it names: the
  // relation words tell them apart (a stranger's name would have to be matched letter by letter).
  void ask_unstated_about_people() {
    p_.new_unanswerable_family();
    for (const std::string& who : people_) {
      const demo_values v = demo_values().set('P', who).set('Q', who).set('T', some_town()).set('K', pick(demo_kin));
      if (!has_birth_) {
        p_.ask_unanswerable(demo_born_when, v);
        p_.ask_unanswerable(demo_born_where, v);
      }
      if (!has_move_) {
        p_.ask_unanswerable(demo_moved_where, v);
        p_.ask_unanswerable(demo_moved_when, v);
      }
      if (!has_death_) {
        p_.ask_unanswerable(demo_died_when, v);
        p_.ask_unanswerable(demo_died_where, v);
      }
      if (!has_company_) p_.ask_unanswerable(demo_company_which, v);
      if (!sibling_) p_.ask_unanswerable(demo_sibling_who, v);
    }
  }

  // Companies, rivers and town sizes the paragraph does not state: asked about one it does not name.
  void ask_unstated_about_things(const std::string& any_year) {
    p_.new_unanswerable_family();
    if (!has_company_) {
      const demo_values v = demo_values().set('C', names_.company()).set('P', people_[0]).set('Y', any_year);
      for (const demo_question_set* set : {&demo_founder_who, &demo_made_what, &demo_founded_when, &demo_employees}) {
        p_.ask_unanswerable(*set, v);
      }
    } else if (!has_employees_) {
      p_.ask_unanswerable(demo_employees, demo_values().set('C', company_));
    }
    if (!has_river_) {
      const std::string river = names_.river();
      p_.ask_unanswerable(demo_river_length, demo_values().set('W', river).set('T', some_town()));
      p_.ask_unanswerable(demo_river_town, demo_values().set('W', river));
      for (const std::string& t : towns_) p_.ask_unanswerable(demo_river_which, demo_values().set('T', t));
    }
    if (!has_population_) {
      for (const std::string& t : towns_) {
        p_.ask_unanswerable(demo_population, demo_values().set('T', t).set('Y', any_year));
      }
    }
  }

  demo_rng& rng_;
  demo_names names_;
  bool long_;
  demo_paragraph p_;
  std::vector<std::string> people_, towns_;
  std::vector<bool> mentioned_;
  bool sibling_ = false, has_birth_ = false, has_move_ = false, has_death_ = false, has_company_ = false;
  bool has_employees_ = false, has_population_ = false, has_river_ = false;
  int born_ = 0;
  std::string born_who_, born_in_, company_;
};

/// The facts and question candidates of one paragraph; `title` gets its first person's name.
inline demo_paragraph demo_make_paragraph(demo_rng& rng, demo_split split, bool long_paragraph, std::string& title) {
  return demo_paragraph_builder(rng, split, long_paragraph).build(title);
}

}  // namespace cputrain::demo::detail
