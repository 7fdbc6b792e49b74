// Tests for include/cputrain/data/squad_metrics.hpp: normalize_answer against values printed by the official
// scripts' normalize_answer under CPython (Unicode lowercase, final sigma, ASCII-only punctuation, articles only
// as whole Unicode words, Python's whitespace); the v1.1 and v2.0 per-answer scores and where they differ;
// whole evaluations worked out by hand — missing predictions in v1.1, the HasAns/NoAns split, the no-answer
// threshold and find_best_thresh with its stable tie order in v2.0 — the to_json key order Hugging Face
// returns; the calling mistakes the scripts would crash on; and, with the conformance data, gold answers
// scoring 100.
#include <catch2/catch.hpp>

#include "support/conformance_data.hpp"

#include "support/checks.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cputrain/data/squad_metrics.hpp"
#include "cputrain/data/squad_reader.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace squad_metrics_test {

namespace fs = std::filesystem;
using cputrain::test::conformance_files;
using cputrain::test::says;
using cputrain::usage_error;
using cputrain::data::compute_exact;
using cputrain::data::compute_f1;
using cputrain::data::evaluate_squad_v1;
using cputrain::data::evaluate_squad_v2;
using cputrain::data::exact_match_score;
using cputrain::data::f1_score;
using cputrain::data::normalize_answer;
using cputrain::data::qa_predictions;
using cputrain::data::squad_dataset;
using cputrain::data::squad_example;

namespace {

/// A dataset of (id, answer texts) questions; the metrics never look at contexts or answer_start.
squad_dataset questions(const std::vector<std::pair<std::string, std::vector<std::string>>>& qs) {
  squad_dataset d;
  d.contexts.push_back("unused");
  for (const auto& [id, texts] : qs) {
    squad_example e{id, {}, "?", 0, {}, {}};
    for (const auto& t : texts) e.answers.push_back({t, 0});
    d.examples.push_back(std::move(e));
  }
  return d;
}

/// Each question's first answer as its prediction, "" for the unanswerable ones.
qa_predictions gold_predictions(const squad_dataset& d) {
  qa_predictions p;
  for (const auto& e : d.examples) p[e.id] = e.answers.empty() ? "" : e.answers.front().text;
  return p;
}

}  // namespace

TEST_CASE("normalize_answer is the official normalize_answer, with Python's Unicode rules") {
  // Each expected value was printed by the official scripts' normalize_answer under CPython.
  CHECK(normalize_answer("The Eiffel Tower!") == "eiffel tower");
  CHECK(normalize_answer("  An  apple,\ta pear\n") == "apple pear");
  // Articles only as whole words: inside words and next to digits or '_' (before it is removed) they stay.
  CHECK(normalize_answer("another theatre") == "another theatre");
  CHECK(normalize_answer("a1 the2 an") == "a1 the2");
  CHECK(normalize_answer("A_an") == "aan");   // remove_punc runs first: '_' goes, "aan" is one word
  CHECK(normalize_answer("the_") == "");      // ... and "the_" becomes the article "the"
  // Punctuation is string.punctuation: ASCII only, removed inside words too.
  CHECK(normalize_answer("don't") == "dont");
  CHECK(normalize_answer("U.S. (1776)") == "us 1776");
  CHECK(normalize_answer("a—b") == "—b");  // the em dash stays, and is no word character: "a" is an article
  CHECK(normalize_answer("«Paris»") == "«paris»");
  // Python's \w: letters and numbers of any script, but not combining marks.
  CHECK(normalize_answer("the東京") == "the東京");
  CHECK(normalize_answer("the½") == "the½");
  CHECK(normalize_answer("the\u0301x") == "\u0301x");
  CHECK(normalize_answer("a\u200bb") == "\u200bb");  // a zero-width space separates words but is no whitespace
  // str.lower(): Unicode, with the full mapping of İ and the final-sigma rule.
  CHECK(normalize_answer("ÉCOLE") == "école");
  CHECK(normalize_answer("ÉCOLE") == normalize_answer("école"));
  CHECK(normalize_answer("İstanbul") == "i\u0307stanbul");
  CHECK(normalize_answer("ǅ") == "ǆ");
  CHECK(normalize_answer("ẞ") == "ß");
  CHECK(normalize_answer("ΟΔΟΣ") == "οδος");           // final: ς
  CHECK(normalize_answer("ΟΔΟΣ.") == "οδος");          // '.' is case-ignorable: still final
  CHECK(normalize_answer("ΑΣ'Β") == "ασβ");            // a cased letter follows through the apostrophe: σ
  CHECK(normalize_answer("Σ") == "σ");                 // no cased letter before it: σ
  CHECK(normalize_answer("ΣΑ") == "σα");
  CHECK(normalize_answer("ªΣ") == "ªς");               // ª is cased without a case mapping
  CHECK(normalize_answer("ΑΣ\u00ad") == "ας\u00ad");   // a soft hyphen is ignorable
  CHECK(normalize_answer("ΑΣ\u00adΒ") == "ασ\u00adβ");
  // str.split(): Python's whitespace, Unicode included.
  CHECK(normalize_answer("x\u00a0the\u3000y") == "x y");
  CHECK(normalize_answer("the\x1c" "end") == "end");
  CHECK(normalize_answer("an\u0085a") == "");
  CHECK(normalize_answer("") == "");
  // Not UTF-8: each bad byte is read as U+FFFD rather than failing.
  CHECK(normalize_answer("ab\xff") == "ab\xef\xbf\xbd");
}

