// Tests for include/cputrain/data/squad_reader.hpp: the three layouts (official nested, Hugging Face flat, JSON
// Lines) read into one squad_dataset with each context stored once, questions left-stripped as run_qa.py strips
// them and answer_start counted in code points; every kind of broken file and record refused with a message
// naming the file, the record and the field — or, under bad_record_policy::skip, counted and left out while the
// good records are kept; file-level problems refused whatever the policy; truncated and corrupted files never
// ending in anything but data_error; and the conformance files (Hugging Face's sample.json and its nested
// dev-v2.0.json twin) when CPUTRAIN_TEST_DATA_DIR points at them.
#include <catch2/catch.hpp>

#include "support/conformance_data.hpp"

#include "support/temp_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/data/squad_reader.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace squad_reader_test {

namespace fs = std::filesystem;
using cputrain::test::conformance_file;
using cputrain::test::conformance_files;
using Catch::Matchers::Contains;
using cputrain::data::bad_record_policy;
using cputrain::data::data_error;
using cputrain::data::parse_squad;
using cputrain::data::read_squad;
using cputrain::data::squad_answer;
using cputrain::data::squad_dataset;
using cputrain::data::squad_format;
using cputrain::data::squad_read_options;

namespace {

const squad_read_options skip{bad_record_policy::skip};

/// The message parse_squad throws for `text`, or a marker that fails every Contains check below.
std::string error_of(std::string_view text, const squad_read_options& options = {},
                     const std::string& source = "fixture.json") {
  try {
    (void)parse_squad(text, source, options);
  } catch (const data_error& e) {
    return e.what();
  }
  return "<parse_squad did not throw>";
}

std::vector<std::string> ids_of(const squad_dataset& d) {
  std::vector<std::string> ids;
  for (const auto& e : d.examples) ids.push_back(e.id);
  return ids;
}

/// A Hugging Face flat file around the given records (JSON text).
std::string flat_file(const std::vector<std::string>& records) {
  std::string text = "{\"version\": 2.0, \"data\": [\n";
  for (std::size_t i = 0; i < records.size(); ++i) text += (i > 0 ? ",\n" : "") + records[i];
  return text + "\n]}";
}

const std::string good_q1 =
    R"({"id": "q1", "question": "Where?", "context": "It is in Paris.", )"
    R"("answers": {"text": ["Paris"], "answer_start": [9]}})";
const std::string good_q3 =
    R"({"id": "q3", "question": "What?", "context": "A cat sat.", "answers": {"text": ["cat"], "answer_start": [2]}})";

const std::vector<std::string> sample_ids = {
    "56ddde6b9a695914005b9628", "56ddde6b9a695914005b9629", "56ddde6b9a695914005b962a", "5ad39d53604f3c001a3fe8d3",
    "5ad39d53604f3c001a3fe8d4", "56dddf4066d3e219004dad5f", "5ad3a266604f3c001a3fea2b", "56e16182e3433e1400422e28",
    "5ad5316b5b96ef001a10ab76", "56e16839cd28a01900c67887", "56e16839cd28a01900c67888", "56e16839cd28a01900c67889",
    "5ad532575b96ef001a10ab7f", "5ad532575b96ef001a10ab80"};
const std::set<std::string> sample_unanswerable = {"5ad39d53604f3c001a3fe8d3", "5ad39d53604f3c001a3fe8d4",
                                                   "5ad3a266604f3c001a3fea2b", "5ad5316b5b96ef001a10ab76",
                                                   "5ad532575b96ef001a10ab7f", "5ad532575b96ef001a10ab80"};

}  // namespace

