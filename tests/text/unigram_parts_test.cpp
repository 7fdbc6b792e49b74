// Unit tests of the parts of the SentencePiece Unigram tokenizer (include/cputrain/text/): normalized_text's
// alignments through each rewrite, precompiled_charsmap (the real XLM-R charsmap of tests/text/data/xlmr_cut, and
// damaged blobs), decode_base64, metaspace_split's pieces, unigram_model's Viterbi, unknown and byte-fallback
// tokens, and the tokenizer.json contents unigram_json.hpp must refuse, each named by its JSON path.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/text/base64.hpp"
#include "cputrain/text/load_tokenizer.hpp"
#include "cputrain/text/metaspace.hpp"
#include "cputrain/text/normalized_text.hpp"
#include "cputrain/text/precompiled_charsmap.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/token_sequence.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/text/unigram_model.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace unigram_parts_test {

using namespace cputrain::text;
using pairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
using ranges = std::vector<std::pair<std::size_t, std::size_t>>;

namespace {

std::string data(const std::string& name) { return std::string(CPUTRAIN_TEXT_TEST_DATA) + "/" + name; }

pairs spans_of(std::span<const text_span> s) {
  pairs out;
  for (const auto& a : s) out.emplace_back(a.begin, a.end);
  return out;
}

const precompiled_charsmap& xlmr_charsmap() {
  static const precompiled_charsmap map = [] {
    std::ifstream in(data("xlmr_cut/tokenizer.json"));
    REQUIRE(in);
    const auto json = nlohmann::json::parse(in);
    const auto blob = decode_base64(json["normalizer"]["normalizers"][0]["precompiled_charsmap"].get<std::string>());
    REQUIRE(blob);
    return precompiled_charsmap(*blob, "xlmr_cut");
  }();
  return map;
}

std::string charsmap_error(std::string_view blob) {
  try {
    precompiled_charsmap map(blob, "blob");
  } catch (const text_error& e) {
    return e.what();
  }
  return "<no error>";
}

struct split_result {
  std::string text;
  ranges pieces;
  pairs alignments;
};

split_result split(std::string_view text, metaspace_options options, bool at_text_start = true) {
  normalized_text t(text);
  ranges pieces;
  metaspace_split(options, t, at_text_start, pieces);
  return {t.str(), pieces, spans_of(t.alignments())};
}

struct token_triple {
  std::int32_t id;
  std::uint32_t begin, end;
  friend bool operator==(const token_triple&, const token_triple&) = default;
};

std::vector<token_triple> tokens(const unigram_model& m, std::string_view piece) {
  std::vector<model_token> out;
  m.tokenize(piece, out);
  std::vector<token_triple> got;
  for (const auto& t : out) got.push_back({t.id, t.begin, t.end});
  return got;
}

std::string model_error(std::vector<std::pair<std::string, double>> vocab, std::optional<std::int32_t> unk) {
  try {
    unigram_model m(std::move(vocab), unk, false, "src");
  } catch (const text_error& e) {
    return e.what();
  }
  return "<no error>";
}

const std::string u2581 = "\xE2\x96\x81";  // ▁

}  // namespace
}  // namespace unigram_parts_test

namespace Catch {
template <>
struct StringMaker<unigram_parts_test::token_triple> {
  static std::string convert(const unigram_parts_test::token_triple& t) {
    return "{" + std::to_string(t.id) + ", " + std::to_string(t.begin) + ", " + std::to_string(t.end) + "}";
  }
};
}  // namespace Catch