TEST_CASE("the v1.1 scores: exact match and token F1 of normalized answers") {
  CHECK(exact_match_score("Eiffel tower!", "the Eiffel Tower"));
  CHECK_FALSE(exact_match_score("Eiffel", "the Eiffel Tower"));
  // pred {denver, broncos, team} vs gold {denver, broncos}: precision 2/3, recall 1, F1 = 2(2/3)/(5/3) = 0.8.
  CHECK(f1_score("the Denver Broncos team", "Denver Broncos") == Approx(0.8).epsilon(1e-15));
  // Tokens are a multiset: "the the cat" has one token, "cat", after the articles go; "cat cat dog" vs "cat
  // dog dog": common {cat, dog} = 2, precision = recall = 2/3.
  CHECK(f1_score("cat cat dog", "cat dog dog") == Approx(2.0 / 3.0).epsilon(1e-15));
  CHECK(f1_score("the the cat", "cat") == 1.0);
  CHECK(f1_score("Broncos", "Denver") == 0.0);
}

TEST_CASE("v1.1 and v2.0 differ on empty answers") {
  // Both empty after normalization: equal texts, but v1.1's F1 is 0 (no common token) and v2.0's is 1.
  CHECK(exact_match_score("", ""));
  CHECK(f1_score("", "") == 0.0);
  CHECK(compute_exact("", "") == 1);
  CHECK(compute_f1("", "") == 1.0);
  CHECK(compute_f1("the", "") == 1.0);  // "the" normalizes to nothing
  CHECK(f1_score("a", "the") == 0.0);
  CHECK(compute_f1("", "Broncos") == 0.0);
  CHECK(compute_f1("Broncos", "") == 0.0);
  CHECK(compute_f1("Denver Broncos", "the Denver Broncos team") == Approx(0.8).epsilon(1e-15));
  CHECK(compute_exact("The Broncos.", "broncos") == 1);
  CHECK(compute_exact("Broncos", "Bronco") == 0);
}

