// The official SQuAD metrics, computed as evaluate-v1.1.py and evaluate-v2.0.py (as Hugging Face's `squad_v2`
// metric runs it) compute them: normalize_answer, the per-answer scores, evaluate_squad_v1, evaluate_squad_v2 and
// to_json. Python's Unicode rules and summation order are followed, so the numbers are the scripts' numbers.
#pragma once

#include "cputrain/data/python_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "cputrain/core/error.hpp"
#include "cputrain/core/json_message.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/data/squad_example.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::data {

/// Predicted answer text by question id ("" predicts "no answer").
using qa_predictions = std::unordered_map<std::string, std::string>;

/// evaluate-v1.1.py's result, in percent. `total` counts every question of the dataset; the `missing` ones had
/// no prediction and scored 0 (the script prints "Unanswered question X will receive score 0." for each).
struct squad_v1_scores {
  double exact_match = 0;
  double f1 = 0;
  std::size_t total = 0;
  std::size_t missing = 0;
};

/// exact, f1 and total over a subset of the questions (HasAns_*, NoAns_*), in percent.
struct squad_v2_group {
  double exact = 0;
  double f1 = 0;
  std::size_t total = 0;
};

/// evaluate-v2.0.py's result as Hugging Face's squad_v2 metric returns it, in percent.
struct squad_v2_scores {
  double exact = 0;
  double f1 = 0;
  std::size_t total = 0;
  /// HasAns_*: only when some question has answers
  std::optional<squad_v2_group> has_ans;
  /// NoAns_*: only when some question has none
  std::optional<squad_v2_group> no_ans;
  /// the exact score at the best no-answer threshold, best_exact_thresh
  double best_exact = 0;
  /// the no-answer threshold that gives best_exact
  double best_exact_thresh = 0;
  double best_f1 = 0;
  double best_f1_thresh = 0;
};

namespace detail {

/// Python's str.isalnum() or '_': what \w matches in a Unicode regex, so what \b separates.
[[nodiscard]] inline bool is_python_word_char(char32_t cp) noexcept {
  if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return true;
    default: return false;
  }
}

/// One of the 32 characters of Python's string.punctuation.
[[nodiscard]] constexpr bool is_ascii_punctuation(char32_t cp) noexcept {
  return (cp >= 0x21 && cp <= 0x2f) || (cp >= 0x3a && cp <= 0x40) || (cp >= 0x5b && cp <= 0x60) ||
         (cp >= 0x7b && cp <= 0x7e);
}

/// Unicode's Case_Ignorable (Mn, Me, Cf, Lm, Sk, and the Word_Break MidLetter, MidNumLet and Single_Quote
/// characters), which Python's final-sigma rule looks through.
[[nodiscard]] inline bool is_case_ignorable(char32_t cp) noexcept {
  switch (cp) {
    case 0x27: case 0x2e: case 0x3a: case 0xb7: case 0x387: case 0x55f: case 0x5f4: case 0x2018: case 0x2019:
    case 0x2024: case 0x2027: case 0xfe13: case 0xfe52: case 0xfe55: case 0xff07: case 0xff0e: case 0xff1a:
      return true;
    default: break;
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK: return true;
    default: return false;
  }
}

/// Unicode's Cased: the letters with case, anything with a case mapping, and the few Other_Lowercase and
/// Other_Uppercase characters that have neither and are not Case_Ignorable (which the sigma rule skips first).
[[nodiscard]] inline bool is_cased(char32_t cp) noexcept {
  const auto c = static_cast<utf8proc_int32_t>(cp);
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT: return true;
    default: break;
  }
  if (utf8proc_tolower(c) != c || utf8proc_toupper(c) != c || utf8proc_totitle(c) != c) return true;
  return cp == 0xaa || cp == 0xba || (cp >= 0x1f130 && cp <= 0x1f149) || (cp >= 0x1f150 && cp <= 0x1f169) ||
         (cp >= 0x1f170 && cp <= 0x1f189);
}

