// The wordings the GLUE and NER generators use besides demo_words.hpp's: more ways to state each relation
// (paraphrases, some with a clause moved to the front) and sentences that name towns, rivers, companies and fairs
// in passing. Every word here is already one of demo_words.hpp's, so adding them to demo_vocabulary() leaves
// vocab.txt as it was; demo_model.hpp adds them all the same, so that a new word could not turn into [UNK].
#pragma once

#include <array>
#include <string_view>

namespace cputrain::demo::detail {

// Paraphrases, one array per relation, placeholders as in demo_words.hpp. The born, died and moved arrays state
// the same values in the same order of wordings: a near miss that swaps the relation keeps the wording's shape.
inline constexpr std::array<std::string_view, 4> demo_glue_birth{
    "{P} was born in {T} in {Y}.", "{P} was born in the town of {T} in {Y}.", "In {Y}, {P} was born in {T}.",
    "In {Y}, {P} was born in the town of {T}."};
inline constexpr std::array<std::string_view, 4> demo_glue_death{
    "{P} died in {T} in {Y}.", "{P} died in the town of {T} in {Y}.", "In {Y}, {P} died in {T}.",
    "In {Y}, {P} died in the town of {T}."};
inline constexpr std::array<std::string_view, 4> demo_glue_move{"{P} moved to {T} in {Y}.", "{P} settled in {T} in {Y}.",
                                                                "In {Y}, {P} moved to {T}.", "In {Y}, {P} settled in {T}."};
inline constexpr std::array<std::string_view, 3> demo_glue_sibling{"{P} had a {K} named {Q}.", "{P}'s {K} was {Q}.",
                                                                   "The {K} of {P} was {Q}."};
inline constexpr std::array<std::string_view, 4> demo_glue_founding{
    "In {Y}, {P} founded {C}, a company that made {R}.", "In {Y}, {P} started {C}, a company that made {R}.",
    "{C}, a company that made {R}, was founded by {P} in {Y}.", "{P} founded {C}, a company that made {R}, in {Y}."};
inline constexpr std::array<std::string_view, 3> demo_glue_employees{"{C} employed {N} people.", "{C} had {N} workers.",
                                                                     "{C} employed {N} workers."};
inline constexpr std::array<std::string_view, 4> demo_glue_river{
    "The river {W} flows through {T} for {N} kilometres.", "The {W} river runs through {T} for {N} kilometres.",
    "For {N} kilometres, the river {W} flows through {T}.", "The river {W} runs through {T} for {N} kilometres."};
inline constexpr std::array<std::string_view, 4> demo_glue_population{
    "In {Y}, {T} had {N} inhabitants.", "{T} had {N} inhabitants in {Y}.",
    "In {Y}, the town of {T} had {N} inhabitants.", "The town of {T} had {N} inhabitants in {Y}."};

// NER sentences that name things in passing, beside demo_words.hpp's relations and fillers. {E} is a fair named
// after a town ("the Kelbury Fair", MISC): the town's name is then not a location, and "Many visitors came to
// {T}" against "Many visitors came to the {E}" makes the model read the word after it.
inline constexpr std::array<std::string_view, 22> demo_ner_sentences{
    "The {E} was held every autumn.",
    "Many visitors came to the {E}.",
    "Many visitors came to {T} in the summer.",
    "{P} often walked to the {E}.",
    "{P} and {Q} came to the {E} every autumn.",
    "The {E} was known far and wide.",
    "{P} was fond of the {E}.",
    "{C} was known far and wide.",
    "{P} was known far and wide.",
    "{C} made {R}.",
    "{P} owned {C}.",
    "{C} employed {P}.",
    "{T} was known for {R}.",
    "The market in {T} was busy on Saturdays.",
    "The old stone bridge in {T} was known far and wide.",
    "The main road ran along the river {W}.",
    "{P} often walked in the hills around {T}.",
    "{P} enjoyed long walks by the river {W}.",
    "{P} wrote many letters to {Q}.",
    "Few people in {T} owned a horse.",
    "{P} kept a small garden behind the house in {T}.",
    "The {W} river ran along the valley."};

}  // namespace cputrain::demo::detail