TEST_CASE("parse_squad reads the Hugging Face flat format, storing a context shared by records once") {
  // Record q2 repeats q1's context (as flat files do); its question starts with a no-break space, a tab and
  // spaces, which run_qa.py's str.lstrip() removes; the third context starts with a space, which stays.
  const std::string text = R"({"version": 2.0, "data": [
    {"id": "q1", "title": "Capitals", "question": "Where is it?", "context": "It is in Paris, in France.",
     "answers": {"text": ["Paris", "in Paris"], "answer_start": [9, 6]}},
    {"id": "q2", "question": "\u00a0\t  Which country? ", "context": "It is in Paris, in France.",
     "answers": {"text": ["France"], "answer_start": [19]}},
    {"id": "q3", "question": "Who?", "context": " Nobody here.", "answers": {"text": [], "answer_start": []}}]})";
  const squad_dataset d = parse_squad(text, "flat.json");
  CHECK(d.format == squad_format::flat);
  CHECK(d.version == "2.0");
  CHECK(d.skipped == 0);
  CHECK(d.problems.empty());
  REQUIRE(ids_of(d) == std::vector<std::string>{"q1", "q2", "q3"});
  REQUIRE(d.contexts == std::vector<std::string>{"It is in Paris, in France.", " Nobody here."});
  CHECK(d.examples[0].context_index == 0);
  CHECK(d.examples[1].context_index == 0);
  CHECK(d.examples[2].context_index == 1);
  CHECK(d.context(d.examples[2]) == " Nobody here.");
  CHECK(d.examples[0].title == "Capitals");
  CHECK(d.examples[1].title.empty());
  CHECK(d.examples[0].question == "Where is it?");
  CHECK(d.examples[1].question == "Which country? ");  // left-stripped only
  CHECK(d.examples[0].answers == std::vector<squad_answer>{{"Paris", 9}, {"in Paris", 6}});
  CHECK(d.examples[1].answers == std::vector<squad_answer>{{"France", 19}});
  CHECK(d.examples[2].answers.empty());
  CHECK(d.examples[2].is_impossible());
  CHECK_FALSE(d.examples[0].is_impossible());
  CHECK(d.has_unanswerable());
  CHECK(d.examples[0].plausible_answers.empty());
}

TEST_CASE("parse_squad reads the official nested format with titles, is_impossible and plausible answers") {
  // Two paragraphs with the same text (one stored context), a v1.1-style question without is_impossible, and
  // a v2.0 unanswerable question with a plausible answer.
  const std::string text = R"({"version": "v2.0", "data": [
    {"title": "Normans", "paragraphs": [
      {"context": "Normandy is in France.", "qas": [
        {"id": "a", "question": "  Where is Normandy?", "answers": [{"text": "France", "answer_start": 15}],
         "is_impossible": false},
        {"id": "b", "question": "Where is Rome?", "answers": [], "is_impossible": true,
         "plausible_answers": [{"text": "Normandy", "answer_start": 0}]}]},
      {"context": "Normandy is in France.", "qas": [
        {"id": "c", "question": "What is in France?", "answers": [{"text": "Normandy", "answer_start": 0}]}]}]},
    {"title": "Empty", "paragraphs": []},
    {"title": "Cats", "paragraphs": [
      {"context": "A cat sat on a mat.", "qas": [
        {"id": "d", "question": "Who sat?", "answers": [{"text": "A cat", "answer_start": 0},
                                                       {"text": "cat", "answer_start": 2}]}]}]}]})";
  const squad_dataset d = parse_squad(text, "dev.json");
  CHECK(d.format == squad_format::nested);
  CHECK(d.version == "v2.0");
  REQUIRE(ids_of(d) == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(d.contexts == std::vector<std::string>{"Normandy is in France.", "A cat sat on a mat."});
  CHECK(d.examples[2].context_index == 0);
  CHECK(d.examples[3].context_index == 1);
  CHECK(d.examples[0].title == "Normans");
  CHECK(d.examples[3].title == "Cats");
  CHECK(d.examples[0].question == "Where is Normandy?");
  CHECK(d.examples[0].answers == std::vector<squad_answer>{{"France", 15}});
  CHECK(d.examples[1].is_impossible());
  CHECK(d.examples[1].plausible_answers == std::vector<squad_answer>{{"Normandy", 0}});
  CHECK(d.examples[3].answers == std::vector<squad_answer>{{"A cat", 0}, {"cat", 2}});
  CHECK(d.has_unanswerable());

  // v1.1 declares its version as a string too; a number is kept as Python would print it.
  CHECK(parse_squad(R"({"version": "1.1", "data": []})", "x").version == "1.1");
  CHECK(parse_squad(R"({"version": 1.1, "data": []})", "x").version == "1.1");
  CHECK(parse_squad(R"({"data": []})", "x").version.empty());
  CHECK_FALSE(parse_squad(R"({"data": []})", "x").has_unanswerable());
}

