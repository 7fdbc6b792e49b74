#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <tbb/global_control.h>

#include "cputrain/data/token_classification_features.hpp"
#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/load_tokenizer.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "support/checks.hpp"
#include "support/temp_dir.hpp"
#include "support/wordpiece_json.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace token_classification_features_test {

using namespace cputrain;
using namespace cputrain::data;
using cputrain::test::says;

namespace {

using ids = std::vector<std::int32_t>;
constexpr std::int32_t X = -100;  // no label

ids vec(std::span<const std::int32_t> s) { return ids(s.begin(), s.end()); }

// "washington" is wash ##ing ##ton, "newyork" new ##york; "zzz" is [UNK].
text::bert_tokenizer pieces_tokenizer() {
  return text::bert_tokenizer(text::vocabulary::parse(
      "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nwash\n##ing\n##ton\nis\nin\nnew\n##york\n.\n", "pieces"));
}

const std::vector<std::string> label_list{"O", "B-LOC", "I-LOC", "B-MISC"};  // B-MISC has no I-MISC

token_classification_example sentence() {
  return {"s1", {"washington", "is", "in", "newyork", "."}, {1, 0, 0, 3, 0}};
}

token_classification_options options(std::size_t max_seq_length = 16, bool all = false) {
  token_classification_options o;
  o.max_seq_length = max_seq_length;
  o.label_all_tokens = all;
  o.b_to_i_label = b_to_i_labels(label_list);
  return o;
}

token_classification_features make(const std::vector<token_classification_example>& examples,
                                   const token_classification_options& o) {
  return make_token_classification_features(examples, pieces_tokenizer(), o);
}

std::string text_data(const std::string& name) { return std::string(CPUTRAIN_TEXT_TEST_DATA) + "/" + name; }

}  // namespace

TEST_CASE("b_to_i_labels maps each B- label to its I- label as run_ner builds the list") {
  CHECK(b_to_i_labels({"O", "B-PER", "I-PER", "B-LOC", "B-MISC", "I-MISC", "I-LOC"}) == ids{0, 2, 2, 6, 5, 5, 6});
  CHECK(b_to_i_labels(label_list) == ids{0, 2, 2, 3});
  // Python's str.replace turns every "B-" into "I-", so "B-SUB-X" looks for "I-SUI-X"; index() takes the first.
  CHECK(b_to_i_labels({"O", "B-SUB-X", "I-SUB-X", "I-SUI-X", "I-SUI-X"}) == ids{0, 3, 2, 3, 4});
  CHECK(b_to_i_labels({"XB-Y", "XI-Y", "B", "I"}) == ids{0, 1, 2, 3});
  CHECK(b_to_i_labels({}).empty());
}

TEST_CASE("the first token of each word carries its label and the other pieces -100") {
  const auto f = make({sentence()}, options());
  REQUIRE(f.size() == 1);
  CHECK(f.has_labels());
  // [CLS] wash ##ing ##ton is in new ##york . [SEP]
  CHECK(vec(f.input_ids(0)) == ids{2, 5, 6, 7, 8, 9, 10, 11, 12, 3});
  CHECK(vec(f.word_ids(0)) == ids{-1, 0, 0, 0, 1, 2, 3, 3, 4, -1});
  CHECK(vec(f.labels(0)) == ids{X, 1, X, X, 0, 0, 3, X, 0, X});
  CHECK(f.length(0) == 10);
  CHECK(f.word_labels(0) == ids{1, 0, 0, 3, 0});  // one per word: what seqeval scores
}

TEST_CASE("label_all_tokens labels every piece: B- turned into I- and a B- without I- kept") {
  const auto f = make({sentence()}, options(16, true));
  CHECK(f.label_all_tokens());
  CHECK(vec(f.labels(0)) == ids{X, 1, 2, 2, 0, 0, 3, 3, 0, X});
  CHECK(f.word_labels(0) == ids{1, 2, 2, 0, 0, 3, 3, 0});  // compute_metrics scores every labelled token
  CHECK_THROWS_MATCHES(make({sentence()}, [] {
                         auto o = options(16, true);
                         o.b_to_i_label.clear();
                         return o;
                       }()),
                       usage_error, says("label_all_tokens needs b_to_i_label"));
}

TEST_CASE("truncation keeps the special tokens and labels a word cut in the middle at its first token") {
  const auto f = make({sentence()}, options(7));
  // 7 leaves 5 tokens between [CLS] and [SEP]: new ##york and "." go.
  CHECK(vec(f.input_ids(0)) == ids{2, 5, 6, 7, 8, 9, 3});
  CHECK(vec(f.labels(0)) == ids{X, 1, X, X, 0, 0, X});
  const auto cut_word = make({sentence()}, options(8));
  CHECK(vec(cut_word.input_ids(0)) == ids{2, 5, 6, 7, 8, 9, 10, 3});
  CHECK(vec(cut_word.word_ids(0)) == ids{-1, 0, 0, 0, 1, 2, 3, -1});
  CHECK(vec(cut_word.labels(0)) == ids{X, 1, X, X, 0, 0, 3, X});
  CHECK(cut_word.word_labels(0) == ids{1, 0, 0, 3});  // the words that were cut away are not scored
  const auto inside = make({sentence()}, options(3, true));
  CHECK(vec(inside.input_ids(0)) == ids{2, 5, 3});
  CHECK(vec(inside.labels(0)) == ids{X, 1, X});
  const auto two_pieces = make({sentence()}, options(4, true));
  CHECK(vec(two_pieces.labels(0)) == ids{X, 1, 2, X});
  CHECK_THROWS_MATCHES(make({sentence()}, options(2)), usage_error, says("max_seq_length 2 leaves no room"));
}

