// Tests for include/cputrain/data/squad_writer.hpp: a dataset written and read back (read_squad checks every
// answer against its answer_start) is equal, with awkward text (multi-byte UTF-8, quotes, backslashes, control
// characters), unanswerable questions with and without plausible answers, and v1.1 files without is_impossible;
// articles and paragraphs group consecutive examples; a bad context index and a bad output path are refused
// with a message naming them.
#include <catch2/catch.hpp>

#include "support/checks.hpp"
#include "support/temp_dir.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/data/squad_reader.hpp"
#include "cputrain/data/squad_writer.hpp"
#include "cputrain/io/io_error.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace squad_writer_test {

using namespace cputrain;
using namespace cputrain::data;
using cputrain::test::says;

namespace {

/// Code points in `s` (UTF-8): answer_start counts them.
std::uint32_t code_points(std::string_view s) {
  std::uint32_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

/// `text` as an answer in `context`, found at its first occurrence.
squad_answer answer_in(std::string_view context, std::string_view text) {
  const std::size_t byte = context.find(text);
  REQUIRE(byte != std::string_view::npos);
  return squad_answer{std::string(text), code_points(context.substr(0, byte))};
}

squad_example example(std::string id, std::string title, std::string question, std::uint32_t context,
                      std::vector<squad_answer> answers, std::vector<squad_answer> plausible = {}) {
  squad_example e;
  e.id = std::move(id);
  e.title = std::move(title);
  e.question = std::move(question);
  e.context_index = context;
  e.answers = std::move(answers);
  e.plausible_answers = std::move(plausible);
  return e;
}

/// Two articles, three contexts, awkward text everywhere, and unanswerable questions.
squad_dataset awkward_v2() {
  squad_dataset d;
  d.version = "v2.0";
  const std::string unicode = "Café \"Zoë\" — 東京 😀 said: \\back\\slash\\ and a\ttab,\nnew line, \x01 control.";
  const std::string quotes = R"(He wrote "it's 'quoted' \"twice\"" and {"json": [1]}.)";
  const std::string plain = "Ünïcödé names: Ærøskøbing, Đà Nẵng and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢.";
  d.contexts = {unicode, quotes, plain};
  d.examples.push_back(example("u-1", "Tïtle \"one\"", "Where is 東京?", 0, {answer_in(unicode, "東京")}));
  d.examples.push_back(example("u-2", "Tïtle \"one\"", "What comes after 😀?", 0,
                               {answer_in(unicode, "said"), answer_in(unicode, "\\back\\slash\\")}));
  d.examples.push_back(example("u-3", "Tïtle \"one\"", "Who is \"Zoë\"'s sister?", 0, {},
                               {answer_in(unicode, "Zoë")}));
  d.examples.push_back(example("q-1", "Tïtle \"one\"", "What was quoted?", 1, {answer_in(quotes, "'quoted'")}));
  d.examples.push_back(example("q-2", "Tïtle \"one\"", "Who answered?", 1, {}));
  d.examples.push_back(example("p-1", "", "Which town has 𝔘?", 2, {answer_in(plain, "Ærøskøbing")}));
  d.examples.push_back(example("p-2", "", "Which city?", 2, {answer_in(plain, "Đà Nẵng"), answer_in(plain, "𝔘𝔫𝔦𝔠𝔬𝔡𝔢")}));
  return d;
}

void check_equal(const squad_dataset& back, const squad_dataset& d) {
  CHECK(back.version == d.version);
  CHECK(back.format == squad_format::nested);
  CHECK(back.contexts == d.contexts);
  REQUIRE(back.examples.size() == d.examples.size());
  for (std::size_t i = 0; i < d.examples.size(); ++i) {
    INFO(d.examples[i].id);
    CHECK(back.examples[i].id == d.examples[i].id);
    CHECK(back.examples[i].title == d.examples[i].title);
    CHECK(back.examples[i].question == d.examples[i].question);
    CHECK(back.examples[i].context_index == d.examples[i].context_index);
    CHECK(back.examples[i].answers == d.examples[i].answers);
    CHECK(back.examples[i].plausible_answers == d.examples[i].plausible_answers);
  }
}

}  // namespace

TEST_CASE("awkward text, unanswerable questions and plausible answers survive a round trip through a file") {
  const test::temp_dir dir;
  const squad_dataset d = awkward_v2();
  write_squad_json(d, dir.path() / "dev.json");
  // read_squad refuses an answer whose text is not at its answer_start, counted in code points.
  const squad_dataset back = read_squad(dir.path() / "dev.json");
  check_equal(back, d);
  CHECK(back.has_unanswerable());
  CHECK(back.examples[2].is_impossible());
  CHECK(back.examples[4].plausible_answers.empty());
  // The text is what squad_json_text gives, and written again it is the same bytes.
  std::ifstream in(dir.path() / "dev.json", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(bytes == squad_json_text(d));
  CHECK(squad_json_text(back) == bytes);
}

TEST_CASE("consecutive examples with one title form an article, with one context a paragraph") {
  const auto j = nlohmann::json::parse(squad_json_text(awkward_v2()));
  CHECK(j.at("version") == "v2.0");
  const auto& data = j.at("data");
  REQUIRE(data.size() == 2);
  CHECK(data[0].at("title") == "Tïtle \"one\"");
  CHECK(data[1].at("title") == "");
  REQUIRE(data[0].at("paragraphs").size() == 2);
  CHECK(data[0].at("paragraphs")[0].at("qas").size() == 3);
  CHECK(data[0].at("paragraphs")[1].at("qas").size() == 2);
  REQUIRE(data[1].at("paragraphs").size() == 1);
  const auto& impossible = data[0].at("paragraphs")[0].at("qas")[2];
  CHECK(impossible.at("is_impossible") == true);
  CHECK(impossible.at("answers").empty());
  CHECK(impossible.at("plausible_answers").size() == 1);
  CHECK_FALSE(data[0].at("paragraphs")[1].at("qas")[1].contains("plausible_answers"));
  CHECK(data[0].at("paragraphs")[0].at("qas")[0].at("is_impossible") == false);
}

TEST_CASE("a v1.1 dataset is written without is_impossible, unless a question has no answer") {
  const test::temp_dir dir;
  squad_dataset d;
  d.version = "1.1";
  d.contexts = {"Normandy is in France."};
  d.examples.push_back(example("a", "Normans", "Where is Normandy?", 0, {answer_in(d.contexts[0], "France")}));
  const auto v1 = nlohmann::json::parse(squad_json_text(d));
  CHECK(v1.at("version") == "1.1");
  CHECK_FALSE(v1.at("data")[0].at("paragraphs")[0].at("qas")[0].contains("is_impossible"));
  write_squad_json(d, dir.path() / "train.json");
  check_equal(read_squad(dir.path() / "train.json"), d);

  // An unanswerable question makes it a v2 file whatever the declared version: is_impossible is written.
  d.examples.push_back(example("b", "Normans", "Where is Rome?", 0, {}));
  const auto mixed = nlohmann::json::parse(squad_json_text(d));
  CHECK(mixed.at("data")[0].at("paragraphs")[0].at("qas")[1].at("is_impossible") == true);
  CHECK(mixed.at("data")[0].at("paragraphs")[0].at("qas")[0].at("is_impossible") == false);
}

TEST_CASE("an example whose context_index is out of range is refused naming the question") {
  squad_dataset d;
  d.contexts = {"Some text."};
  d.examples.push_back(example("bad-id", "", "What?", 3, {}));
  CHECK_THROWS_MATCHES(squad_json_text(d), usage_error, says("bad-id") && says("context 3"));
  const test::temp_dir dir;
  CHECK_THROWS_AS(write_squad_json(d, dir.path() / "x.json"), usage_error);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "x.json"));
}

