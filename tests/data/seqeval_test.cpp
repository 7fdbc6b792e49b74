// Tests for include/cputrain/data/seqeval.hpp: get_entities on seqeval's documented example and on the IOB1,
// IOE and IOBES cases of its end_of_chunk/start_of_chunk rules; the flattening that puts an 'O' between
// sentences; seqeval() against the numbers printed in seqeval's README and docstrings and in evaluate's seqeval
// docstring, and against values worked out by hand (each says so) for per-type and overall scores, accuracy,
// the zero-division cases and types only predicted; and the inputs it refuses.
#include <catch2/catch.hpp>

#include "support/checks.hpp"

#include <string>
#include <vector>

#include "cputrain/data/data_error.hpp"
#include "cputrain/data/seqeval.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace seqeval_test {

using cputrain::data::data_error;
using cputrain::data::entity_chunk;
using cputrain::data::get_entities;
using cputrain::data::seqeval;
using cputrain::data::seqeval_result;
using cputrain::test::says;
using chunks = std::vector<entity_chunk>;
using sentences = std::vector<std::vector<std::string>>;

TEST_CASE("get_entities gives seqeval's documented chunks", "[seqeval]") {
  // seqeval's get_entities docstring: ['B-PER', 'I-PER', 'O', 'B-LOC'] -> [('PER', 0, 1), ('LOC', 3, 3)].
  CHECK(get_entities({"B-PER", "I-PER", "O", "B-LOC"}) == chunks{{"PER", 0, 1}, {"LOC", 3, 3}});
  CHECK(get_entities({}).empty());
  CHECK(get_entities({"O", "O"}).empty());
}

TEST_CASE("an I- tag after O starts a chunk as in IOB1 and a B- tag ends the one before", "[seqeval]") {
  // Worked out by hand from start_of_chunk (O then I starts) and end_of_chunk (I then B ends).
  CHECK(get_entities({"I-PER", "I-PER", "O", "I-LOC"}) == chunks{{"PER", 0, 1}, {"LOC", 3, 3}});
  CHECK(get_entities({"O", "I-PER", "B-PER", "I-PER"}) == chunks{{"PER", 1, 1}, {"PER", 2, 3}});
  CHECK(get_entities({"B-PER", "B-PER"}) == chunks{{"PER", 0, 0}, {"PER", 1, 1}});
}

TEST_CASE("a type change inside I- tags ends one chunk and starts another", "[seqeval]") {
  // Worked out by hand: the type rule of end_of_chunk and start_of_chunk fires between I-PER and I-LOC.
  CHECK(get_entities({"B-PER", "I-PER", "I-LOC", "I-LOC", "O"}) == chunks{{"PER", 0, 1}, {"LOC", 2, 3}});
  CHECK(get_entities({"B-PER", "I-LOC"}) == chunks{{"PER", 0, 0}, {"LOC", 1, 1}});
}

TEST_CASE("E- and S- tags end chunks as in IOBES and IOE", "[seqeval]") {
  // Worked out by hand: after E or S a chunk always ends; S always starts one; E after O, E or S starts one.
  CHECK(get_entities({"S-PER", "B-LOC", "I-LOC", "E-LOC", "S-ORG", "O"}) ==
        chunks{{"PER", 0, 0}, {"LOC", 1, 3}, {"ORG", 4, 4}});
  CHECK(get_entities({"I-PER", "E-PER", "E-PER", "O", "E-LOC"}) ==
        chunks{{"PER", 0, 1}, {"PER", 2, 2}, {"LOC", 4, 4}});
  CHECK(get_entities({"S-PER", "I-PER"}) == chunks{{"PER", 0, 0}, {"PER", 1, 1}});
}

TEST_CASE("tags are cut as seqeval cuts them: first character then the type", "[seqeval]") {
  // Worked out by hand from get_entities' tag = chunk[0], type_ = chunk[1:].split('-', maxsplit=1)[-1] or '_'.
  CHECK(get_entities({"B", "I", "O", "B"}) == chunks{{"_", 0, 1}, {"_", 3, 3}});
  CHECK(get_entities({"BPER", "IPER"}) == chunks{{"PER", 0, 1}});  // no '-': all after the letter
  CHECK(get_entities({"B-MISC-X", "I-MISC-X"}) == chunks{{"MISC-X", 0, 1}});  // only the first '-' cuts
}

