// The demo: a SQuAD-style dataset of made-up facts, and the small BERT that learns it from scratch in minutes on
// two cores — so the README's first command trains and evaluates a real extractive-QA model with nothing
// downloaded.
//
//   make_demo_squad(options)          paragraphs about invented people, towns, companies and rivers, and questions
//                                     on them (who / when / where / what / how many / which company), some
//                                     unanswerable; the same options give the same dataset on every platform
//   write_squad_json(dataset, file)   the official nested SQuAD file, written atomically; read_squad reads it back
//   demo_vocabulary()                 vocab.txt's lines: every word the generator writes is one token or a few
//   demo_bert_config()                the small BERT that learns it
//   write_demo_model_dir(dir, config) config.json, vocab.txt and tokenizer_config.json: a model directory to train
//                                     from scratch
//
// What makes the task worth learning, and measurable: names are built from syllables, and a train and an eval
// split draw them from disjoint combinations, so evaluation asks about people, towns, companies and rivers the
// model never saw — it has to read, not remember. A paragraph names several people, towns, years and numbers,
// so the answer is the one that the question's relation picks (born in / moved to / died in, founded / employed /
// inhabitants / kilometres, ...), not merely the first token of the right kind; sentences come in two wordings
// and questions in two paraphrases; about one paragraph in forty is long enough (200+ tokens) to need several
// windows at max_seq_length 128 / doc_stride 32. An unanswerable question asks for a relation its paragraph does
// not state.
//
// What it leaves out, on purpose, because a BERT trained from scratch on question answering alone (two labels per
// sequence) does not learn it in a demo's minutes (measured with the demo's model and settings):
//   - two facts of one relation in one paragraph ("A was born in 1843. B was born in 1851. When was B born?"):
//     tying a name to a year seven tokens away was not learned in 10,000 steps, while relation words are learned
//     in a few hundred. Each relation is stated at most once per paragraph, about its first person; the others
//     are a sibling and, in long paragraphs, a neighbour named in passing. For the same reason no question names
//     one person of a sentence to ask for the other ("Whose sister was B?").
//   - unanswerable questions about someone the paragraph does not name: telling an unseen name from a present one
//     letter by letter kept unanswerable F1 near 40.
//   - many wordings per relation, one number word shared by two relations ("people" employed / "people" lived),
//     and many long paragraphs: each slowed learning several-fold.
//
// Randomness is std::mt19937_64 with our own bounded draws: std::uniform_int_distribution and friends are not
// specified exactly, and would make the "same" dataset differ between standard libraries.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/data/squad_example.hpp"
#include "cputrain/io/atomic_file.hpp"
#include "cputrain/io/bert_config_json.hpp"
#include "cputrain/io/io_error.hpp"
#include "cputrain/nn/bert_config.hpp"

namespace cputrain::data {

/// Which part of the name space a dataset draws its entities from: no eval name occurs in train data.
enum class demo_split { train, eval };

struct demo_squad_options {
  std::uint64_t seed = 1;
  demo_split split = demo_split::train;
  std::size_t paragraphs = 8000;
  std::size_t questions_per_paragraph = 5;
  double unanswerable_fraction = 0.2;  ///< 0 gives a SQuAD v1.1 dataset (version "1.1"), else "v2.0"
  /// Share of long paragraphs (200+ tokens: several windows at max_seq_length 128 / doc_stride 32).
  double long_paragraph_fraction = 1.0 / 40.0;
};

namespace detail {

/// Bounded draws on top of mt19937_64, whose output sequence the standard fixes.
class demo_rng {
 public:
  explicit demo_rng(std::uint64_t seed) : engine_(seed) {}

  /// Uniform in [0, n), n > 0: rejecting the top partial block keeps it unbiased.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    for (;;) {
      const std::uint64_t x = engine_();
      if (x < limit) return x % n;
    }
  }
  /// Uniform in [lo, hi].
  int between(int lo, int hi) { return lo + static_cast<int>(below(static_cast<std::uint64_t>(hi - lo) + 1)); }
  /// True with probability p (53 random bits against p).
  bool chance(double p) { return static_cast<double>(engine_() >> 11) * 0x1.0p-53 < p; }