TEST_CASE("answer_start counts Unicode code points, not bytes, in a UTF-8 context") {
  // "Café über 東京 — answer here": é, ü take 2 bytes, 東, 京 and the em dash 3, so "answer" starts at code point
  // 15 but byte 23.
  const auto file = [](int start, const char* answer = "answer") {
    return flat_file({std::string(R"({"id": "u1", "question": "Which word?", )") +
                      R"("context": "Café über 東京 — answer here", "answers": {"text": [")" + answer +
                      R"("], "answer_start": [)" + std::to_string(start) + "]}}"});
  };
  const squad_dataset d = parse_squad(file(15), "utf8.json");
  REQUIRE(d.examples.size() == 1);
  CHECK(d.examples[0].answers == std::vector<squad_answer>{{"answer", 15}});
  CHECK(d.contexts[0] == "Café über 東京 — answer here");
  CHECK(parse_squad(file(10, "東京"), "utf8.json").examples[0].answers[0].answer_start == 10);
  CHECK(parse_squad(file(3, "é"), "utf8.json").examples[0].answers[0].text == "é");

  const std::string off_by_one = error_of(file(16), {}, "utf8.json");
  CHECK_THAT(off_by_one, Contains("utf8.json: record \"u1\" (data[0]): field \"answers.text[0]\""));
  CHECK_THAT(off_by_one, Contains("\"answer\" is not in the context at answer_start 16, which has \"nswer \" there"));
  CHECK_THAT(error_of(file(14), {}, "utf8.json"), Contains("which has \" answe\" there"));
  // The byte offset is what a reader counting bytes would have written; it points into "here".
  CHECK_THAT(error_of(file(23), {}, "utf8.json"), Contains("at answer_start 23, which has \"ere\" there"));
  // 26 code points (35 bytes): 26 is past the end, 25 is the last character.
  CHECK_THAT(error_of(file(26, "e"), {}, "utf8.json"),
             Contains("field \"answers.answer_start[0]\": 26 is outside the context (26 characters)"));
  CHECK(parse_squad(file(25, "e"), "utf8.json").examples[0].answers[0].answer_start == 25);
}

TEST_CASE("parse_squad reads JSON Lines: one flat record per line, blank lines and CRLF allowed") {
  const std::string text = good_q1 + "\r\n\r\n" + good_q3 + "\r\n  \n" +
                           R"({"id": "q4", "question": "When?", "context": "It is in Paris.", )"
                           R"("answers": {"text": [], "answer_start": []}})" +
                           "\n";
  const squad_dataset d = parse_squad(text, "train.jsonl");
  CHECK(d.format == squad_format::json_lines);
  CHECK(d.version.empty());
  CHECK(ids_of(d) == std::vector<std::string>{"q1", "q3", "q4"});
  CHECK(d.contexts == std::vector<std::string>{"It is in Paris.", "A cat sat."});
  CHECK(d.examples[2].context_index == 0);
  CHECK(d.examples[1].answers == std::vector<squad_answer>{{"cat", 2}});

  // A file of one line is one JSON document, and still one record.
  const squad_dataset one = parse_squad(good_q3 + "\n", "one.jsonl");
  CHECK(one.format == squad_format::json_lines);
  CHECK(ids_of(one) == std::vector<std::string>{"q3"});
}

TEST_CASE("JSON Lines with bad lines in the middle: refused at the first, or skipped line by line") {
  const std::string text = good_q1 + "\n" +                                          // line 1
                           R"({"id": "q2", "question": "Cut off?", "context": )" + "\n" +  // line 2: not JSON
                           good_q3 + "\n" +                                          // line 3
                           "[1, 2]\n" +                                              // line 4: not an object
                           "{\"id\": \"q5\", \"question\": \"Bad \xff byte\"}\n" +        // line 5: invalid UTF-8
                           R"({"id": "q6", "question": "Why?", "context": "For fun.", )"
                           R"("answers": {"text": ["fun"], "answer_start": [4]}})";
  const std::string refused = error_of(text, {}, "train.jsonl");
  CHECK_THAT(refused, Contains("train.jsonl: record line 2: not valid JSON at column"));
  CHECK_THAT(refused, Contains("unexpected end of input"));

  const squad_dataset d = parse_squad(text, "train.jsonl", skip);
  CHECK(ids_of(d) == std::vector<std::string>{"q1", "q3", "q6"});
  CHECK(d.skipped == 3);
  REQUIRE(d.problems.size() == 3);
  CHECK(d.problems[0] == refused);
  CHECK_THAT(d.problems[1], Contains("train.jsonl: record line 4: is a list, not an object"));
  CHECK_THAT(d.problems[2], Contains("train.jsonl: record line 5: invalid UTF-8 at column 31 (byte offset 314)"));
  CHECK(d.contexts == std::vector<std::string>{"It is in Paris.", "A cat sat.", "For fun."});
}