namespace unigram_parts_test {

// ---------------------------------------------------------------- normalized_text

TEST_CASE("normalized_text assign aligns each byte to the whole character it belongs to", "[unigram_parts]") {
  const normalized_text t("a\xC3\xA9\xE2\x82\xAC" "b");  // a é € b
  CHECK(t.str() == "a\xC3\xA9\xE2\x82\xAC" "b");
  CHECK(spans_of(t.alignments()) == pairs{{0, 1}, {1, 3}, {1, 3}, {3, 6}, {3, 6}, {3, 6}, {6, 7}});
  CHECK(normalized_text("").empty());
  CHECK(normalized_text("").alignments().empty());
}

TEST_CASE("normalized_text transform replaces and inserts and removes with the reference's alignments",
          "[unigram_parts]") {
  normalized_text t("abcd");
  // A replaces a; + is inserted after it (a's alignment); C replaces b and removes c; d stays.
  const std::vector<char_change> changes{{U'A', 0}, {U'+', 1}, {U'C', -1}, {U'd', 0}};
  t.transform(changes);
  CHECK(t.str() == "A+Cd");
  CHECK(spans_of(t.alignments()) == pairs{{0, 1}, {0, 1}, {1, 2}, {3, 4}});

  // a multi-byte replacement: every byte of it takes the replaced character's alignment, and back
  normalized_text m("x\xC3\xA9");  // x é
  const std::vector<char_change> to_e{{U'x', 0}, {U'e', 0}};
  m.transform(to_e);
  CHECK(m.str() == "xe");
  CHECK(spans_of(m.alignments()) == pairs{{0, 1}, {1, 3}});
  const std::vector<char_change> to_euro{{U'\u20AC', 0}, {U'e', 0}};
  m.transform(to_euro);
  CHECK(m.str() == "\xE2\x82\xAC" "e");
  CHECK(spans_of(m.alignments()) == pairs{{0, 1}, {0, 1}, {0, 1}, {1, 3}});
}

TEST_CASE("normalized_text transform inserting at the start aligns to the empty span 0 0", "[unigram_parts]") {
  normalized_text t("ab");
  const std::vector<char_change> changes{{U'>', 1}, {U'a', 0}, {U'b', 0}};
  t.transform(changes);
  CHECK(t.str() == ">ab");
  CHECK(spans_of(t.alignments()) == pairs{{0, 0}, {0, 1}, {1, 2}});
}

TEST_CASE("normalized_text transform drops the tail that a short change list does not reach", "[unigram_parts]") {
  normalized_text t("abc");
  const std::vector<char_change> changes{{U'X', 0}};
  t.transform(changes);
  CHECK(t.str() == "X");
  CHECK(spans_of(t.alignments()) == pairs{{0, 1}});
}

TEST_CASE("normalized_text transform with skip removes the skipped characters", "[unigram_parts]") {
  normalized_text t("\xC3\xA9" "bc");  // é b c
  const std::vector<char_change> changes{{U'B', 0}, {U'c', 0}};
  t.transform(changes, 1);
  CHECK(t.str() == "Bc");
  CHECK(spans_of(t.alignments()) == pairs{{2, 3}, {3, 4}});
}

TEST_CASE("normalized_text strip removes Unicode whitespace and keeps the kept characters' alignments",
          "[unigram_parts]") {
  // U+3000 ' ' a U+00A0 b U+00A0 ' ' U+3000 U+2028
  const std::string text = "\xE3\x80\x80 a\xC2\xA0" "b\xC2\xA0 \xE3\x80\x80\xE2\x80\xA8";
  normalized_text both(text);
  both.strip(true, true);
  CHECK(both.str() == "a\xC2\xA0" "b");
  CHECK(spans_of(both.alignments()) == pairs{{4, 5}, {5, 7}, {5, 7}, {7, 8}});

  normalized_text left(text);
  left.strip(true, false);
  CHECK(left.str() == "a\xC2\xA0" "b\xC2\xA0 \xE3\x80\x80\xE2\x80\xA8");
  CHECK(left.alignments().size() == 13);
  CHECK(left.alignments()[0] == text_span{4, 5});
  CHECK(left.alignments()[12] == text_span{14, 17});

  normalized_text right(text);
  right.strip(false, true);
  CHECK(right.str() == "\xE3\x80\x80 a\xC2\xA0" "b");
  CHECK(spans_of(right.alignments()) == pairs{{0, 3}, {0, 3}, {0, 3}, {3, 4}, {4, 5}, {5, 7}, {5, 7}, {7, 8}});

  normalized_text blank("\xC2\xA0 \xE3\x80\x80");
  blank.strip(true, true);
  CHECK(blank.str().empty());
  CHECK(blank.alignments().empty());
  normalized_text untouched(" a ");
  untouched.strip(false, false);
  CHECK(untouched.str() == " a ");
}

TEST_CASE("normalized_text replace gives the content the alignment of the match's last byte", "[unigram_parts]") {
  normalized_text t("a  b   c");
  const ranges matches{{1, 3}, {4, 7}};
  t.replace(matches, u2581);
  CHECK(t.str() == "a" + u2581 + "b" + u2581 + "c");
  CHECK(spans_of(t.alignments()) ==
        pairs{{0, 1}, {2, 3}, {2, 3}, {2, 3}, {3, 4}, {6, 7}, {6, 7}, {6, 7}, {7, 8}});

  // a multi-byte match: the content takes the whole character's alignment
  normalized_text e("x\xC3\xA9y");
  const ranges one{{1, 3}};
  e.replace(one, "E");
  CHECK(e.str() == "xEy");
  CHECK(spans_of(e.alignments()) == pairs{{0, 1}, {1, 3}, {3, 4}});
}

TEST_CASE("normalized_text prepend aligns the content to the first character", "[unigram_parts]") {
  normalized_text t("\xC3\xA9" "a");
  t.prepend(u2581);
  CHECK(t.str() == u2581 + "\xC3\xA9" "a");
  CHECK(spans_of(t.alignments()) == pairs{{0, 2}, {0, 2}, {0, 2}, {0, 2}, {0, 2}, {2, 3}});
  normalized_text empty("");
  empty.prepend(u2581);
  CHECK(empty.str().empty());
}

TEST_CASE("normalized_text slice and original map bytes back to the original text", "[unigram_parts]") {
  normalized_text t("a  b");
  const ranges match{{1, 3}};
  t.replace(match, u2581);  // a ▁ b, ▁ aligned to 2 3
  const normalized_text s = t.slice(1, 5);
  CHECK(s.str() == u2581 + "b");
  CHECK(spans_of(s.alignments()) == pairs{{2, 3}, {2, 3}, {2, 3}, {3, 4}});
  CHECK(t.original(0, 5) == text_span{0, 4});
  CHECK(t.original(1, 4) == text_span{2, 3});
  CHECK(t.original(0, 1) == text_span{0, 1});
  CHECK(t.original(2, 2) == text_span{0, 0});
}

// ---------------------------------------------------------------- precompiled_charsmap

TEST_CASE("XLM-R's charsmap maps single characters by its NFKC rules", "[unigram_parts]") {
  const auto& map = xlmr_charsmap();
  CHECK(map.transform("\xEF\xBC\xA1") == std::optional<std::string_view>("A"));  // U+FF21 fullwidth A
  CHECK(map.transform("\xE2\x91\xA0") == std::optional<std::string_view>("1"));  // U+2460 circled 1
  CHECK(map.transform("\xEF\xAC\x81") == std::optional<std::string_view>("fi"));  // U+FB01 ligature
  CHECK(map.transform("a") == std::nullopt);
  const auto removed = map.transform("\x01");
  REQUIRE(removed);
  CHECK(removed->empty());
}

TEST_CASE("XLM-R's charsmap normalizes clusters and aligns as Hugging Face does", "[unigram_parts]") {
  const auto& map = xlmr_charsmap();
  // Fullwidth A + combining acute: the shortest rule matching the cluster's start replaces the whole cluster
  normalized_text accent("\xEF\xBC\xA1\xCC\x81");
  map.normalize(accent);
  CHECK(accent.str() == "A");
  CHECK(spans_of(accent.alignments()) == pairs{{0, 3}});  // the first character's span, not the cluster's 0 5

  normalized_text ligature("\xEF\xAC\x81ne");
  map.normalize(ligature);
  CHECK(ligature.str() == "fine");
  CHECK(spans_of(ligature.alignments()) == pairs{{0, 3}, {0, 3}, {3, 4}, {4, 5}});

  // a removed character at the very start shifts the alignments of those after it by one character
  normalized_text start("\x01start");
  map.normalize(start);
  CHECK(start.str() == "start");
  CHECK(spans_of(start.alignments()) == pairs{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}});

