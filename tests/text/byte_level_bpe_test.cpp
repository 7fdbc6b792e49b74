// Tests for include/cputrain/text/byte_level_bpe.hpp (with byte_level.hpp, bpe_model.hpp, added_tokens.hpp and
// tokenizer_json.hpp): GPT-2's split, merges and RoBERTa's offsets against Hugging Face's Rust tokenizer on GPT-2's
// first 3000 merges (tests/text/data/gpt2_cut, scripts/make_byte_level_reference.cjs): the SQuAD sample, nasty
// text, the pattern's corner cases and every Unicode code point; and tokenizer.json files it must refuse.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/text/byte_level_bpe.hpp"
#include "cputrain/text/byte_level_bpe_files.hpp"
#include "cputrain/text/byte_level_bpe_json.hpp"
#include "support/temp_dir.hpp"
#include "support/token_hash.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace byte_level_bpe_test {

using namespace cputrain::text;
using pairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

namespace {

std::string data(const std::string& name) { return std::string(CPUTRAIN_TEXT_TEST_DATA) + "/" + name; }

const byte_level_bpe_file& cut_gpt2() {
  static const byte_level_bpe_file file = load_byte_level_bpe(data("gpt2_cut/tokenizer.json"));
  return file;
}

std::vector<nlohmann::json> reference_texts() {
  std::ifstream in(data("byte_level_reference.jsonl"));
  REQUIRE(in);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

pairs char_spans(const std::vector<text_span>& offsets) {
  pairs out;
  for (const auto& s : offsets) out.emplace_back(s.begin, s.end);
  return out;
}

// <s> A </s>, as RobertaProcessing wraps one text (the wrapping's own offsets are (0, 0)).
token_sequence wrapped(const byte_level_bpe_file& f, std::string_view text) {
  token_sequence out;
  out.push_back(f.specials.cls, {0, 0}, {0, 0});
  f.tokenizer.encode(text, out);
  out.push_back(f.specials.sep, {0, 0}, {0, 0});
  return out;
}

}  // namespace

TEST_CASE("the byte alphabet is GPT-2's: printable Latin-1 as itself, the rest from U+0100 in byte order") {
  constexpr auto a = byte_alphabet();
  CHECK(a['A'] == U'A');
  CHECK(a[' '] == 0x120);  // 'Ġ'
  CHECK(a['\n'] == 0x10A);  // 'Ċ'
  CHECK(a[0] == 0x100);
  CHECK(a[0xAD] == 0x143);  // the soft hyphen, the last non-printable byte
  CHECK(a[0xA0] == 0x142);
  std::vector<char32_t> sorted(a.begin(), a.end());
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // one character per byte
}

TEST_CASE("GPT-2's split pattern cuts every reference text where Hugging Face's ByteLevel pre-tokenizer does") {
  std::size_t texts = 0;
  for (const auto& r : reference_texts()) {
    const std::string text = r["text"];
    INFO(text);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pieces;
    split_gpt2(text, pieces);
    pairs got;
    for (const auto& [b, e] : pieces)
      got.emplace_back(static_cast<std::uint32_t>(count_code_points(std::string_view(text).substr(0, b))),
                       static_cast<std::uint32_t>(count_code_points(std::string_view(text).substr(0, e))));
    CHECK(got == r["pieces"].get<pairs>());
    ++texts;
  }
  CHECK(texts == 50);
}

TEST_CASE("ids, trimmed offsets and special tokens equal Hugging Face's RoBERTa-style tokenizer on every reference text") {
  const auto& f = cut_gpt2();
  for (const auto& r : reference_texts()) {
    const std::string text = r["text"];
    INFO(text);
    const token_sequence got = wrapped(f, text);
    CHECK(got.ids == r["ids"].get<std::vector<std::int32_t>>());
    CHECK(char_spans(got.offsets) == r["offsets"].get<pairs>());
    for (std::size_t i = 1; i + 1 < got.size(); ++i) {  // byte offsets cover the same characters
      CHECK(got.byte_offsets[i].begin == byte_position(text, got.offsets[i].begin));
      CHECK(got.byte_offsets[i].end == byte_position(text, got.offsets[i].end));
    }
  }
}

TEST_CASE("merges by rank, leftmost first, parts of a character covering all of it, and <mask> taking the space on its left") {
  const auto& f = cut_gpt2();
  const auto& m = f.tokenizer.model();
  // "Ġthe" is one of GPT-2's earliest merges; "é" is two bytes, 'Ã' '©', merged into one token
  const auto the = f.tokenizer.encode(" the");
  REQUIRE(the.size() == 1);
  CHECK(the.ids[0] == *m.find("\xC4\xA0the"));
  CHECK(char_spans(the.offsets) == pairs{{1, 4}});  // the space trimmed
  const auto e = f.tokenizer.encode("\xC3\xA9");
  CHECK(e.ids == std::vector<std::int32_t>{*m.find("\xC3\x83\xC2\xA9")});
  // an emoji's four bytes: tokens of parts of it each cover the whole character
  const auto emoji = f.tokenizer.encode("\xF0\x9F\x98\x80");
  CHECK(emoji.size() >= 2);
  for (std::size_t i = 0; i < emoji.size(); ++i) CHECK(emoji.offsets[i] == text_span{0, 1});
  const auto masked = f.tokenizer.encode("a  <mask>b");
  CHECK(char_spans(masked.offsets) == pairs{{0, 1}, {3, 9}, {9, 10}});
}

TEST_CASE("vocab.json, merges.txt and tokenizer_config.json give the tokenizer that tokenizer.json describes") {
  // The legacy files of the cut GPT-2 model, written from its tokenizer.json as a RoBERTa directory has them.
  cputrain::test::temp_dir dir;
  std::ifstream in(data("gpt2_cut/tokenizer.json"));
  const auto json = nlohmann::json::parse(in);
  std::ofstream(dir.path() / "vocab.json") << json["model"]["vocab"].dump();
  {
    std::ofstream merges(dir.path() / "merges.txt");
    merges << "#version: 0.2\n";
    for (const auto& m : json["model"]["merges"]) merges << m.get<std::string>() << "\n";
  }
  std::ofstream(dir.path() / "tokenizer_config.json")
      << R"({"add_prefix_space": false, "mask_token": {"content": "<mask>", "lstrip": true, "rstrip": false}})";
  const auto legacy = load_byte_level_bpe_files(dir.path(), byte_level_family::roberta);
  const auto& f = cut_gpt2();
  CHECK(legacy.specials.cls == f.specials.cls);
  CHECK(legacy.specials.sep == f.specials.sep);
  for (const auto& r : reference_texts()) {
    const std::string text = r["text"];
    INFO(text);
    const token_sequence got = wrapped(legacy, text);
    CHECK(got.ids == r["ids"].get<std::vector<std::int32_t>>());
    CHECK(char_spans(got.offsets) == r["offsets"].get<pairs>());
  }
  // GPT-2's converter: nothing around the text, offsets not trimmed
  const auto gpt2 = load_byte_level_bpe_files(dir.path(), byte_level_family::gpt2);
  CHECK(gpt2.specials.cls < 0);
  CHECK(char_spans(gpt2.tokenizer.encode(" the").offsets) == pairs{{0, 4}});
  // a merges.txt line that is not a merge is named
  std::ofstream(dir.path() / "merges.txt") << "#version: 0.2\nĠ t\nbroken\n";
  CHECK_THROWS_WITH(load_byte_level_bpe_files(dir.path(), byte_level_family::roberta),
                    Catch::Contains("merges.txt: line 3 is not a merge"));
}

// The same text and hash as scripts/make_byte_level_reference.cjs's sweep mode.
std::string sweep_text(char32_t first, char32_t block) {
  std::string text;
  for (char32_t c = first; c < first + block && c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    std::string ch;
    append_utf8(ch, c);
    text += ch;
    text += "  a";
    text += ch;
    text += "'sb 1";
    text += ch;
    text += ' ';
    text += ch;
    text += '\n';
  }
  return text;
}


TEST_CASE("every Unicode code point is split, merged and placed as by Hugging Face's byte-level tokenizer") {
  const auto& f = cut_gpt2();
  std::ifstream in(data("byte_level_sweep.json"));
  REQUIRE(in);
  const auto ref = nlohmann::json::parse(in);
  const auto block = ref["block"].get<char32_t>();
  std::size_t blocks = 0;
  for (const auto& b : ref["blocks"]) {
    const auto first = b["first"].get<char32_t>();
    const auto got = f.tokenizer.encode(sweep_text(first, block));
    INFO("code points " << std::hex << static_cast<std::uint32_t>(first) << " to "
                        << static_cast<std::uint32_t>(first + block - 1)
                        << " (scripts/make_byte_level_reference.cjs sweep makes the same text)");
    CHECK(got.size() == b["tokens"].get<std::size_t>());
    CHECK(cputrain::test::token_hash(got) == b["hash"].get<std::uint32_t>());
    ++blocks;
  }
  CHECK(blocks == 272);
}

TEST_CASE("a tokenizer.json it cannot follow is refused naming the file, the JSON path and what was expected") {
  cputrain::test::temp_dir dir;
  const auto error_of = [&](const std::string& json) {
    const auto path = dir.path() / "tokenizer.json";
    std::ofstream(path) << json;
    try {
      (void)load_byte_level_bpe(path);
    } catch (const text_error& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  const std::string bpe = R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";
  const std::string pre = R"("pre_tokenizer": {"type": "ByteLevel"})";
  CHECK_THAT(error_of("{" + pre + ", " + bpe + "}"), Catch::Contains("<no error>"));
  CHECK_THAT(error_of("[1]"), Catch::Contains("tokenizer.json: the top level is [1], expected an object"));
  CHECK_THAT(error_of("{\"model\": "), Catch::Contains("not valid JSON"));
  CHECK_THAT(error_of(R"({"pre_tokenizer": {"type": "Metaspace"}, )" + bpe + "}"),
             Catch::Contains("pre_tokenizer.type is \"Metaspace\", which cputrain does not implement here") &&
                 Catch::Contains("\"ByteLevel\""));
  CHECK_THAT(error_of("{" + pre + R"(, "model": {"type": "WordLevel"}})"), Catch::Contains("model.type is \"WordLevel\""));
  CHECK_THAT(error_of("{" + pre + R"(, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a"]}})"),
             Catch::Contains("model.merges[0] is \"a\", expected two tokens separated by one space"));
  CHECK_THAT(error_of("{" + pre + R"(, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a", "c"]]}})"),
             Catch::Contains("merge 0 (\"a\" \"c\") names \"c\", which is not in the vocabulary"));
  CHECK_THAT(error_of("{" + pre + R"(, "model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}})"),
             Catch::Contains("model.vocab.a is -1, expected a token id"));
  CHECK_THAT(error_of("{" + pre + R"(, "model": {"type": "BPE", "dropout": 0.1, "vocab": {}, "merges": []}})"),
             Catch::Contains("model.dropout is 0.1"));
  CHECK_THAT(error_of("{" + pre + ", " + bpe + R"(, "added_tokens": [{"id": 3}]})"),
             Catch::Contains("added_tokens[0].content is null, expected a string"));
  CHECK(error_of("{" + pre + ", " + bpe + R"(, "normalizer": {"type": "NFC"}})") == "<no error>");  // GPT-NeoX's
  CHECK_THAT(error_of("{" + pre + ", " + bpe + R"(, "normalizer": {"type": "NFX"}})"),
             Catch::Contains("normalizer.type is \"NFX\""));
  CHECK_THAT(error_of("{" + pre + ", " + bpe + R"(, "post_processor": {"type": "RobertaProcessing", "cls": "<s>"}})"),
             Catch::Contains("post_processor.cls is \"<s>\", expected [token, id]"));
}

}  // namespace byte_level_bpe_test