TEST_CASE("file-level problems are refused with the file's name whatever the policy") {
  struct bad_file {
    std::string text;
    std::vector<std::string> says;
  };
  const std::vector<bad_file> cases = {
      {"{\n  \"data\": [\n    {\"id\": \"q1\",,}\n  ]\n}",
       {"not valid JSON at line 3, column 17 (byte offset 30)", "syntax error"}},
      {"{\"data\": [", {"not valid JSON at line 1, column 11", "unexpected end of input"}},
      {"", {"not valid JSON at line 1, column 1"}},
      {"{\"data\": []} {\"data\": []}", {"not valid JSON at line 1, column 14", "expected end of input"}},
      {"{\"data\": [], \"x\": 1e999}", {"not valid JSON", "number overflow"}},
      {std::string("{\"data\": []}\0{", 14), {"not valid JSON at line 1, column 13 (byte offset 12)", "NUL byte"}},
      {"{\n  \"data\": [\n    {\"id\": \"caf\xc3\xa9\", \"question\": \"\xe2\x82\"}]}",
       {"invalid UTF-8 at line 3, column 34 (byte offset 47)"}},
      {"{\"data\": [{\"id\": \"\xed\xa0\x80\"}]}", {"invalid UTF-8 at line 1, column 19"}},  // an encoded surrogate
      {"[{\"id\": \"q1\"}]", {"the top level is a list, not an object with a \"data\" list"}},
      {"\"data\"", {"the top level is a string (\"data\")"}},
      {"{\"version\": \"1.1\"}", {"the top level has no \"data\" member"}},
      {"{\"data\": {\"q1\": {}}}", {"field \"data\" is an object, not a list of articles or records"}},
      {"{\"data\": \"[]\"}", {"field \"data\" is a string (\"[]\"), not a list"}},
      {"{\"version\": [2], \"data\": []}", {"field \"version\" is a list, not a string or a number"}},
  };
  for (const bad_file& c : cases) {
    INFO(c.text);
    for (const auto& options : {squad_read_options{}, skip}) {
      const std::string message = error_of(c.text, options, "bad.json");
      CHECK(message.rfind("bad.json: ", 0) == 0);
      for (const std::string& s : c.says) CHECK_THAT(message, Contains(s));
    }
  }
}