  normalized_text plain("plain text");
  map.normalize(plain);
  CHECK(plain.str() == "plain text");
  CHECK(plain.alignments()[9] == text_span{9, 10});
}

TEST_CASE("a damaged charsmap blob is refused naming the problem", "[unigram_parts]") {
  using namespace std::string_literals;
  CHECK_THAT(charsmap_error("\x04\x00\x00"s), Catch::Equals("blob: shorter than its 4-byte trie size"));
  CHECK_THAT(charsmap_error("\x00\x00\x00\x00"s), Catch::Equals("blob: its trie is empty"));
  CHECK_THAT(charsmap_error("\x03\x00\x00\x00\x01\x02\x03"s), Catch::Equals("blob: its trie is empty"));
  CHECK_THAT(charsmap_error("\x08\x00\x00\x00\x01\x02\x03\x04"s),
             Catch::Equals("blob: says its trie has 8 bytes, but only 4 follow"));
  CHECK_THAT(charsmap_error("\x04\x00\x00\x00\x00\x00\x00\x00" "ab\x00\xFF"s),
             Catch::Equals("blob: its replacement strings are not UTF-8 (byte 3)"));
  CHECK_THAT(charsmap_error("\x04\x00\x00\x00\x00\x00\x00\x00" "ab\x00"s), Catch::Equals("<no error>"));
}

