// The demo's words: the pieces names are built from, the sentences that state each relation, the filler
// sentences no question asks about, and the questions' wordings. Every word here is in demo_vocabulary().
#pragma once

#include <array>
#include <span>
#include <string_view>

namespace cputrain::demo::detail {

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

}  // namespace cputrain::demo::detail