TEST_CASE("a word without tokens loses its label and the next word keeps its own") {
  // "" gives no token (as Hugging Face's word_ids skip it); "zzz" is one [UNK].
  const auto f = make({{"s", {"washington", "", "zzz", "is"}, {1, 2, 3, 0}}}, options());
  CHECK(vec(f.input_ids(0)) == ids{2, 5, 6, 7, 1, 8, 3});
  CHECK(vec(f.word_ids(0)) == ids{-1, 0, 0, 0, 2, 3, -1});
  CHECK(vec(f.labels(0)) == ids{X, 1, X, X, 3, 0, X});
}

TEST_CASE("token classification batches pad ids with the padding token and labels with -100") {
  const auto f = make({sentence(), {"s2", {"is", "in"}, {0, 0}}}, options(12));
  const std::vector<std::size_t> order{1, 0};
  const auto b = f.batch(order, token_classification_padding::longest);
  REQUIRE(b.batch == 2);
  REQUIRE(b.seq == 10);
  CHECK(b.input_ids == ids{2, 8, 9, 3, 0, 0, 0, 0, 0, 0, 2, 5, 6, 7, 8, 9, 10, 11, 12, 3});
  CHECK(b.attention_mask == ids{1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(b.token_type_ids == ids(20, 0));
  CHECK(b.labels == std::vector<std::int64_t>{X, 0, 0, X, X, X, X, X, X, X, X, 1, X, X, 0, 0, 3, X, 0, X});
  CHECK_NOTHROW(b.validate(13, 2, 512));
  const auto full = f.batch(order, token_classification_padding::max_length);
  CHECK(full.seq == 12);
  CHECK(full.labels.size() == 24);
  CHECK(full.labels[4] == X);
  CHECK(full.input_ids[12 + 9] == 3);
}

TEST_CASE("word_predictions take the argmax at the labelled positions as compute_metrics pairs them") {
  const auto f = make({sentence()}, options());
  const std::size_t L = 4, seq = 12;  // a padded row of the head's output: [seq, L]
  std::vector<float> logits(seq * L, 0.0f);
  for (std::size_t p = 0; p < seq; ++p) logits[p * L + (p + 1) % L] = 1.0f;
  // Labelled positions 1, 4, 5, 6, 8: argmax (p + 1) % 4, but position 5 ties (first wins) and 8 has a NaN.
  logits[5 * L + 2] = 0.0f;
  logits[8 * L + 0] = 0.5f;
  logits[8 * L + 2] = std::numeric_limits<float>::quiet_NaN();
  CHECK(f.word_predictions(0, logits, L) == ids{2, 1, 0, 3, 2});
  CHECK(f.word_predictions(0, logits, L).size() == f.word_labels(0).size());
  const auto all = make({sentence()}, options(16, true));
  CHECK(all.word_predictions(0, logits, L).size() == 8);
  CHECK_THROWS_MATCHES(f.word_predictions(0, std::span<const float>(logits).first(9 * L), L), usage_error,
                       says("logits need at least 10 x num_labels (4)"));
}

TEST_CASE("features without labels predict the same positions and batch without labels") {
  auto o = options();
  o.labels = false;
  const auto f = make({{"p", sentence().words, {}}}, o);
  CHECK_FALSE(f.has_labels());
  CHECK(f.labels(0).empty());
  const std::vector<std::size_t> one{0};
  CHECK_FALSE(f.batch(one, token_classification_padding::longest).has_labels());
  std::vector<float> logits(10 * 4, 0.0f);
  CHECK(f.word_predictions(0, logits, 4).size() == 5);
  CHECK(f.labelled(0, 1));
  CHECK_FALSE(f.labelled(0, 2));
  CHECK_FALSE(f.labelled(0, 0));
  CHECK_THROWS_MATCHES(f.word_labels(0), usage_error, says("without labels"));
}

TEST_CASE("examples that run_ner cannot label are refused naming the example") {
  CHECK_THROWS_MATCHES(make({sentence(), {"s2", {}, {}}}, options()), data_error,
                       says("example 1 (\"s2\"): words: empty"));
  CHECK_THROWS_MATCHES(make({{"", {"is"}, {}}}, options()), data_error, says("example 0: labels: 0 labels for 1 words"));
  CHECK_THROWS_MATCHES(make({{"s", {"is", "in"}, {0, -1}}}, options()), data_error,
                       says("word 1 (\"in\") has label id -1"));
  CHECK_THROWS_MATCHES(make({{"s", {"is"}, {4}}}, options()), data_error, says("outside the 4 labels"));
}

TEST_CASE("token classification in RoBERTa's layout: <s> words </s> with each word's prefix space") {
  // RobertaTokenizerFast needs add_prefix_space for words (run_ner passes it); without, the tokenizer says so.
  CHECK_THROWS_MATCHES(make_token_classification_features(std::vector{sentence()},
                                                          text::load_tokenizer(text_data("gpt2_cut")), options()),
                       text::text_error, says("add_prefix_space"));
  const cputrain::test::temp_dir dir;
  std::filesystem::copy_file(text_data("gpt2_cut/tokenizer.json"), dir.path() / "tokenizer.json");
  cputrain::test::write_json(dir.path() / "tokenizer_config.json", nlohmann::json{{"add_prefix_space", true}});
  const text::tokenizer tok = text::load_tokenizer(dir.path());
  const token_classification_example e{"r", {"Qatari", "visited", "New", "York"}, {1, 0, 1, 2}};
  const auto f = make_token_classification_features(std::vector{e}, tok, options(64, true));
  ids expected{tok.specials().cls}, labels{X}, all_labels{X};
  std::size_t longest = 0;
  for (std::size_t w = 0; w < e.words.size(); ++w) {
    const auto alone = tok.encode(" " + e.words[w], false).ids;
    longest = std::max(longest, alone.size());
    for (std::size_t k = 0; k < alone.size(); ++k) {
      expected.push_back(alone[k]);
      labels.push_back(k == 0 ? e.labels[w] : X);
      all_labels.push_back(k == 0 ? e.labels[w] : (e.labels[w] == 1 ? 2 : e.labels[w]));
    }
  }
  expected.push_back(tok.specials().sep);
  labels.push_back(X);
  all_labels.push_back(X);
  REQUIRE(longest >= 3);  // some word is cut into pieces
  CHECK(vec(f.input_ids(0)) == expected);
  CHECK(vec(f.labels(0)) == all_labels);
  auto first_only = options(64);
  CHECK(vec(make_token_classification_features(std::vector{e}, tok, first_only).labels(0)) == labels);
  // Cut at max_seq_length: </s> stays last.
  const auto cut = make_token_classification_features(std::vector{e}, tok, options(4));
  CHECK(vec(cut.input_ids(0)) == ids{expected[0], expected[1], expected[2], tok.specials().sep});
  CHECK(vec(cut.labels(0)) == ids{X, 1, X, X});  // "Qatari" cut after two of its three pieces
  const std::vector<std::size_t> one{0};
  const auto b = f.batch(one, token_classification_padding::max_length);
  CHECK(b.input_ids.back() == *tok.specials().pad);
  CHECK(b.token_type_ids == ids(64, 0));
}

TEST_CASE("token classification in XLM-R's layout: Unigram pieces of each word") {
  const text::tokenizer tok = text::load_tokenizer(text_data("xlmr_cut"));
  const token_classification_example e{"x", {"Washingtonians", "visited", "Bordeaux"}, {1, 0, 1}};
  const auto f = make_token_classification_features(std::vector{e}, tok, options(64));
  const auto words = vec(f.word_ids(0));
  const auto labels = vec(f.labels(0));
  REQUIRE(words.size() == labels.size());
  CHECK(f.input_ids(0).front() == tok.specials().cls);
  CHECK(f.input_ids(0).back() == tok.specials().sep);
  CHECK((words.front() == -1 && words.back() == -1));
  ids firsts;
  for (std::size_t p = 0; p < words.size(); ++p) {
    const bool first = words[p] >= 0 && words[p] != words[p - 1];
    CHECK(labels[p] == (first ? e.labels[static_cast<std::size_t>(words[p])] : X));
    if (first) firsts.push_back(words[p]);
  }
  CHECK(firsts == ids{0, 1, 2});
  CHECK(words.size() > 5);  // the words are cut into pieces
}

TEST_CASE("token classification features do not depend on the number of threads and truncate keeps the first") {
  std::vector<token_classification_example> examples;
  for (int e = 0; e < 300; ++e) {
    token_classification_example x{std::to_string(e), {}, {}};
    for (int w = 0; w <= e % 7; ++w) {
      x.words.push_back(w % 2 ? "washington" : "newyork");
      x.labels.push_back(w % 4);
    }
    examples.push_back(x);
  }
  const auto many = make(examples, options(12, true));
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  auto single = make(examples, options(12, true));
  REQUIRE(many.size() == single.size());
  for (std::size_t i = 0; i < many.size(); ++i) {
    CHECK(vec(many.input_ids(i)) == vec(single.input_ids(i)));
    CHECK(vec(many.labels(i)) == vec(single.labels(i)));
  }
  const std::size_t bytes = single.memory_bytes();
  CHECK(bytes >= single.size() * 4);
  single.truncate(10);
  CHECK(single.size() == 10);
  CHECK(vec(single.labels(9)) == vec(many.labels(9)));
  CHECK_THROWS(single.length(10));
}

}  // namespace token_classification_features_test