/// Whether the capital sigma at text[i] ends a word, by the rule Python's str.lower() applies: a cased letter
/// before it and none after it, looking through case-ignorable characters both ways.
[[nodiscard]] inline bool is_final_sigma(const std::u32string& text, std::size_t i) noexcept {
  std::size_t j = i;
  while (j > 0 && is_case_ignorable(text[j - 1])) --j;
  if (j == 0 || !is_cased(text[j - 1])) return false;
  j = i + 1;
  while (j < text.size() && is_case_ignorable(text[j])) ++j;
  return j == text.size() || !is_cased(text[j]);
}

/// The code points of UTF-8 text; each byte of an invalid sequence becomes U+FFFD.
[[nodiscard]] inline std::u32string decode_lossy(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  std::size_t pos = 0;
  while (pos < s.size()) {
    char32_t cp = 0;
    const std::size_t n = text::decode_utf8(s, pos, cp);
    out.push_back(n == 0 ? char32_t{0xfffd} : cp);
    pos += n == 0 ? 1 : n;
  }
  return out;
}

/// normalize_answer(s).split(), sorted (only the multiset matters to the F1 scores).
[[nodiscard]] inline std::vector<std::string> sorted_tokens(std::string_view normalized) {
  std::vector<std::string> tokens;
  std::size_t start = 0;
  while (start < normalized.size()) {
    std::size_t end = normalized.find(' ', start);
    if (end == std::string_view::npos) end = normalized.size();
    tokens.emplace_back(normalized.substr(start, end - start));
    start = end + 1;
  }
  std::sort(tokens.begin(), tokens.end());
  return tokens;
}

/// sum((Counter(a) & Counter(b)).values()) for two sorted token lists.
[[nodiscard]] inline std::size_t common_token_count(const std::vector<std::string>& a,
                                                    const std::vector<std::string>& b) noexcept {
  std::size_t count = 0;
  auto i = a.begin();
  auto j = b.begin();
  while (i != a.end() && j != b.end()) {
    if (*i < *j) {
      ++i;
    } else if (*j < *i) {
      ++j;
    } else {
      ++count;
      ++i;
      ++j;
    }
  }
  return count;
}

/// An answer normalized once and its tokens, for scoring against several others.
struct normalized_answer {
  std::string text;
  std::vector<std::string> tokens;
};

/// The precision/recall harmonic mean both scripts compute, written as they write it.
[[nodiscard]] inline double token_f1(std::size_t num_same, std::size_t prediction_tokens, std::size_t gold_tokens) {
  const double precision = 1.0 * static_cast<double>(num_same) / static_cast<double>(prediction_tokens);
  const double recall = 1.0 * static_cast<double>(num_same) / static_cast<double>(gold_tokens);
  return (2 * precision * recall) / (precision + recall);
}

/// A Python number as the scripts produce it: an int (0 or 1 from comparisons) or a float. Python's sum()
/// adds the two kinds differently, so the kind is kept to get its exact result.
struct py_number {
  double value = 0;
  bool is_int = true;
};

/// CPython 3.12's sum() of ints and floats, starting from the int 0: ints exactly while only ints come, then
/// float(total) + the first float, then Neumaier-compensated additions of floats (ints added plainly), the
/// compensation added at the end. (CPython 3.11 and older add plainly throughout; 3.14 compensates ints too:
/// either can differ from this in the last bit.)
[[nodiscard]] inline double python_sum(const std::vector<py_number>& items) {
  std::size_t i = 0;
  long long int_total = 0;
  for (; i < items.size() && items[i].is_int; ++i) int_total += static_cast<long long>(items[i].value);
  if (i == items.size()) return static_cast<double>(int_total);
  double total = static_cast<double>(int_total) + items[i].value;
  double compensation = 0;
  for (++i; i < items.size(); ++i) {
    const double x = items[i].value;
    if (items[i].is_int) {
      total += x;
      continue;
    }
    const double t = total + x;
    if (std::fabs(total) >= std::fabs(x)) {
      compensation += (total - t) + x;
    } else {
      compensation += (x - t) + total;
    }
    total = t;
  }
  if (compensation != 0 && std::isfinite(compensation)) total += compensation;
  return total;
}