TEST_CASE("a bad output path is an io_error naming it, and an existing file is left as it was") {
  const test::temp_dir dir;
  const squad_dataset d = awkward_v2();
  // The parent directory does not exist.
  const auto missing = dir.path() / "no-such-dir" / "dev.json";
  CHECK_THROWS_MATCHES(write_squad_json(d, missing), io::io_error, says(missing.parent_path().string()));
  CHECK_FALSE(std::filesystem::exists(missing));
  // The parent is a regular file.
  {
    std::ofstream(dir.path() / "a-file") << "not a directory";
  }
  const auto below_file = dir.path() / "a-file" / "dev.json";
  CHECK_THROWS_MATCHES(write_squad_json(d, below_file), io::io_error, says("a-file"));
  // The path is a directory: nothing replaces it.
  std::filesystem::create_directory(dir.path() / "a-dir");
  CHECK_THROWS_MATCHES(write_squad_json(d, dir.path() / "a-dir"), io::io_error, says("a-dir"));
  CHECK(std::filesystem::is_directory(dir.path() / "a-dir"));
  // A file that is there is replaced whole.
  {
    std::ofstream(dir.path() / "old.json") << "old contents";
  }
  write_squad_json(d, dir.path() / "old.json");
  check_equal(read_squad(dir.path() / "old.json"), d);
}

}  // namespace squad_writer_test