TEST_CASE("sentences are joined with an O between them as seqeval joins them", "[seqeval]") {
  // Worked out by hand: the flattened sequence is O B O B I B O | O O B O, so the second sentence starts at
  // position 7. (A docstring in a project that calls seqeval's get_entities shows the same chunks.)
  const sentences tags = {{"O", "B", "O", "B", "I", "B"}, {"O", "O", "B"}};
  CHECK(cputrain::data::detail::sentence_entities(tags, "reference") ==
        chunks{{"_", 1, 1}, {"_", 3, 4}, {"_", 5, 5}, {"_", 9, 9}});
}

TEST_CASE("an entity never runs from one sentence into the next", "[seqeval]") {
  // Worked out by hand: the references' I-PER opens a new PER chunk after the 'O' between the sentences, so the
  // references have two PER entities (one if they were joined) and the predictions match both.
  const sentences references = {{"O", "B-PER"}, {"I-PER", "O"}};
  const sentences predictions = {{"O", "B-PER"}, {"B-PER", "O"}};
  const seqeval_result r = seqeval(predictions, references);
  REQUIRE(r.by_type.count("PER") == 1);
  CHECK(r.by_type.at("PER").number == 2);
  CHECK(r.by_type.at("PER").f1 == 1.0);
  CHECK(r.overall_f1 == 1.0);
  CHECK(r.overall_accuracy == 0.75);  // I-PER against B-PER differs: 3 of 4 tags
}

TEST_CASE("seqeval's README classification_report example", "[seqeval]") {
  // seqeval's README and evaluate's seqeval docstring: MISC 0.00 0.00 0.00 support 1, PER 1.00 1.00 1.00
  // support 1, micro avg 0.50 0.50 0.50; accuracy_score 0.80; results["overall_f1"] 0.5, results["PER"]["f1"] 1.0.
  const sentences y_true = {{"O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"}, {"B-PER", "I-PER", "O"}};
  const sentences y_pred = {{"O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"}, {"B-PER", "I-PER", "O"}};
  const seqeval_result r = seqeval(y_pred, y_true);
  REQUIRE(r.by_type.size() == 2);
  REQUIRE(r.by_type.count("MISC") == 1);
  REQUIRE(r.by_type.count("PER") == 1);
  CHECK(r.by_type.at("MISC").precision == 0.0);
  CHECK(r.by_type.at("MISC").recall == 0.0);
  CHECK(r.by_type.at("MISC").f1 == 0.0);
  CHECK(r.by_type.at("MISC").number == 1);
  CHECK(r.by_type.at("PER").precision == 1.0);
  CHECK(r.by_type.at("PER").recall == 1.0);
  CHECK(r.by_type.at("PER").f1 == 1.0);
  CHECK(r.by_type.at("PER").number == 1);
  CHECK(r.overall_precision == 0.5);
  CHECK(r.overall_recall == 0.5);
  CHECK(r.overall_f1 == 0.5);
  CHECK(r.overall_accuracy == 0.8);
}

TEST_CASE("seqeval's f1_score docstring example with a partly wrong MISC", "[seqeval]") {
  // seqeval's precision_score/recall_score/f1_score docstrings: per type array([0.5, 1.]) for MISC and PER;
  // micro 0.6666666666666666 for all three (which is the double nearest 2/3).
  const sentences y_true = {{"O", "O", "B-MISC", "I-MISC", "B-MISC", "O", "O"}, {"B-PER", "I-PER", "O"}};
  const sentences y_pred = {{"O", "O", "B-MISC", "I-MISC", "B-MISC", "I-MISC", "O"}, {"B-PER", "I-PER", "O"}};
  const seqeval_result r = seqeval(y_pred, y_true);
  CHECK(r.by_type.at("MISC").precision == 0.5);
  CHECK(r.by_type.at("MISC").recall == 0.5);
  CHECK(r.by_type.at("MISC").f1 == 0.5);
  CHECK(r.by_type.at("MISC").number == 2);
  CHECK(r.by_type.at("PER").f1 == 1.0);
  CHECK(r.overall_precision == 2.0 / 3.0);
  CHECK(r.overall_recall == 2.0 / 3.0);
  CHECK(r.overall_f1 == 2.0 / 3.0);
}

