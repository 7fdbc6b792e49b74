#include <catch2/catch.hpp>

#include <fstream>

#include "cputrain/text/vocabulary.hpp"
#include "support/checks.hpp"
#include "support/conformance_data.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace vocabulary_test {

using namespace cputrain::text;
using cputrain::test::says;

namespace {
const std::string specials = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
}

TEST_CASE("ids are line numbers and continuation pieces are looked up without their prefix") {
  const auto v = vocabulary::parse(specials + "un\n##aff\n##able\n##\n", "vocab.txt");
  CHECK(v.size() == 9);
  CHECK(v.pad_id() == 0);
  CHECK(v.unk_id() == 1);
  CHECK(v.cls_id() == 2);
  CHECK(v.sep_id() == 3);
  CHECK(v.mask_id() == 4);
  CHECK(v.find("un") == 5);
  CHECK(v.find("##aff") == 6);
  CHECK(v.find_continuation("aff") == 6);
  CHECK_FALSE(v.find_word_start("aff"));
  CHECK_FALSE(v.find_continuation("un"));
  CHECK(v.find("##") == 8);  // "##" alone is an ordinary token
  CHECK(v.token(7) == "##able");
  CHECK(v.max_piece_chars() == 6);  // "[MASK]"
  CHECK_THROWS_MATCHES(v.token(9), text_error, says("token id 9 is outside the vocabulary of 9"));
}

TEST_CASE("CRLF lines and trailing whitespace are trimmed and a repeated token keeps its last id") {
  const auto v = vocabulary::parse("[PAD]\r\n[UNK]\r\n[CLS] \r\n[SEP]\t\r\nword\nword\n", "crlf.txt");
  CHECK(v.size() == 6);
  CHECK(v.cls_id() == 2);
  CHECK(v.sep_id() == 3);
  CHECK(v.find("word") == 5);
  CHECK_FALSE(v.mask_id());
}

TEST_CASE("a vocabulary without a required special token is refused by name") {
  CHECK_THROWS_MATCHES(vocabulary::parse("[PAD]\n[CLS]\n[SEP]\nhello\n", "no-unk.txt"), text_error,
                       says("no-unk.txt: the vocabulary has no [UNK] token"));
  CHECK_THROWS_MATCHES(vocabulary::parse("[PAD]\n[UNK]\n[SEP]\n", "no-cls.txt"), text_error, says("no [CLS]"));
  CHECK_THROWS_MATCHES(vocabulary::parse("", "empty.txt"), text_error, says("empty.txt: the vocabulary is empty"));
}

TEST_CASE("invalid UTF-8 in vocab.txt names the line") {
  CHECK_THROWS_MATCHES(vocabulary::parse(specials + "ok\nbad\xFF\n", "v.txt"), text_error,
                       says("v.txt: line 7: invalid UTF-8"));
}

TEST_CASE("a missing vocabulary file is named") {
  cputrain::test::temp_dir dir;
  CHECK_THROWS_MATCHES(vocabulary::load(dir.path() / "nope.txt"), text_error, says("nope.txt: cannot open"));
  std::ofstream(dir.path() / "vocab.txt") << specials << "x\n";
  CHECK(vocabulary::load(dir.path() / "vocab.txt").find("x") == 5);
}

TEST_CASE("bert-base-uncased's vocab.txt has its documented ids") {
  const auto file = cputrain::test::conformance_file("bert-base-uncased/vocab.txt");
  if (!file) return;  // reported skipped, naming what is missing
  const auto v = vocabulary::load(*file);
  CHECK(v.size() == 30522);
  CHECK(v.pad_id() == 0);
  CHECK(v.unk_id() == 100);
  CHECK(v.cls_id() == 101);
  CHECK(v.sep_id() == 102);
  CHECK(v.mask_id() == 103);
  CHECK(v.find("the") == 1996);
  CHECK(v.find("##s") == 2015);
}

TEST_CASE("an empty or blank vocab.txt file is refused naming the file") {
  cputrain::test::temp_dir dir;
  const auto empty = dir.path() / "vocab.txt";
  std::ofstream(empty).flush();
  CHECK_THROWS_MATCHES(vocabulary::load(empty), text_error, says(empty.string() + ": the vocabulary is empty"));
  // Blank lines are tokens (the empty string), as in Hugging Face's loader, so the file fails on [UNK].
  std::ofstream(empty) << "\n\n \r\n";
  CHECK_THROWS_MATCHES(vocabulary::load(empty), text_error, says(empty.string() + ": the vocabulary has no [UNK] token"));
}

TEST_CASE("a special token listed twice takes its last line, as Hugging Face's loader does, and ids stay lines") {
  // Accepted on purpose: transformers and tokenizers build the map line by line, so a model trained with this
  // vocab.txt used the last id; refusing it would refuse models Hugging Face runs.
  const auto v = vocabulary::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[UNK]\n[CLS]\n", "dup.txt");
  CHECK(v.size() == 6);
  CHECK(v.unk_id() == 4);
  CHECK(v.cls_id() == 5);
  CHECK(v.token(1) == "[UNK]");  // the earlier line keeps its id for decoding
}

}  // namespace vocabulary_test