/// evaluate-v2.0.py's compute_f1 on tokens, keeping whether Python would return an int or a float.
[[nodiscard]] inline py_number compute_f1_tokens(const std::vector<std::string>& gold,
                                                 const std::vector<std::string>& prediction) {
  // If either is no-answer, F1 is 1 if they agree, 0 otherwise.
  if (gold.empty() || prediction.empty()) return {gold.empty() && prediction.empty() ? 1.0 : 0.0, true};
  const std::size_t num_same = common_token_count(gold, prediction);
  if (num_same == 0) return {0, true};
  return {token_f1(num_same, prediction.size(), gold.size()), false};
}

[[nodiscard]] inline std::string quote_id(const std::string& id) { return quote_for_message<nlohmann::json>(id); }

}  // namespace detail

/// The official scripts' normalize_answer: white_space_fix(remove_articles(remove_punc(lower(s)))).
[[nodiscard]] CPUTRAIN_DECL std::string normalize_answer(std::string_view s);

namespace detail {

inline normalized_answer normalize_for_scoring(std::string_view s) {
  normalized_answer n{normalize_answer(s), {}};
  n.tokens = sorted_tokens(n.text);
  return n;
}

}  // namespace detail

/// evaluate-v1.1.py's exact_match_score: the normalized texts are equal.
[[nodiscard]] CPUTRAIN_DECL bool exact_match_score(std::string_view prediction, std::string_view ground_truth);

/// evaluate-v1.1.py's f1_score: token F1 of the normalized texts; 0 when they share no token (so also when both
/// are empty — unlike v2's compute_f1).
[[nodiscard]] CPUTRAIN_DECL double f1_score(std::string_view prediction, std::string_view ground_truth);

/// evaluate-v2.0.py's compute_exact: 1 if the normalized texts are equal, else 0.
[[nodiscard]] CPUTRAIN_DECL int compute_exact(std::string_view a_gold, std::string_view a_pred);

/// evaluate-v2.0.py's compute_f1: token F1, except that when either side has no tokens it is 1 if both have
/// none and 0 otherwise.
[[nodiscard]] CPUTRAIN_DECL double compute_f1(std::string_view a_gold, std::string_view a_pred);

/// evaluate-v1.1.py's evaluate(): per question, the best exact match and the best F1 over its answers; a
/// question without a prediction scores 0 and is counted in `missing`; predictions for ids the dataset does not
/// have are ignored. Every question must have an answer (the script's max() over none fails): usage_error for a
/// dataset with unanswerable questions (score those with evaluate_squad_v2) or without questions.
[[nodiscard]] CPUTRAIN_DECL squad_v1_scores evaluate_squad_v1(const squad_dataset& dataset,
                                                              const qa_predictions& predictions);