// ---------------------------------------------------------------- decode_base64

TEST_CASE("decode_base64 reads padded and unpadded base64", "[unigram_parts]") {
  CHECK(decode_base64("TWFu") == std::optional<std::string>("Man"));
  CHECK(decode_base64("TWE=") == std::optional<std::string>("Ma"));
  CHECK(decode_base64("TQ==") == std::optional<std::string>("M"));
  CHECK(decode_base64("TWE") == std::optional<std::string>("Ma"));
  CHECK(decode_base64("TQ") == std::optional<std::string>("M"));
  CHECK(decode_base64("") == std::optional<std::string>(""));
  CHECK(decode_base64("+/8=") == std::optional<std::string>("\xFB\xFF"));
}

TEST_CASE("decode_base64 refuses what is not base64 and says where", "[unigram_parts]") {
  const auto bad_at = [](std::string_view text) -> std::optional<std::size_t> {
    std::size_t at = 12345;
    if (decode_base64(text, &at)) return std::nullopt;
    return at;
  };
  CHECK(bad_at("TW*u") == std::optional<std::size_t>(2));
  CHECK(bad_at("TWFuT") == std::optional<std::size_t>(5));    // a lone character after a full group
  CHECK(bad_at("TWF=") == std::optional<std::size_t>(2));     // F leaves bits that are not zero
  CHECK(bad_at("TQ=") == std::optional<std::size_t>(2));      // padding that does not end a group of 4
  CHECK(bad_at("TWFu==") == std::optional<std::size_t>(4));
  CHECK(bad_at("TWFu====") == std::optional<std::size_t>(4));  // more than two '=': the first is bad
  CHECK(bad_at("T=Fu") == std::optional<std::size_t>(1));
  CHECK(bad_at("=") == std::optional<std::size_t>(0));
  CHECK(bad_at("TWE=") == std::nullopt);
  CHECK_FALSE(decode_base64("TWF="));  // no bad_at pointer
}