TEST_CASE("each bad flat record is refused naming the file, the record id and the field, or skipped alone") {
  struct bad_record {
    std::string record;  // becomes data[1], between two good records
    std::string says;    // after "fixture.json: record "
  };
  const std::string ctx = R"("context": "It is in Paris.")";
  const std::string q = R"("question": "Where?")";
  const std::string ans = R"("answers": {"text": ["Paris"], "answer_start": [9]})";
  const std::vector<bad_record> cases = {
      {"[\"q2\"]", "data[1]: is a list, not an object"},
      {"{" + q + ", " + ctx + ", " + ans + "}", "data[1]: field \"id\": is missing"},
      {"{\"id\": 2, " + q + ", " + ctx + ", " + ans + "}", "data[1]: field \"id\": is an integer (2), not a string"},
      {"{\"id\": \"\", " + q + ", " + ctx + ", " + ans + "}", "data[1]: field \"id\": is empty"},
      {"{\"id\": \"q2\", " + ctx + ", " + ans + "}", "\"q2\" (data[1]): field \"question\": is missing"},
      {"{\"id\": \"q2\", \"question\": null, " + ctx + ", " + ans + "}",
       "\"q2\" (data[1]): field \"question\": is null, not a string"},
      {"{\"id\": \"q2\", \"question\": \"\", " + ctx + ", " + ans + "}",
       "\"q2\" (data[1]): field \"question\": is empty"},
      {"{\"id\": \"q2\", \"question\": \" \\u3000\\n\", " + ctx + ", " + ans + "}",
       "\"q2\" (data[1]): field \"question\": is only whitespace"},
      {"{\"id\": \"q2\", " + q + ", " + ans + "}", "\"q2\" (data[1]): field \"context\": is missing"},
      {"{\"id\": \"q2\", " + q + ", \"context\": \"\", \"answers\": {\"text\": [], \"answer_start\": []}}",
       "\"q2\" (data[1]): field \"context\": is empty"},
      {"{\"id\": \"q2\", " + q + ", \"context\": [\"It\"], " + ans + "}",
       "\"q2\" (data[1]): field \"context\": is a list, not a string"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + "}", "\"q2\" (data[1]): field \"answers\": is missing"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": [{\"text\": \"Paris\", \"answer_start\": 9}]}",
       "\"q2\" (data[1]): field \"answers\": is a list, not an object of two lists"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"answer_start\": [9]}}",
       "\"q2\" (data[1]): field \"answers.text\": is missing"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": [\"Paris\"]}}",
       "\"q2\" (data[1]): field \"answers.answer_start\": is missing"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": \"Paris\", \"answer_start\": [9]}}",
       "\"q2\" (data[1]): field \"answers.text\": is a string (\"Paris\"), not a list"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": [\"Paris\"], \"answer_start\": [\"9\"]}}",
       "\"q2\" (data[1]): field \"answers.answer_start[0]\": is a string (\"9\"), not an integer"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": [\"Paris\"], \"answer_start\": [9.0]}}",
       "\"q2\" (data[1]): field \"answers.answer_start[0]\": is a non-integer number (9.0), not an integer"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": [5], \"answer_start\": [9]}}",
       "\"q2\" (data[1]): field \"answers.text[0]\": is an integer (5), not a string"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": [\"Paris\", \"in\"], \"answer_start\": [9]}}",
       "\"q2\" (data[1]): field \"answers\": \"text\" has 2 entries but \"answer_start\" has 1"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": [\"Paris\"], \"answer_start\": [-9]}}",
       "\"q2\" (data[1]): field \"answers.answer_start[0]\": -9 is negative"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": [\"Paris\"], \"answer_start\": [912]}}",
       "\"q2\" (data[1]): field \"answers.answer_start[0]\": 912 is outside the context (15 characters)"},
      {"{\"id\": \"q2\", " + q + ", " + ctx +
           ", \"answers\": {\"text\": [\"Paris\"], \"answer_start\": [99999999999999999999]}}",
       "\"q2\" (data[1]): field \"answers.answer_start[0]\": is a non-integer number"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": [\"Paris\"], \"answer_start\": [8]}}",
       "\"q2\" (data[1]): field \"answers.text[0]\": \"Paris\" is not in the context at answer_start 8, which has "
       "\" Pari\" there"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": [\"paris\"], \"answer_start\": [9]}}",
       "\"q2\" (data[1]): field \"answers.text[0]\": \"paris\" is not in the context at answer_start 9"},
      {"{\"id\": \"q2\", " + q + ", " + ctx + ", \"answers\": {\"text\": [\"\"], \"answer_start\": [0]}}",
       "\"q2\" (data[1]): field \"answers.text[0]\": is empty"},
      {"{\"id\": \"q2\", \"title\": 7, " + q + ", " + ctx + ", " + ans + "}",
       "\"q2\" (data[1]): field \"title\": is an integer (7), not a string"},
      {"{\"id\": \"q1\", " + q + ", " + ctx + ", " + ans + "}",
       "\"q1\" (data[1]): field \"id\": is also the id of an earlier record (data[0])"},
  };
  for (const bad_record& c : cases) {
    INFO(c.record);
    const std::string text = flat_file({good_q1, c.record, good_q3});
    const std::string refused = error_of(text);
    CHECK_THAT(refused, Contains("fixture.json: record " + c.says));

    const squad_dataset d = parse_squad(text, "fixture.json", skip);
    CHECK(ids_of(d) == std::vector<std::string>{"q1", "q3"});
    CHECK(d.skipped == 1);
    CHECK(d.problems == std::vector<std::string>{refused});
    // A skipped record's context is not stored.
    CHECK(d.contexts == std::vector<std::string>{"It is in Paris.", "A cat sat."});
  }
}