/// evaluate-v2.0.py as Hugging Face's squad_v2 metric runs it (so best_* are always computed).
///
/// Per question: the gold answers are its answers whose normalized text is not empty, or just "" if none is;
/// the raw scores are the best compute_exact and compute_f1 over them. A question whose no-answer probability
/// exceeds `no_answer_threshold` scores 1 if it has no answers and 0 if it has (apply_no_ans_threshold); exact,
/// f1 and the HasAns / NoAns groups average those. best_* sweep the threshold over the raw scores
/// (find_best_thresh): questions in increasing probability — ties in dataset order, as run_qa.py builds the
/// probabilities and Python's sort is stable — each switching from "no answer" to its prediction.
///
/// `no_answer_probability` maps every question's id to its probability (Hugging Face's run_qa passes 0.0 for
/// all, which nullptr stands for; the squad_v2 metric stores them as float32, so pass float values to see its
/// exact thresholds). usage_error if a question has no prediction or no probability (the script fails on
/// those too), if a probability is NaN, or if the dataset has no questions.
[[nodiscard]] CPUTRAIN_DECL squad_v2_scores evaluate_squad_v2(
    const squad_dataset& dataset, const qa_predictions& predictions,
    const std::unordered_map<std::string, double>* no_answer_probability = nullptr, double no_answer_threshold = 1.0);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL squad_v2_scores evaluate_squad_v2(const squad_dataset& dataset, const qa_predictions& predictions,
                                                const std::unordered_map<std::string, double>* no_answer_probability,
                                                double no_answer_threshold) {
  const std::size_t n = dataset.examples.size();
  if (n == 0) throw usage_error("evaluate_squad_v2: the dataset has no questions to score");

  std::vector<detail::py_number> exact_raw(n), f1_raw(n);
  std::vector<double> na_prob(n, 0.0);
  std::vector<bool> has_answer(n), predicted_something(n);
  for (std::size_t i = 0; i < n; ++i) {
    const squad_example& e = dataset.examples[i];
    const auto prediction = predictions.find(e.id);
    if (prediction == predictions.end()) {
      throw usage_error("evaluate_squad_v2: no prediction for question " + detail::quote_id(e.id) +
                        " (predict \"\" for \"no answer\")");
    }
    if (no_answer_probability != nullptr) {
      const auto p = no_answer_probability->find(e.id);
      if (p == no_answer_probability->end()) {
        throw usage_error("evaluate_squad_v2: no no-answer probability for question " + detail::quote_id(e.id));
      }
      if (std::isnan(p->second)) {
        throw usage_error("evaluate_squad_v2: the no-answer probability of question " + detail::quote_id(e.id) +
                          " is NaN");
      }
      na_prob[i] = p->second;
    }
    has_answer[i] = !e.is_impossible();
    predicted_something[i] = !prediction->second.empty();

    const detail::normalized_answer pred = detail::normalize_for_scoring(prediction->second);
    std::vector<detail::normalized_answer> gold;
    for (const squad_answer& a : e.answers) {
      detail::normalized_answer g = detail::normalize_for_scoring(a.text);
      if (!g.text.empty()) gold.push_back(std::move(g));
    }
    if (gold.empty()) gold.push_back({});  // for unanswerable questions, the only correct answer is ""
    // max() keeps the first of equal values, which matters only for an int 1 against a float 1.0.
    for (std::size_t k = 0; k < gold.size(); ++k) {
      const int exact = gold[k].text == pred.text ? 1 : 0;
      const detail::py_number f1 = detail::compute_f1_tokens(gold[k].tokens, pred.tokens);
      if (k == 0 || exact > exact_raw[i].value) exact_raw[i] = {static_cast<double>(exact), true};
      if (k == 0 || f1.value > f1_raw[i].value) f1_raw[i] = f1;
    }
  }

  // apply_no_ans_threshold: float(not has_ans) where the probability exceeds the threshold.
  const auto thresholded = [&](const std::vector<detail::py_number>& raw) {
    std::vector<detail::py_number> out = raw;
    for (std::size_t i = 0; i < n; ++i) {
      if (na_prob[i] > no_answer_threshold) out[i] = {has_answer[i] ? 0.0 : 1.0, false};
    }
    return out;
  };
  const std::vector<detail::py_number> exact_thresh = thresholded(exact_raw);
  const std::vector<detail::py_number> f1_thresh = thresholded(f1_raw);

  // make_eval_dict over a subset of the questions, in dataset order.
  const auto group = [&](auto&& keep) {
    std::vector<detail::py_number> exact, f1;
    for (std::size_t i = 0; i < n; ++i) {
      if (keep(i)) {
        exact.push_back(exact_thresh[i]);
        f1.push_back(f1_thresh[i]);
      }
    }
    squad_v2_group g;
    g.total = exact.size();
    const auto total = static_cast<double>(g.total);
    g.exact = 100.0 * detail::python_sum(exact) / total;
    g.f1 = 100.0 * detail::python_sum(f1) / total;
    return g;
  };
  squad_v2_scores scores;
  const squad_v2_group all = group([](std::size_t) { return true; });
  scores.exact = all.exact;
  scores.f1 = all.f1;
  scores.total = all.total;
  const auto answerable = static_cast<std::size_t>(std::count(has_answer.begin(), has_answer.end(), true));
  if (answerable > 0) scores.has_ans = group([&](std::size_t i) { return has_answer[i]; });
  if (answerable < n) scores.no_ans = group([&](std::size_t i) { return !has_answer[i]; });

  // find_best_thresh: start from "no answer" everywhere (every unanswerable question right), then take the
  // predictions in increasing no-answer probability.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return na_prob[a] < na_prob[b]; });
  const auto best_thresh = [&](const std::vector<detail::py_number>& raw, double& best, double& thresh) {
    double current = static_cast<double>(n - answerable);
    double best_score = current;
    thresh = 0.0;
    for (const std::size_t i : order) {
      double diff = 0;
      if (has_answer[i]) {
        diff = raw[i].value;
      } else if (predicted_something[i]) {
        diff = -1;
      }
      current += diff;
      if (current > best_score) {
        best_score = current;
        thresh = na_prob[i];
      }
    }
    best = 100.0 * best_score / static_cast<double>(n);
  };
  best_thresh(exact_raw, scores.best_exact, scores.best_exact_thresh);
  best_thresh(f1_raw, scores.best_f1, scores.best_f1_thresh);
  return scores;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// {"exact_match": .., "f1": ..}, as evaluate-v1.1.py prints and Hugging Face's squad metric returns.
[[nodiscard]] CPUTRAIN_DECL nlohmann::ordered_json to_json(const squad_v1_scores& s);

/// Hugging Face's squad_v2 result: exact, f1, total, HasAns_exact, HasAns_f1, HasAns_total, NoAns_exact,
/// NoAns_f1, NoAns_total, best_exact, best_exact_thresh, best_f1, best_f1_thresh (the HasAns_ / NoAns_ keys
/// only when the dataset has such questions).
[[nodiscard]] CPUTRAIN_DECL nlohmann::ordered_json to_json(const squad_v2_scores& s);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::string normalize_answer(std::string_view s) {
  const std::u32string text = detail::decode_lossy(s);

  // lower(): str.lower(), full mappings (U+0130 becomes two code points) and the final-sigma rule.
  std::u32string lowered;
  lowered.reserve(text.size() + 1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char32_t cp = text[i];
    if (cp == 0x130) {
      lowered.push_back(U'i');
      lowered.push_back(0x307);
    } else if (cp == 0x3a3) {
      lowered.push_back(detail::is_final_sigma(text, i) ? char32_t{0x3c2} : char32_t{0x3c3});
    } else {
      lowered.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
    }
  }

  // remove_punc(): only the ASCII string.punctuation.
  std::erase_if(lowered, [](char32_t cp) { return detail::is_ascii_punctuation(cp); });

  // remove_articles(): re.sub(r'\b(a|an|the)\b', ' ', text) replaces exactly the maximal runs of word characters
  // that are "a", "an" or "the" (a run is bounded by \b on both sides, and \b holds nowhere inside it).
  std::u32string no_articles;
  no_articles.reserve(lowered.size());
  for (std::size_t i = 0; i < lowered.size();) {
    if (!detail::is_python_word_char(lowered[i])) {
      no_articles.push_back(lowered[i++]);
      continue;
    }
    std::size_t end = i;
    while (end < lowered.size() && detail::is_python_word_char(lowered[end])) ++end;
    const std::u32string_view word(lowered.data() + i, end - i);
    if (word == U"a" || word == U"an" || word == U"the") {
      no_articles.push_back(U' ');
    } else {
      no_articles.append(word);
    }
    i = end;
  }

  // white_space_fix(): ' '.join(text.split()).
  std::string out;
  out.reserve(no_articles.size());
  bool gap = false;
  for (const char32_t cp : no_articles) {
    if (detail::is_python_whitespace(cp)) {
      gap = !out.empty();
      continue;
    }
    if (gap) out.push_back(' ');
    gap = false;
    text::append_utf8(out, cp);
  }
  return out;
}

CPUTRAIN_DECL bool exact_match_score(std::string_view prediction, std::string_view ground_truth) {
  return normalize_answer(prediction) == normalize_answer(ground_truth);
}

CPUTRAIN_DECL double f1_score(std::string_view prediction, std::string_view ground_truth) {
  const auto p = detail::sorted_tokens(normalize_answer(prediction));
  const auto g = detail::sorted_tokens(normalize_answer(ground_truth));
  const std::size_t num_same = detail::common_token_count(p, g);
  if (num_same == 0) return 0;
  return detail::token_f1(num_same, p.size(), g.size());
}

CPUTRAIN_DECL int compute_exact(std::string_view a_gold, std::string_view a_pred) {
  return normalize_answer(a_gold) == normalize_answer(a_pred) ? 1 : 0;
}

CPUTRAIN_DECL double compute_f1(std::string_view a_gold, std::string_view a_pred) {
  return detail::compute_f1_tokens(detail::sorted_tokens(normalize_answer(a_gold)),
                                   detail::sorted_tokens(normalize_answer(a_pred)))
      .value;
}

CPUTRAIN_DECL squad_v1_scores evaluate_squad_v1(const squad_dataset& dataset, const qa_predictions& predictions) {
  if (dataset.examples.empty()) throw usage_error("evaluate_squad_v1: the dataset has no questions to score");
  for (const squad_example& e : dataset.examples) {
    if (e.is_impossible()) {
      throw usage_error("evaluate_squad_v1: question " + detail::quote_id(e.id) +
                        " has no answers, which SQuAD v1.1 scoring cannot score (use evaluate_squad_v2)");
    }
  }
  squad_v1_scores scores;
  scores.total = dataset.examples.size();
  std::size_t exact_match = 0;
  double f1 = 0;
  for (const squad_example& e : dataset.examples) {
    const auto prediction = predictions.find(e.id);
    if (prediction == predictions.end()) {
      ++scores.missing;
      continue;
    }
    const detail::normalized_answer p = detail::normalize_for_scoring(prediction->second);
    bool best_exact = false;
    double best_f1 = 0;
    for (std::size_t k = 0; k < e.answers.size(); ++k) {
      const detail::normalized_answer g = detail::normalize_for_scoring(e.answers[k].text);
      best_exact = best_exact || p.text == g.text;
      const std::size_t num_same = detail::common_token_count(p.tokens, g.tokens);
      const double score = num_same == 0 ? 0.0 : detail::token_f1(num_same, p.tokens.size(), g.tokens.size());
      if (k == 0 || score > best_f1) best_f1 = score;
    }
    exact_match += best_exact ? 1 : 0;
    f1 += best_f1;
  }
  scores.exact_match = 100.0 * static_cast<double>(exact_match) / static_cast<double>(scores.total);
  scores.f1 = 100.0 * f1 / static_cast<double>(scores.total);
  return scores;
}

CPUTRAIN_DECL nlohmann::ordered_json to_json(const squad_v1_scores& s) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["exact_match"] = s.exact_match;
  out["f1"] = s.f1;
  return out;
}

CPUTRAIN_DECL nlohmann::ordered_json to_json(const squad_v2_scores& s) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["exact"] = s.exact;
  out["f1"] = s.f1;
  out["total"] = s.total;
  const auto put_group = [&](const char* prefix, const std::optional<squad_v2_group>& g) {
    if (!g) return;
    out[std::string(prefix) + "_exact"] = g->exact;
    out[std::string(prefix) + "_f1"] = g->f1;
    out[std::string(prefix) + "_total"] = g->total;
  };
  put_group("HasAns", s.has_ans);
  put_group("NoAns", s.no_ans);
  out["best_exact"] = s.best_exact;
  out["best_exact_thresh"] = s.best_exact_thresh;
  out["best_f1"] = s.best_f1;
  out["best_f1_thresh"] = s.best_f1_thresh;
  return out;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
