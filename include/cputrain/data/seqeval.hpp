// seqeval's default (conlleval-style, not "strict") NER metrics as Hugging Face's `seqeval` metric returns them to
// run_ner: get_entities (seqeval's chunking of B-/I-/E-/S-/O prefix tags) and seqeval(), the overall micro
// precision/recall/F1, token accuracy and per-type precision/recall/F1/number. Like seqeval, sentences are scored
// as one sequence with an 'O' after each sentence, so no entity runs from one sentence into the next.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/data/data_error.hpp"

namespace cputrain::data {

/// One entity as seqeval's get_entities returns it, (type, start, end): `first` and `last` are its first and
/// last token, both inclusive.
struct entity_chunk {
  std::string type;
  std::size_t first = 0;
  std::size_t last = 0;

  friend bool operator==(const entity_chunk&, const entity_chunk&) = default;
};

/// One entity type's scores; `number` counts its entities in the references (seqeval's "support").
struct entity_scores {
  double precision = 0;
  double recall = 0;
  double f1 = 0;
  std::size_t number = 0;
};

/// What Hugging Face's seqeval metric returns: the overall_* keys, and one entry per entity type found in the
/// references or the predictions (a type only predicted has number 0).
struct seqeval_result {
  double overall_precision = 0;
  double overall_recall = 0;
  double overall_f1 = 0;
  double overall_accuracy = 0;
  std::map<std::string, entity_scores> by_type;
};

namespace detail {

/// A tag cut as seqeval cuts it (prefix style): the letter is its first character (a whole code point, as
/// Python's chunk[0]); the type is what follows the first '-' after the letter, or all that follows the letter
/// when there is no '-' ("BPER" is B of PER), or "_" when that is empty ("O", "B", "I-").
struct cut_tag {
  std::string_view letter;
  std::string_view type;
};

[[nodiscard]] inline cut_tag cut(std::string_view tag) noexcept {
  const auto lead = static_cast<unsigned char>(tag.front());
  std::size_t n = 1;
  if (lead >= 0xf0) {
    n = 4;
  } else if (lead >= 0xe0) {
    n = 3;
  } else if (lead >= 0xc0) {
    n = 2;
  }
  if (n > tag.size()) n = tag.size();
  const std::string_view rest = tag.substr(n);
  const std::size_t dash = rest.find('-');
  std::string_view type = dash == std::string_view::npos ? rest : rest.substr(dash + 1);
  if (type.empty()) type = "_";
  return {tag.substr(0, n), type};
}

/// seqeval's end_of_chunk: whether a chunk ended between the previous tag and this one.
[[nodiscard]] inline bool end_of_chunk(const cut_tag& prev, const cut_tag& cur) noexcept {
  const std::string_view p = prev.letter;
  const std::string_view c = cur.letter;
  if (p == "E" || p == "S") return true;
  if ((p == "B" || p == "I") && (c == "B" || c == "S" || c == "O")) return true;
  return p != "O" && p != "." && prev.type != cur.type;
}

/// seqeval's start_of_chunk: whether a chunk started between the previous tag and this one. I- and E- after O,
/// E- or S- start one (IOB1, IOE), as does any tag but O whose type differs from the previous one's.
[[nodiscard]] inline bool start_of_chunk(const cut_tag& prev, const cut_tag& cur) noexcept {
  const std::string_view p = prev.letter;
  const std::string_view c = cur.letter;
  if (c == "B" || c == "S") return true;
  if ((p == "E" || p == "S" || p == "O") && (c == "E" || c == "I")) return true;
  return c != "O" && c != "." && prev.type != cur.type;
}

/// seqeval's get_entities loop, fed one tag at a time. The previous tag starts as letter "O" with the empty
/// type (not "_", the type an 'O' tag has), as seqeval's does; `begin` is kept across chunks as seqeval keeps
/// begin_offset. The views point into tags that outlive the chunker.
class chunker {
 public:
  void feed(std::string_view tag, std::size_t position, std::vector<entity_chunk>& out) {
    const cut_tag cur = cut(tag);
    if (end_of_chunk(prev_, cur)) out.push_back({std::string(prev_.type), begin_, position - 1});
    if (start_of_chunk(prev_, cur)) begin_ = position;
    prev_ = cur;
  }

