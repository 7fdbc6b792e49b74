#include <catch2/catch.hpp>

#include <fstream>

#include "cputrain/text/load_bert_tokenizer.hpp"
#include "support/checks.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace load_bert_tokenizer_test {

using namespace cputrain::text;
using cputrain::test::says;

namespace {
void write(const std::filesystem::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }
const std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nHello\ncafé\ncafe\n";
}  // namespace

TEST_CASE("a model directory without tokenizer_config.json gets the uncased defaults") {
  cputrain::test::temp_dir dir;
  write(dir.path() / "vocab.txt", vocab);
  const auto t = load_bert_tokenizer(dir.path());
  CHECK(t.options().lower_case);
  CHECK(t.encode("Hello Café").ids == std::vector<std::int32_t>{5, 8});
}

TEST_CASE("tokenizer_config.json switches lower casing and accent stripping") {
  cputrain::test::temp_dir dir;
  write(dir.path() / "vocab.txt", vocab);
  write(dir.path() / "tokenizer_config.json", R"({"do_lower_case": false, "model_max_length": 512})");
  const auto cased = load_bert_tokenizer(dir.path());
  CHECK_FALSE(cased.options().lower_case);
  CHECK(cased.encode("Hello café").ids == std::vector<std::int32_t>{6, 7});  // accents kept when not lower-casing

  write(dir.path() / "tokenizer_config.json", R"({"do_lower_case": true, "strip_accents": false})");
  CHECK(load_bert_tokenizer(dir.path()).encode("CAFÉ").ids == std::vector<std::int32_t>{7});
}

TEST_CASE("a broken tokenizer_config.json or a directory without vocab.txt is named") {
  cputrain::test::temp_dir dir;
  CHECK_THROWS_MATCHES(load_bert_tokenizer(dir.path()), text_error, says("no vocab.txt in this directory"));
  write(dir.path() / "vocab.txt", vocab);
  write(dir.path() / "tokenizer_config.json", "{not json");
  CHECK_THROWS_MATCHES(load_bert_tokenizer(dir.path()), text_error, says("tokenizer_config.json: not valid JSON"));
  write(dir.path() / "tokenizer_config.json", R"({"do_lower_case": "yes"})");
  CHECK_THROWS_MATCHES(load_bert_tokenizer(dir.path()), text_error,
                       says("\"do_lower_case\" must be true or false, not \"yes\""));
}

TEST_CASE("a vocab.txt path works as well as a directory") {
  cputrain::test::temp_dir dir;
  write(dir.path() / "vocab.txt", vocab);
  CHECK(load_bert_tokenizer(dir.path() / "vocab.txt").encode("hello").ids == std::vector<std::int32_t>{5});
}

TEST_CASE("a tokenizer_config.json nested a million levels deep is refused naming the file, not a stack overflow") {
  // Found by the fuzz target tests/fuzz/load_bert_tokenizer_fuzz.cpp (reproducer tests/fuzz/regressions/
  // load_bert_tokenizer/deep_nesting.json): the message for a switch that is not a boolean printed the value,
  // recursing once per level until the stack ran out.
  cputrain::test::temp_dir dir;
  const auto file = dir.path() / "tokenizer_config.json";
  const std::size_t depth = 1'000'000;
  write(file, R"({"do_lower_case": )" + std::string(depth, '[') + std::string(depth, ']') + "}");
  CHECK_THROWS_MATCHES(read_tokenizer_config(file), text_error,
                       says(file.string() + ": not a tokenizer_config.json: the JSON nests deeper than 100 levels"));
  write(file, R"({"do_lower_case": [[1]], "added_tokens_decoder": {"0": {"content": "[PAD]"}}})");
  CHECK_THROWS_MATCHES(read_tokenizer_config(file), text_error,
                       says("\"do_lower_case\" must be true or false, not [[1]]"));
}

}  // namespace load_bert_tokenizer_test
