#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/text/bert_tokenizer.hpp"
#include "support/checks.hpp"
#include "support/conformance_data.hpp"
#include "support/token_hash.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace bert_tokenizer_test {

using namespace cputrain::text;
using cputrain::test::says;

namespace {

bert_tokenizer small_tokenizer(bert_tokenizer_options options = {}) {
  return bert_tokenizer(vocabulary::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n"  // 0-4
                                          "un\n##aff\n##able\naff\nable\n"        // 5-9
                                          "hello\n,\n!\nworld\n##s\n"             // 10-14
                                          "cafe\ncafé\n中\n##é\n[\n]\nmask\n",    // 15-22
                                          "small-vocab.txt"),
                        options);
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> spans(const std::vector<text_span>& offsets) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (const auto& s : offsets) out.emplace_back(s.begin, s.end);
  return out;
}

using ids = std::vector<std::int32_t>;
using pairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

// Byte offsets must cover the same characters as the code-point offsets.
void check_byte_offsets(std::string_view text, const token_sequence& t) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    CHECK(t.byte_offsets[i].begin == byte_position(text, t.offsets[i].begin));
    CHECK(t.byte_offsets[i].end == byte_position(text, t.offsets[i].end));
  }
}

}  // namespace

TEST_CASE("WordPiece takes the longest piece from the left and marks continuations") {
  const auto t = small_tokenizer();
  const auto r = t.encode("unaffable affable Hello, worlds!");
  CHECK(r.ids == ids{5, 6, 7, 8, 7, 10, 11, 13, 14, 12});
  CHECK(spans(r.offsets) == pairs{{0, 2}, {2, 5}, {5, 9}, {10, 13}, {13, 17}, {18, 23}, {23, 24}, {25, 30},
                                  {30, 31}, {31, 32}});
  check_byte_offsets("unaffable affable Hello, worlds!", r);
}

TEST_CASE("a word with any unmatched part becomes one [UNK] over the whole word") {
  const auto t = small_tokenizer();
  const auto r = t.encode("hello unaffablex world");
  CHECK(r.ids == ids{10, 1, 13});
  CHECK(spans(r.offsets) == pairs{{0, 5}, {6, 16}, {17, 22}});
}

TEST_CASE("words longer than max_input_chars_per_word are [UNK] even when they would match") {
  bert_tokenizer_options options;
  options.max_input_chars_per_word = 8;
  const auto t = small_tokenizer(options);
  CHECK(t.encode("unaffable").ids == ids{1});  // 9 characters
  CHECK(t.encode("unaffabl").ids == ids{1});   // 8 characters, but "##abl" is no piece
  CHECK(t.encode("affable").ids == ids{8, 7});
}

TEST_CASE("accents are stripped and offsets point at the original characters") {
  const auto t = small_tokenizer();
  const std::string text = "CAFÉ cafe\xCC\x81 \xE4\xB8\xAD!";  // CAFÉ, cafe + combining acute, 中, !
  const auto r = t.encode(text);
  CHECK(r.ids == ids{15, 15, 17, 12});
  CHECK(spans(r.offsets) == pairs{{0, 4}, {5, 9}, {11, 12}, {12, 13}});  // a dropped mark is in no token
  check_byte_offsets(text, r);
}

TEST_CASE("without lower casing accents stay and continuation pieces can start with one") {
  bert_tokenizer_options options;
  options.lower_case = false;
  const auto t = small_tokenizer(options);
  CHECK(t.encode("café").ids == ids{16});
  CHECK(t.encode("Hello").ids == ids{1});
  bert_tokenizer_options keep_accents;
  keep_accents.strip_accents = false;
  CHECK(small_tokenizer(keep_accents).encode("CAFÉ").ids == ids{16});
}

TEST_CASE("control characters vanish inside a word and whitespace of every kind separates words") {
  const auto t = small_tokenizer();
  const std::string text = std::string("hel\0lo\xE2\x80\x8Bworld", 14) + "\xC2\xA0hello\xE3\x80\x80world";
  const auto r = t.encode(text);
  CHECK(r.ids == ids{1, 10, 13});  // "helloworld" (NUL and ZWSP dropped) is no piece, so [UNK]
  CHECK(spans(r.offsets) == pairs{{0, 12}, {13, 18}, {19, 24}});
  check_byte_offsets(text, r);
}