 private:
  cut_tag prev_{"O", ""};
  std::size_t begin_ = 0;
};

/// The message part that says where a tag is.
[[nodiscard]] inline std::string tag_place(std::size_t sentence, std::size_t token) {
  return "sentence " + std::to_string(sentence) + " (from 0), token " + std::to_string(token);
}

/// seqeval's get_entities on a list of sentences: they are joined with an 'O' after each (and the one 'O'
/// get_entities adds at the end), so positions count that 'O' too. `what` names the sequence in messages.
[[nodiscard]] CPUTRAIN_DECL std::vector<entity_chunk> sentence_entities(
    const std::vector<std::vector<std::string>>& sentences, const char* what);

/// precision, recall and F1 from counts, as seqeval's _prf_divide and F-score give them with zero_division
/// "warn" (what evaluate passes): 0 where the denominator is 0; F1 = 2pr / (p + r), in that order of operations.
[[nodiscard]] inline entity_scores score(std::size_t correct, std::size_t predicted, std::size_t actual) noexcept {
  entity_scores s;
  s.precision = predicted > 0 ? static_cast<double>(correct) / static_cast<double>(predicted) : 0.0;
  s.recall = actual > 0 ? static_cast<double>(correct) / static_cast<double>(actual) : 0.0;
  const double denominator = s.precision + s.recall;
  s.f1 = denominator == 0.0 ? 0.0 : 2.0 * s.precision * s.recall / denominator;
  s.number = actual;
  return s;
}

}  // namespace detail

/// seqeval.metrics.sequence_labeling.get_entities on one sentence (prefix tags, suffix=False): its entities in
/// order of their last token. Tags other than O/B-/I-/E-/S- are cut the same way (seqeval only warns);
/// data_error for an empty tag, which seqeval cannot read either.
[[nodiscard]] CPUTRAIN_DECL std::vector<entity_chunk> get_entities(const std::vector<std::string>& tags);

/// Hugging Face's seqeval metric with its defaults (seqeval's classification_report, default mode, then
/// accuracy_score). An entity counts as correct when the same type covers the same tokens in both. Per type and
/// overall (micro: counts summed over the types): precision = correct / predicted, recall = correct / true,
/// each 0 when its denominator is 0, F1 their harmonic mean or 0. overall_accuracy: equal tags over all tags.
/// data_error, naming the sentence, when the two differ in shape; also when there are no tags at all, or an
/// empty tag (seqeval fails on both).
[[nodiscard]] CPUTRAIN_DECL seqeval_result seqeval(const std::vector<std::vector<std::string>>& predictions,
                                                   const std::vector<std::vector<std::string>>& references);

#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

CPUTRAIN_DECL std::vector<entity_chunk> sentence_entities(const std::vector<std::vector<std::string>>& sentences,
                                                         const char* what) {
  std::vector<entity_chunk> out;
  chunker c;
  std::size_t position = 0;
  for (std::size_t s = 0; s < sentences.size(); ++s) {
    for (std::size_t t = 0; t < sentences[s].size(); ++t) {
      if (sentences[s][t].empty()) {
        throw data_error(std::string("seqeval: ") + what + " tag at " + tag_place(s, t) +
                         " is empty (tags are O, or B-, I-, E-, S- and a type)");
      }
      c.feed(sentences[s][t], position++, out);
    }
    c.feed("O", position++, out);
  }
  c.feed("O", position, out);
  return out;
}

}  // namespace detail

CPUTRAIN_DECL std::vector<entity_chunk> get_entities(const std::vector<std::string>& tags) {
  std::vector<entity_chunk> out;
  detail::chunker c;
  for (std::size_t t = 0; t < tags.size(); ++t) {
    if (tags[t].empty()) throw data_error("get_entities: the tag at token " + std::to_string(t) + " is empty");
    c.feed(tags[t], t, out);
  }
  c.feed("O", tags.size(), out);
  return out;
}

CPUTRAIN_DECL seqeval_result seqeval(const std::vector<std::vector<std::string>>& predictions,
                                     const std::vector<std::vector<std::string>>& references) {
  if (predictions.size() != references.size()) {
    throw data_error("seqeval: " + std::to_string(predictions.size()) + " predicted sentences but " +
                     std::to_string(references.size()) + " reference sentences");
  }
  std::size_t tokens = 0;
  std::size_t equal = 0;
  for (std::size_t s = 0; s < references.size(); ++s) {
    if (predictions[s].size() != references[s].size()) {
      throw data_error("seqeval: sentence " + std::to_string(s) + " (from 0) has " +
                       std::to_string(predictions[s].size()) + " predicted tags but " +
                       std::to_string(references[s].size()) + " reference tags");
    }
    for (std::size_t t = 0; t < references[s].size(); ++t) equal += predictions[s][t] == references[s][t] ? 1 : 0;
    tokens += references[s].size();
  }
  if (tokens == 0) throw data_error("seqeval: no tags to score (accuracy would divide by zero)");

  // Per type, the (first, last) spans found in each; a span ends at a distinct token, so sets lose nothing.
  using spans = std::set<std::pair<std::size_t, std::size_t>>;
  std::map<std::string, std::pair<spans, spans>> by_type;  // type -> (true spans, predicted spans)
  for (entity_chunk& e : detail::sentence_entities(references, "reference")) {
    by_type[std::move(e.type)].first.emplace(e.first, e.last);
  }
  for (entity_chunk& e : detail::sentence_entities(predictions, "predicted")) {
    by_type[std::move(e.type)].second.emplace(e.first, e.last);
  }

  seqeval_result result;
  std::size_t all_correct = 0;
  std::size_t all_predicted = 0;
  std::size_t all_true = 0;
  for (const auto& entry : by_type) {
    const spans& truth = entry.second.first;
    const spans& predicted = entry.second.second;
    std::size_t correct = 0;
    for (const auto& span : predicted) correct += truth.count(span);
    result.by_type.emplace(entry.first, detail::score(correct, predicted.size(), truth.size()));
    all_correct += correct;
    all_predicted += predicted.size();
    all_true += truth.size();
  }
  const entity_scores overall = detail::score(all_correct, all_predicted, all_true);
  result.overall_precision = overall.precision;
  result.overall_recall = overall.recall;
  result.overall_f1 = overall.f1;
  result.overall_accuracy = static_cast<double>(equal) / static_cast<double>(tokens);
  return result;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::data