TEST_CASE("precision and recall differ and a type only predicted is reported with number 0", "[seqeval]") {
  // Worked out by hand. True: PER (0, 1), LOC (4, 4). Predicted: PER (0, 0), MISC (2, 2), LOC (4, 4). Only LOC
  // is right: precision 1/3, recall 1/2, F1 2 * 1/3 * 1/2 / (5/6) = 0.4; 3 of 5 tags equal.
  const sentences references = {{"B-PER", "I-PER", "O", "O", "B-LOC"}};
  const sentences predictions = {{"B-PER", "O", "B-MISC", "O", "B-LOC"}};
  const seqeval_result r = seqeval(predictions, references);
  CHECK(r.overall_precision == 1.0 / 3.0);
  CHECK(r.overall_recall == 0.5);
  CHECK(r.overall_f1 == Approx(0.4).epsilon(1e-15));
  CHECK(r.overall_accuracy == 0.6);
  REQUIRE(r.by_type.size() == 3);
  CHECK(r.by_type.at("LOC").f1 == 1.0);
  CHECK(r.by_type.at("LOC").number == 1);
  CHECK(r.by_type.at("MISC").precision == 0.0);  // 0 right of 1 predicted
  CHECK(r.by_type.at("MISC").recall == 0.0);     // no true MISC: zero division gives 0
  CHECK(r.by_type.at("MISC").number == 0);
  CHECK(r.by_type.at("PER").precision == 0.0);
  CHECK(r.by_type.at("PER").number == 1);
}

TEST_CASE("zero divisions give 0 as evaluate's zero_division warn does", "[seqeval]") {
  // Worked out by hand from _prf_divide (0 where the denominator is 0) and the F-score (0 when p + r is 0).
  SECTION("no predicted entities") {
    const seqeval_result r = seqeval({{"O", "O"}}, {{"B-PER", "O"}});
    CHECK(r.overall_precision == 0.0);
    CHECK(r.overall_recall == 0.0);
    CHECK(r.overall_f1 == 0.0);
    CHECK(r.overall_accuracy == 0.5);
    REQUIRE(r.by_type.count("PER") == 1);
    CHECK(r.by_type.at("PER").precision == 0.0);
    CHECK(r.by_type.at("PER").f1 == 0.0);
    CHECK(r.by_type.at("PER").number == 1);
  }
  SECTION("no true entities") {
    const seqeval_result r = seqeval({{"B-LOC", "O"}}, {{"O", "O"}});
    CHECK(r.overall_precision == 0.0);
    CHECK(r.overall_recall == 0.0);
    CHECK(r.overall_f1 == 0.0);
    REQUIRE(r.by_type.count("LOC") == 1);
    CHECK(r.by_type.at("LOC").recall == 0.0);
    CHECK(r.by_type.at("LOC").number == 0);
  }
  SECTION("no entities at all") {
    const seqeval_result r = seqeval({{"O"}, {"O", "O"}}, {{"O"}, {"O", "O"}});
    CHECK(r.by_type.empty());
    CHECK(r.overall_precision == 0.0);
    CHECK(r.overall_recall == 0.0);
    CHECK(r.overall_f1 == 0.0);
    CHECK(r.overall_accuracy == 1.0);
  }
}

TEST_CASE("seqeval refuses predictions and references of different shapes naming the sentence", "[seqeval]") {
  CHECK_THROWS_MATCHES(seqeval({{"O"}}, {{"O"}, {"O"}}), data_error,
                       says("1 predicted sentences but 2 reference sentences"));
  CHECK_THROWS_MATCHES(seqeval({{"O"}, {"O", "B-PER"}}, {{"O"}, {"O"}}), data_error,
                       says("sentence 1 (from 0) has 2 predicted tags but 1 reference tags"));
  CHECK_THROWS_MATCHES(seqeval({}, {}), data_error, says("no tags"));
  CHECK_THROWS_MATCHES(seqeval({{}, {}}, {{}, {}}), data_error, says("no tags"));
  CHECK_THROWS_MATCHES(seqeval({{"O", ""}}, {{"O", "O"}}), data_error, says("sentence 0 (from 0), token 1"));
  CHECK_THROWS_MATCHES(get_entities({"B-PER", ""}), data_error, says("token 1"));
}

}  // namespace seqeval_test