TEST_CASE("bad nested records name their place: question, paragraph or article, and skip only that") {
  const auto nested = [](const std::string& second_question, const std::string& extra_paragraph = "",
                         const std::string& extra_article = "") {
    return R"({"version": "v2.0", "data": [{"title": "T", "paragraphs": [{"context": "Normandy is in France.", "qas": [
      {"id": "a", "question": "Where?", "answers": [{"text": "France", "answer_start": 15}]},)" +
           second_question + "]}" + extra_paragraph + "]}" + extra_article + "]}";
  };
  const std::string ok = R"({"id": "b", "question": "What?", "answers": [{"text": "Normandy", "answer_start": 0}]})";

  // The message of the format's own example, in full.
  CHECK(error_of(nested(R"({"id": "b", "question": "What?", "answers": [{"text": "France", "answer_start": 912}]})")) ==
        "fixture.json: record \"b\" (data[0].paragraphs[0].qas[1]): field \"answers[0].answer_start\": 912 is "
        "outside the context (22 characters)");

  struct bad_question {
    std::string question;
    std::string says;
  };
  const std::string where = "fixture.json: record \"b\" (data[0].paragraphs[0].qas[1]): ";
  const std::vector<bad_question> questions = {
      {R"({"id": "b", "question": "What?", "answers": [{"text": "France", "answer_start": 15}],
           "is_impossible": true})",
       where + "field \"is_impossible\": is true, but the question has 1 answer"},
      {R"({"id": "b", "question": "What?", "answers": [], "is_impossible": false})",
       where + "field \"answers\": is empty, but is_impossible is false"},
      {R"({"id": "b", "question": "What?", "answers": [], "is_impossible": "yes"})",
       where + "field \"is_impossible\": is a string (\"yes\"), not true or false"},
      {R"({"id": "b", "question": "What?", "answers": {"text": ["France"], "answer_start": [15]}})",
       where + "field \"answers\": is an object, not a list"},
      {R"({"id": "b", "question": "What?", "answers": ["France"]})",
       where + "field \"answers[0]\": is a string (\"France\"), not an object"},
      {R"({"id": "b", "question": "What?", "answers": [{"text": "France"}]})",
       where + "field \"answers[0].answer_start\": is missing"},
      {R"({"id": "b", "question": "What?", "answers": [{"text": "France", "answer_start": "15"}]})",
       where + "field \"answers[0].answer_start\": is a string (\"15\"), not an integer"},
      {R"({"id": "b", "question": "What?", "answers": [{"text": "France", "answer_start": 14}]})",
       where + "field \"answers[0].text\": \"France\" is not in the context at answer_start 14"},
      {R"({"id": "b", "question": "What?", "answers": [], "is_impossible": true,
           "plausible_answers": [{"text": "Rome", "answer_start": 0}]})",
       where + "field \"plausible_answers[0].text\": \"Rome\" is not in the context at answer_start 0"},
      {R"({"id": "a", "question": "What?", "answers": [{"text": "France", "answer_start": 15}]})",
       "fixture.json: record \"a\" (data[0].paragraphs[0].qas[1]): field \"id\": is also the id of an earlier "
       "record (data[0].paragraphs[0].qas[0])"},
      {R"("b")", "fixture.json: record data[0].paragraphs[0].qas[1]: is a string (\"b\"), not an object"},
  };
  for (const bad_question& c : questions) {
    INFO(c.question);
    const std::string text = nested(c.question);
    const std::string refused = error_of(text);
    CHECK_THAT(refused, Contains(c.says));
    const squad_dataset d = parse_squad(text, "fixture.json", skip);
    CHECK(ids_of(d) == std::vector<std::string>{"a"});
    CHECK(d.skipped == 1);
    CHECK(d.problems == std::vector<std::string>{refused});
  }

  // A broken paragraph costs its questions (one problem); the other paragraphs and articles are kept, and the
  // broken paragraph's context is not stored.
  const std::string bad_paragraph = nested(ok, R"(, {"qas": [{"id": "c", "question": "Lost?", "answers": []}]},
    {"context": "Kept.", "qas": [
      {"id": "d", "question": "Kept?", "answers": [{"text": "Kept", "answer_start": 0}]}]})");
  CHECK(error_of(bad_paragraph) == "fixture.json: record data[0].paragraphs[1]: field \"context\": is missing");
  squad_dataset d = parse_squad(bad_paragraph, "fixture.json", skip);
  CHECK(ids_of(d) == std::vector<std::string>{"a", "b", "d"});
  CHECK(d.skipped == 1);
  CHECK(d.contexts == std::vector<std::string>{"Normandy is in France.", "Kept."});

  const std::string bad_article = nested(ok, "", R"(, {"title": "No paragraphs"}, {"title": 3, "paragraphs": []},
    {"title": "Kept", "paragraphs": [
      {"context": "Kept.", "qas": [{"id": "e", "question": "Kept?", "answers": []}]}]})");
  CHECK(error_of(bad_article) == "fixture.json: record data[1]: field \"paragraphs\": is missing");
  d = parse_squad(bad_article, "fixture.json", skip);
  CHECK(ids_of(d) == std::vector<std::string>{"a", "b", "e"});
  CHECK(d.skipped == 2);
  REQUIRE(d.problems.size() == 2);
  CHECK(d.problems[1] == "fixture.json: record data[2]: field \"title\": is an integer (3), not a string");
  CHECK(d.examples[2].title == "Kept");

  // A paragraph whose only question is bad stores no context.
  d = parse_squad(nested(ok, R"(, {"context": "Unused.", "qas": [{"id": "f", "question": "", "answers": []}]})"),
                  "fixture.json", skip);
  CHECK(ids_of(d) == std::vector<std::string>{"a", "b"});
  CHECK(d.contexts == std::vector<std::string>{"Normandy is in France."});
}