// ---------------------------------------------------------------- metaspace_split

TEST_CASE("metaspace_split puts the replacement before each word and cuts before it", "[unigram_parts]") {
  const auto r = split("hello world", {});
  CHECK(r.text == u2581 + "hello" + u2581 + "world");
  CHECK(r.pieces == ranges{{0, 8}, {8, 16}});
  CHECK(r.alignments[0] == std::pair<std::uint32_t, std::uint32_t>{0, 1});   // the prepended one: h's
  CHECK(r.alignments[8] == std::pair<std::uint32_t, std::uint32_t>{5, 6});   // the space's
  CHECK(r.alignments[10] == std::pair<std::uint32_t, std::uint32_t>{5, 6});

  const auto two = split("a  b", {});
  CHECK(two.text == u2581 + "a" + u2581 + u2581 + "b");
  CHECK(two.pieces == ranges{{0, 4}, {4, 7}, {7, 11}});  // ▁a, ▁, ▁b

  const auto trailing = split("a ", {});
  CHECK(trailing.text == u2581 + "a" + u2581);
  CHECK(trailing.pieces == ranges{{0, 4}, {4, 7}});

  const auto leading = split(" a", {});  // already starts with one: nothing prepended
  CHECK(leading.text == u2581 + "a");
  CHECK(leading.pieces == ranges{{0, 4}});
  CHECK(leading.alignments == pairs{{0, 1}, {0, 1}, {0, 1}, {1, 2}});

  CHECK(split("", {}).pieces.empty());
}

TEST_CASE("metaspace_split follows prepend_scheme and split", "[unigram_parts]") {
  metaspace_options first;
  first.prepend = prepend_scheme::first;
  const auto not_start = split("a b", first, false);
  CHECK(not_start.text == "a" + u2581 + "b");
  CHECK(not_start.pieces == ranges{{0, 1}, {1, 5}});
  const auto at_start = split("a b", first, true);
  CHECK(at_start.text == u2581 + "a" + u2581 + "b");
  CHECK(at_start.pieces == ranges{{0, 4}, {4, 8}});

  metaspace_options never;
  never.prepend = prepend_scheme::never;
  const auto n = split("a b", never, true);
  CHECK(n.text == "a" + u2581 + "b");
  CHECK(n.pieces == ranges{{0, 1}, {1, 5}});

  metaspace_options whole;
  whole.split = false;
  const auto w = split("a b", whole);
  CHECK(w.text == u2581 + "a" + u2581 + "b");
  CHECK(w.pieces == ranges{{0, 8}});

  metaspace_options underscore;
  underscore.replacement = "_";
  const auto u = split("ab c", underscore);
  CHECK(u.text == "_ab_c");
  CHECK(u.pieces == ranges{{0, 3}, {3, 5}});
}

// ---------------------------------------------------------------- unigram_model

TEST_CASE("unigram_model picks the split with the highest total score over the greedy longest match",
          "[unigram_parts]") {
  const unigram_model m({{"<unk>", 0.0}, {"a", -1.0}, {"b", -2.5}, {"c", -3.0}, {"ab", -1.0}, {"bc", -1.0}}, 0, false,
                        "src");
  // ab|c scores -4, a|b|c -6.5, a|bc -2
  CHECK(tokens(m, "abc") == std::vector<token_triple>{{1, 0, 1}, {5, 1, 3}});
  CHECK(tokens(m, "ab") == std::vector<token_triple>{{4, 0, 2}});
  CHECK(tokens(m, "cab") == std::vector<token_triple>{{3, 0, 1}, {4, 1, 3}});
  CHECK(m.size() == 6);
  CHECK(m.unk_id() == std::optional<std::int32_t>(0));
  CHECK_FALSE(m.byte_fallback());
}