TEST_CASE("evaluate_squad_v1 takes the best answer per question and scores a missing prediction 0") {
  const squad_dataset d = questions({{"q1", {"Denver Broncos"}},
                                     {"q2", {"Denver Broncos", "the Broncos"}},
                                     {"q3", {"Santa Clara"}}});
  const qa_predictions p = {{"q1", "denver broncos!"}, {"q2", "the Denver Broncos team"}, {"other", "ignored"}};
  // q1: EM 1, F1 1. q2: EM 0; F1 max(0.8 vs "denver broncos", 0.5 vs "broncos") = 0.8. q3: missing, 0.
  // exact_match = 100 * 1 / 3; f1 = 100 * (1 + 0.8) / 3 = 60.
  const auto s = evaluate_squad_v1(d, p);
  CHECK(s.total == 3);
  CHECK(s.missing == 1);
  CHECK(s.exact_match == 100.0 / 3.0);
  CHECK(s.f1 == Approx(60.0).epsilon(1e-15));
  CHECK(to_json(s).dump() == nlohmann::ordered_json({{"exact_match", s.exact_match}, {"f1", s.f1}}).dump());
  CHECK(to_json(s).begin().key() == "exact_match");

  // The order of the gold answers does not matter; the best one counts.
  const auto reversed = evaluate_squad_v1(questions({{"q2", {"the Broncos", "Denver Broncos"}}}), p);
  CHECK(reversed.f1 == Approx(80.0).epsilon(1e-15));
  CHECK(reversed.missing == 0);

  CHECK_THROWS_MATCHES(evaluate_squad_v1(questions({{"q1", {"x"}}, {"q9", {}}}), p), usage_error,
                       says("question \"q9\" has no answers"));
  CHECK_THROWS_MATCHES(evaluate_squad_v1(squad_dataset{}, p), usage_error, says("no questions"));
}

TEST_CASE("evaluate_squad_v2 on two answerable and two unanswerable questions, worked by hand") {
  const squad_dataset d = questions({{"q1", {"Denver Broncos"}},
                                     {"q2", {"Denver Broncos", "the Broncos"}},
                                     {"q3", {}},
                                     {"q4", {}}});
  const qa_predictions p = {{"q1", "Denver Broncos"}, {"q2", "the Denver Broncos team"}, {"q3", ""},
                            {"q4", "Santa Clara"}};
  const std::unordered_map<std::string, double> na = {{"q1", 0.1}, {"q2", 0.3}, {"q3", 0.9}, {"q4", 0.4}};
  // Raw scores (exact, f1): q1 (1, 1.0); q2 (0, 0.8); q3 gold [""], pred "" -> (1, 1); q4 pred "santa clara"
  // against "" -> (0, 0). No probability exceeds the default threshold 1.0, so these are the scores:
  //   exact = 100 * 2/4 = 50,  f1 = 100 * 2.8/4 = 70
  //   HasAns: exact 100 * 1/2 = 50, f1 100 * 1.8/2 = 90;  NoAns: exact 50, f1 50.
  // find_best_thresh starts at num_no_ans = 2 (all "no answer": q3 and q4 right) and takes the questions by
  // increasing probability, q1 (0.1), q2 (0.3), q4 (0.4), q3 (0.9):
  //   exact: q1 +1 -> 3 (best, thresh 0.1); q2 +0 -> 3; q4 predicted text where none is, -1 -> 2; q3 +0 -> 2.
  //          best_exact = 100 * 3/4 = 75 at 0.1.
  //   f1:    q1 +1 -> 3 (0.1); q2 +0.8 -> 3.8 (best, thresh 0.3); q4 -1 -> 2.8; q3 +0 -> 2.8.
  //          best_f1 = 100 * 3.8/4 = 95 at 0.3.
  const auto s = evaluate_squad_v2(d, p, &na);
  CHECK(s.exact == 50.0);
  CHECK(s.f1 == Approx(70.0).epsilon(1e-15));
  CHECK(s.total == 4);
  REQUIRE(s.has_ans);
  CHECK(s.has_ans->exact == 50.0);
  CHECK(s.has_ans->f1 == Approx(90.0).epsilon(1e-15));
  CHECK(s.has_ans->total == 2);
  REQUIRE(s.no_ans);
  CHECK(s.no_ans->exact == 50.0);
  CHECK(s.no_ans->f1 == 50.0);
  CHECK(s.no_ans->total == 2);
  CHECK(s.best_exact == 75.0);
  CHECK(s.best_exact_thresh == 0.1);
  CHECK(s.best_f1 == Approx(95.0).epsilon(1e-15));
  CHECK(s.best_f1_thresh == 0.3);

  // Threshold 0.35: q4 (0.4) and q3 (0.9) are taken as "no answer" — right for both, float 1.0 each — while
  // q1 and q2 keep their scores: exact 100 * 3/4 = 75, f1 100 * 3.8/4 = 95, NoAns 100/100, HasAns unchanged.
  // best_* sweep the raw scores and do not move.
  const auto t = evaluate_squad_v2(d, p, &na, 0.35);
  CHECK(t.exact == 75.0);
  CHECK(t.f1 == Approx(95.0).epsilon(1e-15));
  CHECK(t.has_ans->exact == 50.0);
  CHECK(t.has_ans->f1 == Approx(90.0).epsilon(1e-15));
  CHECK(t.no_ans->exact == 100.0);
  CHECK(t.no_ans->f1 == 100.0);
  CHECK(t.best_exact == s.best_exact);
  CHECK(t.best_f1_thresh == 0.3);

  // Threshold 0.2: q2 (0.3) is now "no answer" too, which is wrong for it: HasAns f1 = 100 * 1/2 = 50.
  const auto u = evaluate_squad_v2(d, p, &na, 0.2);
  CHECK(u.has_ans->exact == 50.0);
  CHECK(u.has_ans->f1 == 50.0);
  CHECK(u.f1 == 75.0);

  // Without probabilities (run_qa passes 0.0 for every question) the sweep sees one tie, in dataset order:
  // q1 +1 -> 3 is the best for both, at threshold 0.0.
  const auto z = evaluate_squad_v2(d, p);
  CHECK(z.exact == 50.0);
  CHECK(z.best_exact == 75.0);
  CHECK(z.best_exact_thresh == 0.0);
  CHECK(z.best_f1 == Approx(95.0).epsilon(1e-15));
  CHECK(z.best_f1_thresh == 0.0);

  const auto j = to_json(s);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total",
                                         "NoAns_exact", "NoAns_f1", "NoAns_total", "best_exact",
                                         "best_exact_thresh", "best_f1", "best_f1_thresh"});
  CHECK(j["total"].is_number_unsigned());
  CHECK(j["HasAns_total"] == 2);
  CHECK(j["best_f1_thresh"] == 0.3);
  CHECK(j["NoAns_f1"] == 50.0);
}