TEST_CASE("special tokens written in the text are matched as written and split words") {
  const auto t = small_tokenizer();
  const auto r = t.encode("hello[MASK]world [mask] [CLS][SEP]");
  CHECK(r.ids == ids{10, 4, 13, 19, 21, 20, 2, 3});
  CHECK(spans(r.offsets) == pairs{{0, 5}, {5, 11}, {11, 16}, {17, 18}, {18, 22}, {22, 23}, {24, 29}, {29, 34}});
  bert_tokenizer_options plain;
  plain.match_special_tokens = false;
  CHECK(small_tokenizer(plain).encode("[MASK]").ids == ids{19, 21, 20});
}

TEST_CASE("invalid UTF-8 is refused with its position") {
  const auto t = small_tokenizer();
  CHECK_THROWS_MATCHES(t.encode("hello \xC3( world"), text_error, says("invalid UTF-8 at byte 6 (code point 6)"));
}

TEST_CASE("encoding appends and an empty text gives no tokens") {
  const auto t = small_tokenizer();
  token_sequence r;
  t.encode("hello", r);
  t.encode(" world ", r);
  CHECK(r.ids == ids{10, 13});
  CHECK(spans(r.offsets) == pairs{{0, 5}, {1, 6}});  // each call counts from its own text
  CHECK(t.encode("").empty());
  CHECK(t.encode(" \t\n\x07").empty());
}

TEST_CASE("ids and offsets equal Hugging Face's tokenizer on SQuAD text and nasty text") {
  const auto vocab = cputrain::test::conformance_file("bert-base-uncased/vocab.txt");
  if (!vocab) return;  // reported skipped, naming what is missing
  const bert_tokenizer t(vocabulary::load(*vocab));
  std::ifstream in(std::string(CPUTRAIN_TEXT_TEST_DATA) + "/tokenizer_reference.jsonl");
  REQUIRE(in);
  std::string line;
  std::size_t texts = 0, tokens = 0;
  while (std::getline(in, line)) {
    const auto ref = nlohmann::json::parse(line);
    const std::string text = ref["text"];
    INFO("text: " << ref["text"].dump());
    const auto got = t.encode(text);
    CHECK(got.ids == ref["ids"].get<ids>());
    CHECK(spans(got.offsets) == ref["offsets"].get<pairs>());
    check_byte_offsets(text, got);
    ++texts;
    tokens += got.size();
  }
  CHECK(texts == 42);
  CHECK(tokens > 1200);
}

namespace {
// The same text and hash as scripts/make_tokenizer_reference.cjs's sweep mode.
std::string sweep_text(char32_t first, char32_t block) {
  std::string text;
  for (char32_t c = first; c < first + block && c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    append_utf8(text, c);
    text += " a";
    append_utf8(text, c);
    text += "b ";
  }
  return text;
}

}  // namespace

TEST_CASE("every Unicode code point tokenizes as in Hugging Face's tokenizer") {
  const auto vocab = cputrain::test::conformance_file("bert-base-uncased/vocab.txt");
  if (!vocab) return;  // reported skipped, naming what is missing
  const bert_tokenizer t(vocabulary::load(*vocab));
  std::ifstream in(std::string(CPUTRAIN_TEXT_TEST_DATA) + "/tokenizer_sweep.json");
  REQUIRE(in);
  const auto ref = nlohmann::json::parse(in);
  const auto block = ref["block"].get<char32_t>();
  std::size_t blocks = 0;
  for (const auto& b : ref["blocks"]) {
    const auto first = b["first"].get<char32_t>();
    const auto got = t.encode(sweep_text(first, block));
    INFO("code points " << std::hex << static_cast<std::uint32_t>(first) << " to " << static_cast<std::uint32_t>(first + block - 1)
                        << " (scripts/make_tokenizer_reference.cjs sweep makes the same text)");
    CHECK(got.size() == b["tokens"].get<std::size_t>());
    CHECK(cputrain::test::token_hash(got) == b["hash"].get<std::uint32_t>());
    ++blocks;
  }
  CHECK(blocks == 272);
}

}  // namespace bert_tokenizer_test