TEST_CASE("unigram_model breaks ties for the first candidate found", "[unigram_parts]") {
  // x|y and xy both score -2: xy (from the earlier start) reaches the end first and stays
  const unigram_model joined({{"<unk>", 0.0}, {"x", -1.0}, {"y", -1.0}, {"xy", -2.0}}, 0, false, "src");
  CHECK(tokens(joined, "xy") == std::vector<token_triple>{{3, 0, 2}});
  // ab|c and a|bc both score -2: bc (starting at 1) is offered before c (starting at 2)
  const unigram_model split_late({{"<unk>", 0.0}, {"a", -1.0}, {"b", -5.0}, {"c", -1.0}, {"ab", -1.0}, {"bc", -1.0}},
                                 0, false, "src");
  CHECK(tokens(split_late, "abc") == std::vector<token_triple>{{1, 0, 1}, {5, 1, 3}});
}

TEST_CASE("unigram_model fuses a run of unknown characters into one unk token", "[unigram_parts]") {
  const unigram_model m({{"<unk>", 0.0}, {"a", -1.0}}, 0, false, "src");
  // a € é a: the unknown € (3 bytes) and é (2 bytes) are one token
  CHECK(tokens(m, "a\xE2\x82\xAC\xC3\xA9" "a") == std::vector<token_triple>{{1, 0, 1}, {0, 1, 6}, {1, 6, 7}});
  CHECK(tokens(m, "\xE2\x82\xAC") == std::vector<token_triple>{{0, 0, 3}});
  CHECK(tokens(m, "zz" "a" "z") == std::vector<token_triple>{{0, 0, 2}, {1, 2, 3}, {0, 3, 4}});
}

TEST_CASE("unigram_model byte_fallback spells unknown text as byte tokens or else unk", "[unigram_parts]") {
  const unigram_model m({{"<unk>", 0.0}, {"a", -1.0}, {"<0xE2>", -2.0}, {"<0x82>", -2.0}, {"<0xAC>", -2.0}}, 0, true,
                        "src");
  CHECK(m.byte_fallback());
  // each byte token spans the whole unknown run
  CHECK(tokens(m, "a\xE2\x82\xAC") == std::vector<token_triple>{{1, 0, 1}, {2, 1, 4}, {3, 1, 4}, {4, 1, 4}});
  CHECK(tokens(m, "\xE2\x82\xAC\xE2\x82\xAC") ==
        std::vector<token_triple>{{2, 0, 6}, {3, 0, 6}, {4, 0, 6}, {2, 0, 6}, {3, 0, 6}, {4, 0, 6}});
  // é's bytes C3 A9 have no tokens: the run € é is one <unk>
  CHECK(tokens(m, "\xE2\x82\xAC\xC3\xA9" "a") == std::vector<token_triple>{{0, 0, 5}, {1, 5, 6}});

  const unigram_model missing({{"<unk>", 0.0}, {"a", -1.0}, {"<0xE2>", -2.0}, {"<0x82>", -2.0}}, 0, true, "src");
  CHECK(tokens(missing, "\xE2\x82\xAC" "a") == std::vector<token_triple>{{0, 0, 3}, {1, 3, 4}});
}

TEST_CASE("unigram_model without unk_id refuses an unknown character", "[unigram_parts]") {
  const unigram_model m({{"a", -1.0}}, std::nullopt, false, "src");
  CHECK(tokens(m, "aa") == std::vector<token_triple>{{0, 0, 1}, {0, 1, 2}});
  std::vector<model_token> out;
  CHECK_THROWS_MATCHES(m.tokenize("ab", out), text_error,
                       Catch::Message("text: the Unigram model has no unk_id, and a character is not in its vocabulary"));
}