  template <class T>
  const T& pick(std::span<const T> items) {
    return items[below(items.size())];
  }
  template <class T>
  void shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[below(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

// Names are a start and an ending. A person's first and last names are whole vocabulary tokens (so that asking
// about someone absent is told apart by the name, not by half of it); towns, companies and rivers are a start
// piece and a "##" ending piece. The eval split takes the combinations with (i + j) % 4 == 0 — for people, of the
// first and the last name's indices — and the train split the others, so every token is trained and no eval name
// is.
inline constexpr std::array<std::string_view, 20> demo_first_starts{
    "al", "bel", "cor", "dar", "el", "fen", "gar", "hal", "id", "jor",
    "kal", "lor", "mar", "nor", "or", "per", "ros", "sel", "tam", "ul"};
inline constexpr std::array<std::string_view, 12> demo_first_ends{
    "var", "wyn", "ric", "da", "mon", "ina", "ard", "is", "eth", "ian", "ora", "ulf"};
inline constexpr std::array<std::string_view, 20> demo_last_starts{
    "ash", "brem", "cal", "dun", "east", "fair", "gold", "hart", "ing", "kemp",
    "lang", "mor", "nash", "ock", "pem", "quill", "rad", "stan", "thorn", "wex"};
inline constexpr std::array<std::string_view, 12> demo_last_ends{
    "son", "ley", "ridge", "man", "wood", "er", "ing", "worth", "by", "well", "ham", "ford"};
inline constexpr std::array<std::string_view, 20> demo_town_starts{
    "kel", "pell", "amber", "bri", "craw", "dorn", "elm", "frost", "glen", "hollow",
    "ivy", "lark", "mill", "north", "oak", "ruth", "salt", "tarn", "wil", "york"};
inline constexpr std::array<std::string_view, 12> demo_town_ends{
    "bury", "ford", "mere", "wick", "field", "stead", "dale", "thorpe", "mouth", "port", "ton", "gate"};
inline constexpr std::array<std::string_view, 16> demo_company_starts{
    "mor", "vel", "zan", "tri", "quor", "lum", "dex", "bax", "cor", "fal", "hex", "jun", "nov", "pax", "sol", "tor"};
inline constexpr std::array<std::string_view, 8> demo_company_ends{"vex", "tar", "lix", "dor", "ium", "ena", "co",
                                                                   "ant"};
inline constexpr std::array<std::string_view, 6> demo_company_kinds{"Works", "Mills", "Company", "Foundry",
                                                                    "Industries", "Brothers"};
inline constexpr std::array<std::string_view, 16> demo_river_starts{
    "os", "tay", "wen", "lud", "ar", "bev", "cam", "der", "ev", "for", "gar", "isk", "lin", "mal", "ned", "sev"};
inline constexpr std::array<std::string_view, 8> demo_river_ends{"el", "an", "ire", "wen", "a", "ock", "ern", "ith"};
inline constexpr std::array<std::string_view, 30> demo_products{
    "wool",         "glass bottles", "bicycles",      "clocks",      "paper",        "soap",
    "steel wire",   "candles",       "leather boots", "pianos",      "rope",         "bricks",
    "sewing machines", "matches",    "umbrellas",     "typewriters", "copper pipes", "telescopes",
    "lamps",        "hats",          "biscuits",      "cotton cloth", "buttons",     "nails",
    "barrels",      "tiles",         "ink",           "chairs",      "carpets",      "toys"};
inline constexpr std::array<std::string_view, 2> demo_kin{"sister", "brother"};
inline constexpr int demo_first_year = 1800;  // years are whole tokens, 1800 to 1999
inline constexpr int demo_last_year = 1999;

// Sentences, by relation. Placeholders: {P} a person, {Q} a second person, {K} sister or brother, {T} a town, {Y}
// a year, {C} a company, {R} a product, {N} a number, {W} a river. Every wording of a relation holds every value
// its questions ask for.
inline constexpr std::array<std::string_view, 2> demo_birth_sentences{"{P} was born in {T} in {Y}.",
                                                                      "{P} was born in the town of {T} in {Y}."};
inline constexpr std::array<std::string_view, 2> demo_death_sentences{"{P} died in {T} in {Y}.",
                                                                      "{P} died in the town of {T} in {Y}."};
inline constexpr std::array<std::string_view, 2> demo_sibling_sentences{"{P} had a {K} named {Q}.",
                                                                        "{P}'s {K} was {Q}."};
inline constexpr std::array<std::string_view, 2> demo_founding_sentences{
    "In {Y}, {P} founded {C}, a company that made {R}.", "In {Y}, {P} started {C}, a company that made {R}."};
inline constexpr std::array<std::string_view, 2> demo_move_sentences{"{P} moved to {T} in {Y}.",
                                                                     "{P} settled in {T} in {Y}."};
inline constexpr std::array<std::string_view, 2> demo_employees_sentences{"{C} employed {N} people.",
                                                                          "{C} had {N} workers."};
inline constexpr std::array<std::string_view, 2> demo_river_sentences{
    "The river {W} flows through {T} for {N} kilometres.", "The {W} river runs through {T} for {N} kilometres."};
inline constexpr std::array<std::string_view, 2> demo_population_sentences{"In {Y}, {T} had {N} inhabitants.",
                                                                           "{T} had {N} inhabitants in {Y}."};
// Sentences no question asks about: they make paragraphs long and put more people, towns, years and products
// around the answers.
inline constexpr std::array<std::string_view, 24> demo_filler_sentences{
    "{P} was fond of music and books.",
    "{P} was a quiet and careful person.",
    "{P} kept a small garden behind the house.",
    "{P} often walked in the hills.",
    "{P} wrote many letters to old friends.",
    "{P} liked to read in the evening.",
    "{P} never learned to swim.",
    "{P} was known for a loud laugh.",
    "{P} enjoyed long walks by the sea.",
    "{P} played the piano on Sundays.",
    "{P} kept a diary for many years.",
    "{P} was fond of old maps.",
    "The winters there were long and cold.",
    "Many visitors came in the summer.",
    "The people held a fair every autumn.",
    "The main road ran along the valley.",
    "The old stone bridge was known far and wide.",
    "Life in the valley was quiet.",
    "The market was busy on Saturdays.",
    "Most houses were built of grey stone.",
    "The hills around were green in spring.",
    "The school had only one room.",
    "Few people owned a horse.",
    "The nights were dark and still."};

/// A kind of question with its wordings; `type` is what it asks for (who, when, ...).
struct demo_question_set {
  std::string_view type;
  std::span<const std::string_view> wordings;
};

inline constexpr std::array<std::string_view, 2> demo_q_born_when{"When was {P} born?", "In what year was {P} born?"};
inline constexpr std::array<std::string_view, 2> demo_q_born_where{"Where was {P} born?", "In which town was {P} born?"};
inline constexpr std::array<std::string_view, 2> demo_q_died_when{"When did {P} die?", "In what year did {P} die?"};
inline constexpr std::array<std::string_view, 2> demo_q_died_where{"Where did {P} die?", "In which town did {P} die?"};
inline constexpr std::array<std::string_view, 2> demo_q_sibling_who{"Who was {P}'s {K}?", "What was the name of {P}'s {K}?"};
inline constexpr std::array<std::string_view, 2> demo_q_founder_who{"Who founded {C}?", "Who was the founder of {C}?"};
inline constexpr std::array<std::string_view, 2> demo_q_company_which{"Which company did {P} found?", "What company was founded by {P}?"};
inline constexpr std::array<std::string_view, 2> demo_q_founded_when{"When was {C} founded?", "In what year did {P} found {C}?"};
inline constexpr std::array<std::string_view, 2> demo_q_made_what{"What did {C} make?", "What did the company {C} make?"};
inline constexpr std::array<std::string_view, 2> demo_q_moved_where{"Where did {P} move to?", "To which town did {P} move?"};
inline constexpr std::array<std::string_view, 2> demo_q_moved_when{"When did {P} move to {T}?", "In what year did {P} move to {T}?"};
inline constexpr std::array<std::string_view, 2> demo_q_employees{"How many people did {C} employ?", "How many workers did {C} have?"};
inline constexpr std::array<std::string_view, 2> demo_q_river_length{"How many kilometres does the river {W} flow through {T}?", "How long is the river {W}?"};
inline constexpr std::array<std::string_view, 2> demo_q_river_town{"Through which town does the river {W} flow?", "Where does the river {W} flow?"};
inline constexpr std::array<std::string_view, 2> demo_q_river_which{"Which river flows through {T}?", "What river runs through {T}?"};
inline constexpr std::array<std::string_view, 2> demo_q_population{"How many inhabitants did {T} have?", "What was the population of {T}?"};

inline constexpr demo_question_set demo_born_when{"when", demo_q_born_when};
inline constexpr demo_question_set demo_born_where{"where", demo_q_born_where};
inline constexpr demo_question_set demo_died_when{"when", demo_q_died_when};
inline constexpr demo_question_set demo_died_where{"where", demo_q_died_where};
inline constexpr demo_question_set demo_sibling_who{"who", demo_q_sibling_who};
inline constexpr demo_question_set demo_founder_who{"who", demo_q_founder_who};
inline constexpr demo_question_set demo_company_which{"which company", demo_q_company_which};
inline constexpr demo_question_set demo_founded_when{"when", demo_q_founded_when};
inline constexpr demo_question_set demo_made_what{"what", demo_q_made_what};
inline constexpr demo_question_set demo_moved_where{"where", demo_q_moved_where};
inline constexpr demo_question_set demo_moved_when{"when", demo_q_moved_when};
inline constexpr demo_question_set demo_employees{"how many", demo_q_employees};
inline constexpr demo_question_set demo_river_length{"how many", demo_q_river_length};
inline constexpr demo_question_set demo_river_town{"where", demo_q_river_town};
inline constexpr demo_question_set demo_river_which{"which river", demo_q_river_which};
inline constexpr demo_question_set demo_population{"how many", demo_q_population};

/// Values of the placeholders, by letter.
class demo_values {
 public:
  demo_values& set(char key, std::string value) {
    for (auto& [k, v] : entries_) {
      if (k == key) {
        v = std::move(value);
        return *this;
      }
    }
    entries_.emplace_back(key, std::move(value));
    return *this;
  }
  [[nodiscard]] const std::string& get(char key) const {
    for (const auto& [k, v] : entries_) {
      if (k == key) return v;
    }
    throw usage_error(std::string("make_demo_squad: no value for placeholder {") + key + "}");
  }

 private:
  std::vector<std::pair<char, std::string>> entries_;
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

inline bool demo_in_eval(std::size_t i, std::size_t j) { return (i + j) % 4 == 0; }

inline std::string demo_capitalized(std::string_view s) {
  std::string out(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

/// A start piece and an ending, capitalized.
template <std::size_t S, std::size_t E>
std::string demo_join(const std::array<std::string_view, S>& starts, const std::array<std::string_view, E>& ends,
                      std::size_t i, std::size_t j) {
  std::string name = demo_capitalized(starts[i]);
  name += ends[j];
  return name;
}

/// Draws the names of one paragraph, never the same one twice, from `split`'s part of each name space.
class demo_names {
 public:
  demo_names(demo_rng& rng, demo_split split) : rng_(rng), eval_(split == demo_split::eval) {}

  /// A person; with `last_index`, one of that family (a sibling).
  std::string person(std::size_t last_index = npos) {
    for (;;) {
      const std::size_t first = rng_.below(first_count), last = last_index == npos ? rng_.below(last_count) : last_index;
      if (demo_in_eval(first, last) != eval_) continue;
      // No two people of a paragraph share a first name, nor (outside a family) a last name.
      if (first_used_.count(first) != 0 || (last_index == npos && last_used_.count(last) != 0)) continue;
      first_used_.insert(first);
      last_used_.insert(last);
      last_ = last;
      return first_name(first) + " " + last_name(last);
    }
  }
  /// The last-name index of the person drawn last.
  [[nodiscard]] std::size_t last_family() const noexcept { return last_; }

  std::string town() { return piece_name(demo_town_starts, demo_town_ends, towns_); }
  std::string river() { return piece_name(demo_river_starts, demo_river_ends, others_); }
  std::string company() {
    std::string name = piece_name(demo_company_starts, demo_company_ends, others_);
    name += ' ';
    name += rng_.pick(std::span<const std::string_view>(demo_company_kinds));
    return name;
  }

  static constexpr std::size_t first_count = demo_first_starts.size() * demo_first_ends.size();
  static constexpr std::size_t last_count = demo_last_starts.size() * demo_last_ends.size();
  static std::string first_name(std::size_t k) {
    return demo_join(demo_first_starts, demo_first_ends, k / demo_first_ends.size(), k % demo_first_ends.size());
  }
  static std::string last_name(std::size_t k) {
    return demo_join(demo_last_starts, demo_last_ends, k / demo_last_ends.size(), k % demo_last_ends.size());
  }

 private:
  static constexpr std::size_t npos = ~std::size_t{0};

  template <std::size_t S, std::size_t E>
  std::string piece_name(const std::array<std::string_view, S>& starts, const std::array<std::string_view, E>& ends,
                         std::set<std::string>& used) {
    for (;;) {
      const std::size_t i = rng_.below(S), j = rng_.below(E);
      if (demo_in_eval(i, j) != eval_) continue;
      std::string name = demo_join(starts, ends, i, j);
      if (used.insert(name).second) return name;
    }
  }

  demo_rng& rng_;
  bool eval_;
  std::set<std::size_t> first_used_, last_used_;
  std::set<std::string> towns_, others_;
  std::size_t last_ = 0;
};

inline std::string demo_year(demo_rng& rng, int lo, int hi) { return std::to_string(rng.between(lo, hi)); }

/// The facts and question candidates of one paragraph; `title` gets its first person's name.
inline demo_paragraph demo_make_paragraph(demo_rng& rng, demo_split split, bool long_paragraph, std::string& title) {
  demo_paragraph p;
  demo_names names(rng, split);
  const auto pick = [&](const auto& array) { return std::string(rng.pick(std::span<const std::string_view>(array))); };
  // Long paragraphs state as many relations as short ones, among many sentences no question asks about: stating
  // every relation made them much harder to learn.
  const auto maybe = [&](double probability) { return rng.chance(probability); };

  std::vector<std::string> people;
  people.push_back(names.person());
  title = people[0];
  const std::size_t family = names.last_family();
  const bool sibling = maybe(0.5);
  if (sibling) people.push_back(names.person(family));
  if (long_paragraph) people.push_back(names.person());  // a neighbour, named in passing
  std::vector<std::string> towns;
  for (int i = 3; i > 0; --i) towns.push_back(names.town());
  const auto someone = [&] { return people[rng.below(people.size())]; };
  const auto some_town = [&] { return towns[rng.below(towns.size())]; };
  std::vector<bool> mentioned(people.size(), false);
  const auto person_index = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(people.begin(), people.end(), name) - people.begin());
  };

  // Each relation at most once (see the header comment), about the first person.
  bool has_birth = false, has_move = false, has_death = false, has_company = false, has_employees = false;
  bool has_population = false, has_river = false;
  std::string company;
  const int born = rng.between(1800, 1880);
  std::string born_in;
  if (sibling) {
    const std::string kin = pick(demo_kin);
    const std::size_t f = p.add(rng, demo_sibling_sentences,
                                demo_values().set('P', people[0]).set('Q', people[1]).set('K', kin));
    p.ask(demo_sibling_who, demo_values().set('P', people[0]).set('K', kin), f, 'Q');
    mentioned[0] = mentioned[1] = true;
  }
  std::string born_who;
  if (maybe(0.85)) {
    has_birth = true;
    born_who = people[0];
    born_in = some_town();
    mentioned[person_index(born_who)] = true;
    const std::size_t f = p.add(rng, demo_birth_sentences,
                                demo_values().set('P', born_who).set('T', born_in).set('Y', std::to_string(born)));
    p.ask(demo_born_when, demo_values().set('P', born_who), f, 'Y');
    p.ask(demo_born_where, demo_values().set('P', born_who), f, 'T');
  }
  if (maybe(0.45)) {
    has_move = true;
    const std::string who = people[0];
    std::string to = some_town();
    while (who == born_who && to == born_in) to = some_town();  // moving to one's birthplace would read oddly
    mentioned[person_index(who)] = true;
    const std::size_t f = p.add(rng, demo_move_sentences,
                                demo_values().set('P', who).set('T', to).set('Y', demo_year(rng, born + 18, born + 40)));
    p.ask(demo_moved_where, demo_values().set('P', who), f, 'T');
    p.ask(demo_moved_when, demo_values().set('P', who).set('T', to), f, 'Y');
  }
  if (maybe(0.35)) {
    has_death = true;
    const std::string who = people[0];
    mentioned[person_index(who)] = true;
    const std::size_t f = p.add(rng, demo_death_sentences,
                                demo_values().set('P', who).set('T', some_town()).set('Y', demo_year(rng, born + 45, born + 85)));
    p.ask(demo_died_when, demo_values().set('P', who), f, 'Y');
    p.ask(demo_died_where, demo_values().set('P', who), f, 'T');
  }
  if (maybe(0.6)) {
    has_company = true;
    company = names.company();
    const std::string who = people[0];
    mentioned[person_index(who)] = true;
    const int year = rng.between(born + 20, born + 45);
    const std::size_t f = p.add(
        rng, demo_founding_sentences,
        demo_values().set('P', who).set('C', company).set('Y', std::to_string(year)).set('R', pick(demo_products)));
    p.ask(demo_founder_who, demo_values().set('C', company), f, 'P');
    p.ask(demo_company_which, demo_values().set('P', who), f, 'C');
    p.ask(demo_founded_when, demo_values().set('C', company).set('P', who), f, 'Y');
    p.ask(demo_made_what, demo_values().set('C', company), f, 'R');
    if (maybe(0.5)) {
      has_employees = true;
      const std::size_t g = p.add(rng, demo_employees_sentences,
                                  demo_values()
                                      .set('C', company)
                                      .set('N', std::to_string(rng.between(12, 4800))));
      p.ask(demo_employees, demo_values().set('C', company), g, 'N');
    }
  }
  if (maybe(0.3)) {
    has_population = true;
    const std::string t = some_town(), year = demo_year(rng, 1850, 1920);
    const std::size_t f = p.add(
        rng, demo_population_sentences,
        demo_values().set('T', t).set('N', std::to_string(rng.between(400, 9800))).set('Y', year));
    p.ask(demo_population, demo_values().set('T', t).set('Y', year), f, 'N');
  }
  if (maybe(0.4)) {
    has_river = true;
    const std::string river = names.river(), t = some_town();
    const std::size_t f = p.add(rng, demo_river_sentences,
                                demo_values().set('W', river).set('T', t).set('N', std::to_string(rng.between(20, 890))));
    p.ask(demo_river_length, demo_values().set('W', river).set('T', t), f, 'N');
    p.ask(demo_river_town, demo_values().set('W', river), f, 'T');
    p.ask(demo_river_which, demo_values().set('T', t), f, 'W');
  }
  if (p.answerable.empty()) {  // every paragraph states something
    has_birth = true;
    born_who = people[0];
    born_in = some_town();
    mentioned[0] = true;
    const std::size_t f = p.add(rng, demo_birth_sentences,
                                demo_values().set('P', born_who).set('T', born_in).set('Y', std::to_string(born)));
    p.ask(demo_born_when, demo_values().set('P', born_who), f, 'Y');
    p.ask(demo_born_where, demo_values().set('P', born_who), f, 'T');
  }
  // Everyone named is named for something; people without a relation get a filler sentence, and long paragraphs
  // get several more.
  // The first filler is kept for people without a relation; the others come once each, in a random order:
  // repeated sentences would read like a broken record.
  std::vector<std::size_t> filler_order(demo_filler_sentences.size() - 1);
  for (std::size_t i = 0; i < filler_order.size(); ++i) filler_order[i] = i + 1;
  rng.shuffle(filler_order);
  const std::size_t fillers = long_paragraph ? static_cast<std::size_t>(rng.between(18, 22)) : 0;
  for (std::size_t i = 0; i < people.size(); ++i) {
    if (!mentioned[i]) {
      p.add(rng, std::span<const std::string_view>(demo_filler_sentences).subspan(0, 1),
            demo_values().set('P', people[i]));
    }
  }
  for (std::size_t i = 0; i < fillers; ++i) {
    p.add(rng, std::span<const std::string_view>(demo_filler_sentences).subspan(filler_order[i], 1),
          demo_values().set('P', someone()));
  }

  // Unanswerable questions ask for a relation the paragraph does not state, about someone or something it names
  // (or, for companies, rivers and town sizes, about one it does not): the relation words tell them apart. Asking
  // about a stranger instead would need the name matched letter by letter, which a from-scratch model does not
  // learn in a demo's minutes (see the header comment).
  const std::string any_year = demo_year(rng, 1800, 1920);
  p.new_unanswerable_family();
  for (const std::string& who : people) {
    const demo_values v = demo_values().set('P', who).set('Q', who).set('T', some_town()).set('K', pick(demo_kin));
    if (!has_birth) {
      p.ask_unanswerable(demo_born_when, v);
      p.ask_unanswerable(demo_born_where, v);
    }
    if (!has_move) {
      p.ask_unanswerable(demo_moved_where, v);
      p.ask_unanswerable(demo_moved_when, v);
    }
    if (!has_death) {
      p.ask_unanswerable(demo_died_when, v);
      p.ask_unanswerable(demo_died_where, v);
    }
    if (!has_company) p.ask_unanswerable(demo_company_which, v);
    if (!sibling) {
      p.ask_unanswerable(demo_sibling_who, v);
    }
  }
  p.new_unanswerable_family();
  if (!has_company) {
    const demo_values v = demo_values().set('C', names.company()).set('P', people[0]).set('Y', any_year);
    for (const demo_question_set* set : {&demo_founder_who, &demo_made_what, &demo_founded_when, &demo_employees}) {
      p.ask_unanswerable(*set, v);
    }
  } else if (!has_employees) {
    p.ask_unanswerable(demo_employees, demo_values().set('C', company));
  }
  if (!has_river) {
    const std::string river = names.river();
    p.ask_unanswerable(demo_river_length, demo_values().set('W', river).set('T', some_town()));
    p.ask_unanswerable(demo_river_town, demo_values().set('W', river));
    for (const std::string& t : towns) p.ask_unanswerable(demo_river_which, demo_values().set('T', t));
  }
  if (!has_population) {
    for (const std::string& t : towns) p.ask_unanswerable(demo_population, demo_values().set('T', t).set('Y', any_year));
  }
  std::erase_if(p.unanswerable, [](const auto& family) { return family.empty(); });
  return p;
}

}  // namespace detail

/// A SQuAD dataset of made-up facts (see the header comment). Deterministic: the same options give the same
/// dataset, byte for byte once written, with any standard library. Ids are "demo-train-000000", "demo-eval-..."
/// in order; each paragraph is its own article, titled after its first person.
[[nodiscard]] inline squad_dataset make_demo_squad(const demo_squad_options& options) {
  if (!(options.unanswerable_fraction >= 0.0 && options.unanswerable_fraction <= 1.0)) {
    throw usage_error("make_demo_squad: unanswerable_fraction = " + std::to_string(options.unanswerable_fraction) +
                      " must lie in [0, 1]");
  }
  if (!(options.long_paragraph_fraction >= 0.0 && options.long_paragraph_fraction <= 1.0)) {
    throw usage_error("make_demo_squad: long_paragraph_fraction = " +
                      std::to_string(options.long_paragraph_fraction) + " must lie in [0, 1]");
  }
  squad_dataset out;
  out.format = squad_format::nested;
  out.version = std::string(options.unanswerable_fraction > 0.0 ? "v2.0" : "1.1");
  const std::string prefix = options.split == demo_split::train ? "demo-train-" : "demo-eval-";
  // The split is mixed into the seed so that a train and an eval set made with one seed still differ in every draw.
  detail::demo_rng rng(options.seed * 2 + (options.split == demo_split::eval ? 1 : 0));
  std::size_t next_id = 0;
  for (std::size_t n = 0; n < options.paragraphs; ++n) {
    std::string title;
    const bool long_paragraph = rng.chance(options.long_paragraph_fraction);
    detail::demo_paragraph p = detail::demo_make_paragraph(rng, options.split, long_paragraph, title);

    // Sentences in a random order; where each starts in the context.
    std::vector<std::size_t> order(p.facts.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    rng.shuffle(order);
    std::vector<std::size_t> fact_start(p.facts.size());
    std::string context;
    for (const std::size_t i : order) {
      if (!context.empty()) context += ' ';
      fact_start[i] = context.size();  // ASCII: bytes are code points
      context += p.facts[i].text;
    }
    const auto context_index = static_cast<std::uint32_t>(out.contexts.size());
    out.contexts.push_back(std::move(context));

    rng.shuffle(p.answerable);
    for (auto& family : p.unanswerable) rng.shuffle(family);
    std::size_t next_answerable = 0;
    std::vector<std::size_t> next_unanswerable(p.unanswerable.size(), 0);
    std::set<std::string> asked;
    for (std::size_t q = 0; q < options.questions_per_paragraph; ++q) {
      const detail::demo_question_candidate* c = nullptr;
      if (rng.chance(options.unanswerable_fraction)) {
        std::vector<std::size_t> open;  // families with questions left
        for (std::size_t f = 0; f < p.unanswerable.size(); ++f) {
          if (next_unanswerable[f] < p.unanswerable[f].size()) open.push_back(f);
        }
        if (!open.empty()) {
          const std::size_t f = open[rng.below(open.size())];
          c = &p.unanswerable[f][next_unanswerable[f]++];
        }
      }
      if (c == nullptr) {
        if (next_answerable >= p.answerable.size()) break;
        c = &p.answerable[next_answerable++];
      }
      const bool impossible = c->answer == 0;
      std::string question = detail::demo_render(rng.pick(c->set->wordings), c->values);
      if (!asked.insert(question).second) continue;  // the same question twice in one paragraph: asked once
      squad_example e;
      std::string id = std::to_string(next_id++);
      if (id.size() < 6) id.insert(0, 6 - id.size(), '0');
      e.id = prefix + id;
      e.title = title;
      e.question = std::move(question);
      e.context_index = context_index;
      if (!impossible) {
        const auto& fact = p.facts[c->fact];
        const std::ptrdiff_t slot = fact.slots[static_cast<std::size_t>(c->answer - 'A')];
        if (slot < 0) throw usage_error("make_demo_squad: a sentence lacks the answer its question asks for");
        e.answers.push_back(squad_answer{fact.values.get(c->answer),
                                         static_cast<std::uint32_t>(fact_start[c->fact] + static_cast<std::size_t>(slot))});
      }
      out.examples.push_back(std::move(e));
    }
    // A context no question refers to would not survive a round trip through a file.
    if (out.examples.empty() || out.examples.back().context_index != context_index) out.contexts.pop_back();
  }
  return out;
}

/// `dataset` as the official nested SQuAD JSON text: consecutive examples with the same title form an article,
/// consecutive examples with the same context a paragraph. "is_impossible" is written for SQuAD v2 datasets
/// (version not "1.1", or any unanswerable question), "plausible_answers" when an example has some. read_squad
/// gives back an equal dataset when the contexts are stored in the order the examples first use them, each used
/// (as read_squad and make_demo_squad store them).
[[nodiscard]] inline std::string squad_json_text(const squad_dataset& dataset) {
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

/// Writes squad_json_text(dataset) to `file` atomically (io::write_file_atomically). Throws io_error.
inline void write_squad_json(const squad_dataset& dataset, const std::filesystem::path& file) {
  io::write_file_atomically(file, squad_json_text(dataset));
}

/// The demo's vocab.txt, line by line: [PAD] [UNK] [CLS] [SEP] [MASK] at ids 0-4, then punctuation, digits and
/// letters (each also as a "##" continuation, so that any ASCII text tokenizes without [UNK]), every word of the
/// wordings, every first and last name whole, the pieces of town, company and river names, the years 1800-1999
/// whole, and pairs of digits ("48", "##00"), which halve the length of other numbers while each token stays common.
[[nodiscard]] inline std::vector<std::string> demo_vocabulary() {
  std::vector<std::string> tokens{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  std::set<std::string> seen(tokens.begin(), tokens.end());
  const auto add = [&](std::string token) {
    if (seen.insert(token).second) tokens.push_back(std::move(token));
  };
  for (const char c : std::string_view(".,'?-&();:!\"/")) add(std::string(1, c));
  for (char c = '0'; c <= '9'; ++c) add(std::string(1, c));
  for (char c = 'a'; c <= 'z'; ++c) add(std::string(1, c));
  // Words of the wordings, lower-cased, placeholders left out.
  const auto add_words = [&](std::string_view text) {
    std::string word;
    for (std::size_t i = 0; i <= text.size(); ++i) {
      const char c = i < text.size() ? text[i] : ' ';
      if (c == '{' && i + 2 < text.size() && text[i + 2] == '}') {
        i += 2;
        continue;
      }
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        word += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      } else if (!word.empty()) {
        add(std::move(word));
        word.clear();
      }
    }
  };
  namespace d = detail;
  const std::span<const std::string_view> wordings[] = {
      d::demo_birth_sentences,     d::demo_death_sentences,     d::demo_sibling_sentences,
      d::demo_founding_sentences,  d::demo_move_sentences,      d::demo_employees_sentences,
      d::demo_river_sentences,     d::demo_population_sentences, d::demo_filler_sentences,
      d::demo_products,            d::demo_kin,                 d::demo_company_kinds,
      d::demo_q_born_when,         d::demo_q_born_where,        d::demo_q_died_when,
      d::demo_q_died_where,        d::demo_q_sibling_who,       
      d::demo_q_founder_who,       d::demo_q_company_which,     d::demo_q_founded_when,
      d::demo_q_made_what,         d::demo_q_moved_where,       d::demo_q_moved_when,
      d::demo_q_employees,         d::demo_q_river_length,      d::demo_q_river_town,
      d::demo_q_river_which,       d::demo_q_population};
  for (const auto list : wordings) {
    for (const std::string_view text : list) add_words(text);
  }
  const auto lower = [](std::string s) {
    s[0] = static_cast<char>(s[0] - 'A' + 'a');
    return s;
  };
  for (std::size_t k = 0; k < d::demo_names::first_count; ++k) add(lower(d::demo_names::first_name(k)));
  for (std::size_t k = 0; k < d::demo_names::last_count; ++k) add(lower(d::demo_names::last_name(k)));
  const std::span<const std::string_view> starts[] = {d::demo_town_starts, d::demo_company_starts,
                                                      d::demo_river_starts};
  for (const auto list : starts) {
    for (const std::string_view piece : list) add(std::string(piece));
  }
  const std::span<const std::string_view> ends[] = {d::demo_town_ends, d::demo_company_ends, d::demo_river_ends};
  for (const auto list : ends) {
    for (const std::string_view piece : list) add("##" + std::string(piece));
  }
  for (int year = d::demo_first_year; year <= d::demo_last_year; ++year) add(std::to_string(year));
  for (int n = 10; n <= 99; ++n) add(std::to_string(n));
  for (char c = '0'; c <= '9'; ++c) add("##" + std::string(1, c));
  for (int n = 0; n <= 99; ++n) {
    std::string pair = "##";
    pair += static_cast<char>('0' + n / 10);
    pair += static_cast<char>('0' + n % 10);
    add(std::move(pair));
  }
  for (char c = 'a'; c <= 'z'; ++c) add("##" + std::string(1, c));
  return tokens;
}

/// The demo model: a small BERT sized for demo_vocabulary(). Two choices differ from BERT's defaults, both
/// measured on the demo data: no dropout (the data is endless and noise-free, and dropout only slows the few
/// thousand steps there are), and initializer_range 0.05 instead of 0.02 — attention that must match a question's
/// word to the context starts learning after ~150 steps instead of ~800, because query and key weights that start
/// tiny sit near a saddle point whose escape time grows as they shrink.
[[nodiscard]] inline nn::bert_config demo_bert_config() {
  nn::bert_config config;
  config.vocab_size = static_cast<int>(demo_vocabulary().size());
  config.hidden_size = 128;
  config.num_hidden_layers = 2;
  config.num_attention_heads = 2;
  config.intermediate_size = 512;
  config.max_position_embeddings = 256;
  config.type_vocab_size = 2;
  config.hidden_dropout_prob = 0.0f;
  config.attention_probs_dropout_prob = 0.0f;
  config.initializer_range = 0.05f;
  return config;
}

/// Writes a model directory without weights — config.json (`config`), vocab.txt (demo_vocabulary()) and
/// tokenizer_config.json (lower case, model_max_length = max_position_embeddings) — for training from scratch.
/// Creates `dir` as needed; each file is written atomically. usage_error if `config` does not validate or its
/// vocab_size is smaller than the vocabulary; io_error on failure to write.
inline void write_demo_model_dir(const std::filesystem::path& dir, const nn::bert_config& config = demo_bert_config()) {
  const std::vector<std::string> vocab = demo_vocabulary();
  config.validate();
  if (static_cast<std::size_t>(config.vocab_size) < vocab.size()) {
    throw usage_error("write_demo_model_dir: vocab_size = " + std::to_string(config.vocab_size) +
                      " is smaller than the demo vocabulary (" + std::to_string(vocab.size()) + " tokens)");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw io::io_error(dir.string() + ": cannot create the model directory: " + ec.message());
  io::write_bert_config(config, dir / "config.json");
  std::string lines;
  for (const std::string& token : vocab) {
    lines += token;
    lines += '\n';
  }
  io::write_file_atomically(dir / "vocab.txt", lines);
  const nlohmann::ordered_json tokenizer{{"do_lower_case", true},
                                         {"model_max_length", config.max_position_embeddings},
                                         {"tokenizer_class", "BertTokenizer"}};
  io::write_file_atomically(dir / "tokenizer_config.json", tokenizer.dump(2) + "\n");
}

}  // namespace cputrain::data