TEST_CASE("evaluate_squad_v2 breaks probability ties in dataset order, as Python's stable sort does") {
  // One right answer ("h") and one wrong text where there is no answer ("n"), both at probability 0. Taking h
  // first reaches 1 + 1 = 2 of 2 before n's -1; taking n first never beats the starting 1.
  const qa_predictions p = {{"h", "yes"}, {"n", "maybe"}};
  const auto h_first = evaluate_squad_v2(questions({{"h", {"yes"}}, {"n", {}}}), p);
  const auto n_first = evaluate_squad_v2(questions({{"n", {}}, {"h", {"yes"}}}), p);
  CHECK(h_first.best_exact == 100.0);
  CHECK(n_first.best_exact == 50.0);
  CHECK(h_first.best_f1 == 100.0);
  CHECK(n_first.best_f1 == 50.0);
  CHECK(h_first.exact == n_first.exact);
  CHECK(h_first.exact == 50.0);
  CHECK(h_first.has_ans->exact == 100.0);
  CHECK(h_first.no_ans->exact == 0.0);
}

TEST_CASE("evaluate_squad_v2 without unanswerable questions has no NoAns keys, and the other way round") {
  const auto only_answers = evaluate_squad_v2(questions({{"a", {"x"}}, {"b", {"y z"}}}), {{"a", "x"}, {"b", "z"}});
  CHECK(only_answers.exact == 50.0);
  CHECK(only_answers.f1 == Approx(100.0 * (1.0 + 2.0 / 3.0) / 2.0).epsilon(1e-15));  // "z" vs "y z": 2(1)(1/2)/(3/2)
  CHECK(only_answers.has_ans);
  CHECK_FALSE(only_answers.no_ans);
  CHECK_FALSE(to_json(only_answers).contains("NoAns_exact"));
  CHECK(to_json(only_answers).contains("HasAns_total"));
  // best_*: num_no_ans = 0, a +1 -> 1, b +0 (exact) -> 1: 50; f1: 1 + 2/3.
  CHECK(only_answers.best_exact == 50.0);

  const auto only_none = evaluate_squad_v2(questions({{"a", {}}, {"b", {}}}), {{"a", ""}, {"b", "the."}});
  // "the." normalizes to "" and so scores 1, but find_best_thresh looks at the raw text: non-empty, -1.
  CHECK(only_none.exact == 100.0);
  CHECK(only_none.no_ans->total == 2);
  CHECK_FALSE(only_none.has_ans);
  CHECK(only_none.best_exact == 100.0);  // the starting 2 of 2 stays the best
  CHECK_FALSE(to_json(only_none).contains("HasAns_exact"));

  // A gold answer that normalizes to nothing does not count as gold: the question is scored against "".
  const auto punct_gold = evaluate_squad_v2(questions({{"a", {"The."}}}), {{"a", ""}});
  CHECK(punct_gold.exact == 100.0);
  CHECK(punct_gold.has_ans->total == 1);  // it still has an answer, so it counts as HasAns
}

