#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cputrain/data/qa_postprocess.hpp"
#include "support/checks.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace qa_postprocess_test {

using namespace cputrain;
using namespace cputrain::data;
using cputrain::test::says;

namespace {

text::bert_tokenizer letters_tokenizer() {
  return text::bert_tokenizer(text::vocabulary::parse(
      "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\nc\nd\ne\nf\ng\nh\ni\nj\nq\né\n", "letters"));
}

// "q" over "a b c d e f g h i j": three windows of 9 positions ([CLS] q [SEP] + 5 context tokens + [SEP]);
// window w holds context tokens 3w .. 3w+4 at positions 3 .. 7.
struct fixture {
  squad_dataset data;
  qa_features features;
  std::vector<float> start, end;
  static constexpr std::size_t row = 9;

  explicit fixture(std::string context = "a b c d e f g h i j") {
    data.contexts.push_back(std::move(context));
    squad_example e;
    e.id = "ex0";
    e.question = "q";
    data.examples.push_back(e);
    qa_feature_options options;
    options.max_seq_length = 9;
    options.doc_stride = 2;
    options.labels = false;
    features = make_qa_features(data, letters_tokenizer(), options);
    start.assign(features.size() * row, 0.0f);
    end.assign(features.size() * row, 0.0f);
  }
  void set(std::size_t feature, std::size_t position, float s, float e) {
    start[feature * row + position] = s;
    end[feature * row + position] = e;
  }
  qa_predictions_output run(const qa_postprocess_options& options) const {
    return postprocess_qa_predictions(data, features, start, end, row, options);
  }
};

std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("top positions are numpy's reversed argsort, later positions first among equals") {
  const std::vector<float> row{1, 3, 3, 2, -1};
  CHECK(data::detail::top_positions(row, 3) == std::vector<std::uint32_t>{2, 1, 3});
  CHECK(data::detail::top_positions(row, 9).size() == 5);
}

TEST_CASE("the best span across windows wins and positions outside the context are never answers") {
  fixture f;
  REQUIRE(f.features.size() == 3);
  f.set(1, 6, 5.0f, 0.0f);  // window 1, "g" starts
  f.set(1, 7, 0.0f, 4.0f);  // window 1, "h" ends
  f.set(0, 1, 50.0f, 50.0f);  // the question token: not in the context
  f.set(2, 8, 60.0f, 60.0f);  // the last [SEP]
  f.set(2, 3, 2.0f, 0.0f);  // window 2, "g" again, weaker
  qa_postprocess_options options;
  options.n_best_size = 3;
  const auto out = f.run(options);
  REQUIRE(out.predictions.size() == 1);
  CHECK(out.predictions[0] == std::pair<std::string, std::string>{"ex0", "g h"});
  const auto& nbest = out.nbest[0].second;
  REQUIRE(nbest.size() == 3);
  CHECK(nbest[0].text == "g h");
  CHECK(nbest[0].start_logit == 5.0f);
  CHECK(nbest[0].end_logit == 4.0f);
  double sum = 0;
  for (std::size_t i = 0; i < nbest.size(); ++i) {
    sum += nbest[i].probability;
    if (i > 0) CHECK(nbest[i].start_logit + nbest[i].end_logit <= nbest[i - 1].start_logit + nbest[i - 1].end_logit);
  }
  CHECK(sum == Approx(1.0).epsilon(1e-6));
  CHECK(nbest[0].probability > 0.9);
  CHECK(out.null_odds.empty());
}

TEST_CASE("max_answer_length and end-before-start rule spans out") {
  fixture f;
  f.set(0, 3, 9.0f, 0.0f);  // "a" starts
  f.set(0, 6, 0.0f, 9.0f);  // "d" ends: a b c d is 4 tokens
  f.set(0, 4, 0.0f, 1.0f);  // "b" ends
  qa_postprocess_options options;
  options.n_best_size = 2;
  CHECK(f.run(options).predictions[0].second == "a b c d");
  options.max_answer_length = 3;
  CHECK(f.run(options).predictions[0].second == "a b");
  f.set(0, 7, 20.0f, 0.0f);  // the strongest start ("e") comes after both strong ends: never paired with them
  options.max_answer_length = 30;
  const auto out = f.run(options);
  CHECK(out.predictions[0].second == "a b c d");
  REQUIRE(out.nbest[0].second.size() == 2);
  CHECK(out.nbest[0].second[1].text == "a b");
}

TEST_CASE("with no valid span the answer is run_qa.py's placeholder") {
  fixture f;
  qa_postprocess_options options;
  options.max_answer_length = 0;
  const auto out = f.run(options);
  CHECK(out.predictions[0].second == "empty");
  REQUIRE(out.nbest[0].second.size() == 1);
  CHECK(out.nbest[0].second[0].placeholder);
  CHECK(out.nbest[0].second[0].probability == 1.0);
}

TEST_CASE("SQuAD v2 answers nothing when the null score beats the best span by more than the threshold") {
  fixture f;
  f.set(1, 6, 3.0f, 0.0f);
  f.set(1, 7, 0.0f, 2.0f);  // best span "g h": 5
  f.set(0, 0, 4.0f, 3.0f);  // null in window 0: 7
  f.set(1, 0, 1.0f, 1.0f);  // null in window 1: 2, the smallest, so the one used
  f.set(2, 0, 5.0f, 5.0f);
  qa_postprocess_options options;
  options.version_2_with_negative = true;
  options.n_best_size = 4;
  auto out = f.run(options);
  CHECK(out.predictions[0].second == "g h");
  REQUIRE(out.null_odds.size() == 1);
  CHECK(out.null_odds[0].second == -3.0);  // 2 - 3 - 2
  bool has_null = false;
  for (const auto& c : out.nbest[0].second) has_null = has_null || c.text.empty();
  CHECK(has_null);

  f.set(1, 0, 6.0f, 2.0f);  // the smallest null is now window 0's 7: diff 7 - 5 = 2
  out = f.run(options);
  CHECK(out.null_odds[0].second == 2.0);
  CHECK(out.predictions[0].second.empty());
  options.null_score_diff_threshold = 2.5;
  CHECK(f.run(options).predictions[0].second == "g h");
}

TEST_CASE("prediction files have run_qa.py's names keys and layout") {
  fixture f("a b \xC3\xA9 d");
  f.set(0, 5, 2.0f, 1.5f);  // "é"
  qa_postprocess_options options;
  options.n_best_size = 1;
  options.version_2_with_negative = true;
  const auto out = f.run(options);
  cputrain::test::temp_dir dir;
  write_qa_predictions(out, dir.path(), "eval");
  CHECK(slurp(dir.path() / "eval_predictions.json") == "{\n    \"ex0\": \"\\u00e9\"\n}\n");
  CHECK(slurp(dir.path() / "eval_nbest_predictions.json") ==
        "{\n    \"ex0\": [\n        {\n            \"start_logit\": 2.0,\n            \"end_logit\": 1.5,\n"
        "            \"text\": \"\\u00e9\",\n            \"probability\": 0.970687747001648\n        },\n"
        "        {\n            \"start_logit\": 0.0,\n            \"end_logit\": 0.0,\n            \"text\": \"\",\n"
        "            \"probability\": 0.02931223064661026\n        }\n    ]\n}\n");
  CHECK(slurp(dir.path() / "eval_null_odds.json") == "{\n    \"ex0\": -3.5\n}\n");
  write_qa_predictions(out, dir.path());
  CHECK(std::filesystem::exists(dir.path() / "predictions.json"));
}

TEST_CASE("mismatched logits are refused") {
  fixture f;
  CHECK_THROWS_MATCHES(postprocess_qa_predictions(f.data, f.features, std::span<const float>(f.start).first(5), f.end,
                                                  fixture::row, {}),
                       usage_error, says("expected 3 rows of 9 logits, got 5 start and 27 end logits"));
}

}  // namespace qa_postprocess_test