TEST_CASE("an id kept once wins over later duplicates, and a skipped record does not claim its id") {
  const std::string none = R"("context": "Other.", "answers": {"text": [], "answer_start": []}})";
  const std::string dup = R"({"id": "q1", "question": "Again?", )" + none;
  const std::string bad_q7 = R"({"id": "q7", "question": "", )" + none;
  const std::string good_q7 = R"({"id": "q7", "question": "Now?", )" + none;
  const std::string text = flat_file({good_q1, bad_q7, dup, good_q7, dup});
  CHECK_THAT(error_of(text), Contains("fixture.json: record \"q7\" (data[1]): field \"question\": is empty"));
  const squad_dataset d = parse_squad(text, "fixture.json", skip);
  CHECK(ids_of(d) == std::vector<std::string>{"q1", "q7"});
  CHECK(d.examples[0].question == "Where?");
  CHECK(d.skipped == 3);
  REQUIRE(d.problems.size() == 3);
  CHECK_THAT(d.problems[2],
             Contains("record \"q1\" (data[4]): field \"id\": is also the id of an earlier record (data[0])"));
}

TEST_CASE("truncated and corrupted files end in a dataset or a data_error, never anything else") {
  const std::string valid = R"({"version": "v2.0", "data": [{"title": "Ca\u00ef", "paragraphs": [
    {"context": "Café über 東京 — answer here",
    "qas": [{"id": "x", "question": "Which?", "answers": [{"text": "answer", "answer_start": 15}]},
            {"id": "y", "question": "None?", "answers": [], "is_impossible": true}]}]}]})";
  REQUIRE(parse_squad(valid, "v.json").examples.size() == 2);
  std::size_t refused = 0;
  for (std::size_t n = 0; n < valid.size(); ++n) {
    const std::string cut = valid.substr(0, n);
    for (const auto& options : {squad_read_options{}, skip}) {
      try {
        (void)parse_squad(cut, "v.json", options);
      } catch (const data_error& e) {
        ++refused;
        CHECK(std::string_view(e.what()).substr(0, 8) == "v.json: ");
      }
    }
  }
  CHECK(refused == 2 * valid.size());  // no proper prefix of a JSON object is JSON
  for (std::size_t i = 0; i < valid.size(); ++i) {
    for (const unsigned char flip : {0x01u, 0x20u, 0x80u, 0xffu}) {
      std::string corrupt = valid;
      corrupt[i] = static_cast<char>(static_cast<unsigned char>(corrupt[i]) ^ flip);
      try {
        const squad_dataset d = parse_squad(corrupt, "v.json", skip);
        CHECK(d.examples.size() + d.skipped >= 1);
      } catch (const data_error&) {
      }
    }
  }
  // Deep nesting is refused, not recursed into.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_THAT(error_of(deep), Contains("the top level is a list"));
}

TEST_CASE("read_squad reads a file and names it in every message") {
  cputrain::test::temp_dir dir;
  const fs::path path = dir.path() / "train.json";
  std::ofstream(path, std::ios::binary) << flat_file({good_q1, good_q3});
  const squad_dataset d = read_squad(path);
  CHECK(ids_of(d) == std::vector<std::string>{"q1", "q3"});

  std::ofstream(path, std::ios::binary | std::ios::trunc) << flat_file({good_q1, good_q1});
  CHECK_THROWS_WITH(read_squad(path), Contains(path.string() + ": record \"q1\" (data[1]): field \"id\""));
  CHECK(read_squad(path, skip).skipped == 1);

  CHECK_THROWS_WITH(read_squad(dir.path() / "missing.json"),
                    Contains((dir.path() / "missing.json").string() + ": cannot open: No such file or directory"));
  CHECK_THROWS_WITH(read_squad(dir.path()), Contains(dir.path().string() + ": is a directory"));
  // data_error is a cputrain::error, so programs can map it to their exit code.
  CHECK_THROWS_AS(read_squad(dir.path()), cputrain::error);
}