TEST_CASE("evaluate_squad_v2 refuses what the official script would crash on") {
  const squad_dataset d = questions({{"q1", {"x"}}, {"q2", {}}});
  CHECK_THROWS_MATCHES(evaluate_squad_v2(d, {{"q1", "x"}}), usage_error, says("no prediction for question \"q2\""));
  const std::unordered_map<std::string, double> partial = {{"q1", 0.5}};
  CHECK_THROWS_MATCHES(evaluate_squad_v2(d, {{"q1", "x"}, {"q2", ""}}, &partial), usage_error,
                       says("no no-answer probability for question \"q2\""));
  const std::unordered_map<std::string, double> nan = {{"q1", 0.5}, {"q2", std::nan("")}};
  CHECK_THROWS_MATCHES(evaluate_squad_v2(d, {{"q1", "x"}, {"q2", ""}}, &nan), usage_error, says("is NaN"));
  CHECK_THROWS_MATCHES(evaluate_squad_v2(squad_dataset{}, {}), usage_error, says("no questions"));
}

TEST_CASE("conformance: gold answers score 100 on sample.json and dev-v2.0.json") {
  const auto files = conformance_files({"squad/sample.json", "squad/dev-v2.0.json"});
  if (!files) return;  // reported skipped, naming what is missing
  for (const auto& path : *files) {
    INFO(path.string());
    const squad_dataset d = cputrain::data::read_squad(path);
    const qa_predictions gold = gold_predictions(d);

    const auto v2 = evaluate_squad_v2(d, gold);
    CHECK(v2.exact == 100.0);
    CHECK(v2.f1 == 100.0);
    CHECK(v2.total == 14);
    CHECK(v2.has_ans->total == 8);
    CHECK(v2.has_ans->f1 == 100.0);
    CHECK(v2.no_ans->total == 6);
    CHECK(v2.no_ans->exact == 100.0);
    CHECK(v2.best_exact == 100.0);
    CHECK(v2.best_exact_thresh == 0.0);

    // v1.1 scores the answerable questions only.
    squad_dataset answerable = d;
    std::erase_if(answerable.examples, [](const squad_example& e) { return e.is_impossible(); });
    const auto v1 = evaluate_squad_v1(answerable, gold);
    CHECK(v1.exact_match == 100.0);
    CHECK(v1.f1 == 100.0);
    CHECK(v1.total == 8);
    CHECK(v1.missing == 0);

    // Predicting "no answer" everywhere is right exactly for the 6 unanswerable questions.
    qa_predictions empty;
    for (const auto& e : d.examples) empty[e.id] = "";
    const auto none = evaluate_squad_v2(d, empty);
    CHECK(none.exact == 100.0 * 6 / 14);
    CHECK(none.f1 == 100.0 * 6 / 14);
    CHECK(none.no_ans->exact == 100.0);
    CHECK(none.has_ans->exact == 0.0);
  }
}

}  // namespace squad_metrics_test