TEST_CASE("unigram_model refuses an empty vocabulary and an unk_id outside it", "[unigram_parts]") {
  CHECK_THAT(model_error({}, 0), Catch::Equals("src: the Unigram vocabulary is empty"));
  CHECK_THAT(model_error({}, std::nullopt), Catch::Equals("src: the Unigram vocabulary is empty"));
  CHECK_THAT(model_error({{"a", -1.0}, {"b", -1.0}}, 2), Catch::Equals("src: unk_id 2 is outside the vocabulary of 2"));
  CHECK_THAT(model_error({{"a", -1.0}}, -1), Catch::Equals("src: unk_id -1 is outside the vocabulary of 1"));
  CHECK_THAT(model_error({{"a", -1.0}, {"b", -1.0}}, 1), Catch::Equals("<no error>"));
}

TEST_CASE("unigram_model find gives the last id of a token listed twice", "[unigram_parts]") {
  const unigram_model m({{"<unk>", 0.0}, {"a", -1.0}, {"ab", -3.0}, {"a", -2.0}}, 0, false, "src");
  CHECK(m.find("a") == std::optional<std::int32_t>(3));
  CHECK(m.find("ab") == std::optional<std::int32_t>(2));
  CHECK(m.find("<unk>") == std::optional<std::int32_t>(0));
  CHECK(m.find("b") == std::nullopt);
  CHECK(m.find("") == std::nullopt);
  CHECK(tokens(m, "a") == std::vector<token_triple>{{3, 0, 1}});
  CHECK(m.vocab()[1] == std::pair<std::string, double>{"a", -1.0});  // written back unchanged
}

// ---------------------------------------------------------------- unigram_json through load_tokenizer_json