TEST_CASE("conformance: Hugging Face's sample.json in the flat format") {
  const auto path = conformance_file("squad/sample.json");
  if (!path) return;  // reported skipped, naming what is missing
  const squad_dataset d = read_squad(*path);
  CHECK(d.format == squad_format::flat);
  CHECK(d.version == "2.0");
  CHECK(d.skipped == 0);
  REQUIRE(ids_of(d) == sample_ids);
  CHECK(d.contexts.size() == 4);
  CHECK(d.examples[0].question == "In what country is Normandy located?");
  CHECK(d.examples[0].answers == std::vector<squad_answer>(4, squad_answer{"France", 159}));
  CHECK(d.examples[1].answers[1] == squad_answer{"in the 10th and 11th centuries", 87});
  CHECK(d.examples[5].answers[0] == squad_answer{"William the Conqueror", 1022});
  CHECK(d.context(d.examples[0]).substr(159, 6) == "France");
  CHECK(d.context(d.examples[0]).size() == 742);
  CHECK(d.context(d.examples[5]).size() == 1427);
  CHECK(d.examples[13].context_index == 3);
  for (const auto& e : d.examples) {
    INFO(e.id);
    CHECK(e.is_impossible() == (sample_unanswerable.count(e.id) == 1));
    if (!e.is_impossible()) {
      CHECK(e.answers.size() >= 3);
      CHECK(e.answers.size() <= 4);
      for (const auto& a : e.answers) CHECK(d.context(e).substr(a.answer_start, a.text.size()) == a.text);
    }
    CHECK(e.title.empty());
    CHECK(e.plausible_answers.empty());
  }
}

TEST_CASE("conformance: the same questions in the official nested dev-v2.0.json") {
  const auto files = conformance_files({"squad/dev-v2.0.json", "squad/sample.json"});
  if (!files) return;  // reported skipped, naming what is missing
  const auto& [path, flat_path] = *files;
  const squad_dataset d = read_squad(path);
  const squad_dataset flat = read_squad(flat_path);
  CHECK(d.format == squad_format::nested);
  CHECK(d.version == "v2.0");
  REQUIRE(ids_of(d) == sample_ids);
  CHECK(d.contexts == flat.contexts);
  CHECK(d.examples[0].title == "Normans");
  CHECK(d.examples[13].title == "Computational_complexity_theory");
  CHECK(d.examples[3].plausible_answers == std::vector<squad_answer>{{"Rollo", 308}});
  CHECK(d.examples[12].plausible_answers == std::vector<squad_answer>{{"the number of gates in a circuit", 436}});
  for (std::size_t i = 0; i < d.examples.size(); ++i) {
    const auto& e = d.examples[i];
    INFO(e.id);
    CHECK(e.question == flat.examples[i].question);
    CHECK(e.context_index == flat.examples[i].context_index);
    CHECK(e.is_impossible() == (sample_unanswerable.count(e.id) == 1));
    CHECK(e.plausible_answers.empty() == !e.is_impossible());
    if (!e.is_impossible()) {
      REQUIRE(e.answers.size() == 1);
      CHECK(e.answers[0] == flat.examples[i].answers[0]);
    }
  }
}

TEST_CASE("files with nothing in them: blank, empty, no records, or every JSON Lines record broken") {
  // Blank and empty files are refused as the broken files they are, under either policy. A well-formed file
  // without records is an empty dataset (the program decides whether that is enough). JSON Lines whose every
  // record is broken are refused at line 1, or, skipped, leave an empty dataset that still says why.
  for (const auto& options : {squad_read_options{}, skip}) {
    for (const std::string text : {"", " \n\t\r\n", "\xef\xbb\xbf"}) {
      INFO("[" << text << "]");
      CHECK_THAT(error_of(text, options, "blank.json"), Contains("blank.json: not valid JSON"));
    }
    const squad_dataset none = parse_squad(R"({"version": "v2.0", "data": []})", "none.json", options);
    CHECK(none.examples.empty());
    CHECK(none.skipped == 0);
  }
  const std::string all_bad = R"({"id": "q1", "question": "Where?"})" "\n" R"({"id": "q2", "context": "x", )" "\n";
  CHECK(error_of(all_bad, {}, "bad.jsonl") == "bad.jsonl: record \"q1\" (line 1): field \"context\": is missing");
  const squad_dataset d = parse_squad(all_bad, "bad.jsonl", skip);
  CHECK(d.examples.empty());
  CHECK(d.contexts.empty());
  CHECK(d.skipped == 2);
  REQUIRE(d.problems.size() == 2);
  CHECK_THAT(d.problems[1], Contains("bad.jsonl: record line 2: not valid JSON"));

  cputrain::test::temp_dir dir;
  const fs::path empty = dir.path() / "empty.json";
  std::ofstream(empty, std::ios::binary).flush();
  for (const auto& options : {squad_read_options{}, skip}) {
    CHECK_THROWS_WITH(read_squad(empty, options), Contains(empty.string() + ": not valid JSON"));
  }
}

}  // namespace squad_reader_test