TEST_CASE("a Unigram tokenizer.json it cannot follow is refused naming the JSON path and the problem",
          "[unigram_parts]") {
  cputrain::test::temp_dir dir;
  const auto path = dir.path() / "tokenizer.json";
  const auto write = [&](const std::string& json) { std::ofstream(path) << json; };
  const auto error_of = [&](const std::string& json) {
    write(json);
    try {
      (void)load_tokenizer_json(path);
    } catch (const text_error& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  const std::string model =
      R"("model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["▁a", -1.0], ["a", -2.0]]})";
  const std::string pre =
      R"("pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true})";
  const std::string strip = R"({"type": "Strip", "strip_left": false, "strip_right": true})";
  const std::string replace = R"({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "▁"})";
  const auto sequence = [](const std::string& a, const std::string& b) {
    return R"("normalizer": {"type": "Sequence", "normalizers": [)" + a + ", " + b + "]}";
  };
  const std::string good = "{" + model + ", " + pre + ", " + sequence(strip, replace) + "}";

  SECTION("the minimal file loads and encodes") {
    write(good);
    const tokenizer t = load_tokenizer_json(path);
    CHECK(t.family() == "Unigram");
    CHECK(t.id_count() == 3);
    // a  a : strip -> "a  a", replace -> "a▁a" (▁ aligned to the second space), Metaspace -> "▁a", "▁a"
    const encoding e = t.encode("a  a ", false);
    CHECK(e.ids == std::vector<std::int32_t>{1, 1});
    CHECK(spans_of(e.offsets) == pairs{{0, 1}, {2, 4}});
    CHECK(spans_of(e.byte_offsets) == pairs{{0, 1}, {2, 4}});
    CHECK(e.word_ids == std::vector<std::int32_t>{0, 1});
    // b is unknown: ▁b is one <unk>
    const encoding u = t.encode("a  b", false);
    CHECK(u.ids == std::vector<std::int32_t>{1, 0});
    CHECK(spans_of(u.offsets) == pairs{{0, 1}, {2, 4}});
  }
  SECTION("normalizers it does not implement") {
    // Every normalizer type Hugging Face's tokenizers 0.23 writes is implemented; a later one is refused.
    CHECK_THAT(error_of("{" + model + ", " + pre + ", " + sequence(strip, R"({"type": "NFKCCasefold"})") + "}"),
               Catch::Contains("tokenizer.json: normalizer.normalizers[1].type is \"NFKCCasefold\", which cputrain "
                               "does not implement here; it implements \"Sequence\", \"Precompiled\", \"NFC\", "
                               "\"NFD\", \"NFKC\", \"NFKD\", \"Lowercase\", \"StripAccents\", \"Strip\", "
                               "\"Replace\", \"Prepend\", \"Nmt\", \"BertNormalizer\", \"ByteLevel\""));
    CHECK_THAT(error_of("{" + model + ", " + pre + R"(, "normalizer": {"type": "NFKCCasefold"}})"),
               Catch::Contains("tokenizer.json: normalizer.type is \"NFKCCasefold\""));
    CHECK_THAT(
        error_of("{" + model + ", " + pre + ", " +
                 sequence(strip, R"({"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "})") + "}"),
        Catch::Contains("tokenizer.json: normalizer.normalizers[1].pattern.Regex is \"\\\\s+\"; cputrain implements "
                        "regexes of one repeated character"));
  }
  SECTION("a Precompiled charsmap that is not base64 or is damaged") {
    CHECK_THAT(error_of("{" + model + ", " + pre +
                        R"(, "normalizer": {"type": "Precompiled", "precompiled_charsmap": "TW*u"}})"),
               Catch::Contains("tokenizer.json: normalizer.precompiled_charsmap is not base64 (at character 2)"));
    // AAAAAA== is four zero bytes: a trie size of 0
    CHECK_THAT(error_of("{" + model + ", " + pre +
                        R"(, "normalizer": {"type": "Precompiled", "precompiled_charsmap": "AAAAAA=="}})"),
               Catch::Contains("tokenizer.json: normalizer.precompiled_charsmap is refused: the charsmap: its trie is "
                               "empty"));
  }
  SECTION("a Metaspace pre-tokenizer it cannot follow") {
    CHECK_THAT(error_of("{" + model + ", " + sequence(strip, replace) +
                        R"(, "pre_tokenizer": {"type": "Metaspace", "replacement": "▁▁", "prepend_scheme": "always"}})"),
               Catch::Contains("tokenizer.json: pre_tokenizer.replacement is \"▁▁\", expected one character"));
    CHECK_THAT(
        error_of("{" + model + ", " + sequence(strip, replace) +
                 R"(, "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}})"),
        Catch::Contains("tokenizer.json: pre_tokenizer.prepend_scheme is \"sometimes\", expected \"always\", "
                        "\"first\" or \"never\""));
    CHECK_THAT(error_of("{" + model + ", " + sequence(strip, replace) + R"(, "pre_tokenizer": {"type": "ByteLevel"}})"),
               Catch::Contains("tokenizer.json: pre_tokenizer.type is \"ByteLevel\", which cputrain does not implement "
                               "here; it implements \"Sequence\", \"Metaspace\", \"BertPreTokenizer\""));
  }
  SECTION("a Unigram model it cannot follow") {
    CHECK_THAT(error_of("{" + pre + ", " + sequence(strip, replace) +
                        R"(, "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a"]]}})"),
               Catch::Contains("tokenizer.json: model.vocab[1] is [\"a\"], expected [token, score]"));
    CHECK_THAT(error_of("{" + pre + ", " + sequence(strip, replace) +
                        R"(, "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], [1, -1.0]]}})"),
               Catch::Contains("tokenizer.json: model.vocab[1] is [1,-1.0], expected [token, score]"));
    CHECK_THAT(error_of("{" + pre + ", " + sequence(strip, replace) +
                        R"(, "model": {"type": "Unigram", "unk_id": 99, "vocab": [["<unk>", 0.0], ["a", -1.0]]}})"),
               Catch::Contains("tokenizer.json: model.unk_id is 99, outside the vocabulary of 2"));
  }
}

}  // namespace unigram_parts_test
