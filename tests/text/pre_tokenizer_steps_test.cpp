// Tests for include/cputrain/text/pre_tokenizer_steps.hpp (with pre_tokenized_text.hpp, pre_tokenizer_json.hpp and
// pre_tokenizer_char_classes.hpp): each of Hugging Face's pre-tokenizers against the Rust tokenizer
// (scripts/make_pre_tokenizer_reference.cjs): whole encodings of xlmr_cut with its pre-tokenizer replaced by each
// of 24 variants, the pieces of the raw texts, and every code point through Whitespace, Digits and UnicodeScripts.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/text/char_positions.hpp"
#include "cputrain/text/load_tokenizer.hpp"
#include "cputrain/text/pre_tokenized_text.hpp"
#include "cputrain/text/pre_tokenizer_json.hpp"
#include "cputrain/text/pre_tokenizer_steps.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/text/unigram_json_writer.hpp"
#include "cputrain/text/unigram_tokenizer.hpp"
#include "support/sanitizers.hpp"
#include "support/temp_dir.hpp"
#include "support/token_hash.hpp"
#include "support/tokenizer_json_variant.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace pre_tokenizer_steps_test {

using namespace cputrain::text;
using spans = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
using pieces = std::vector<std::pair<std::string, std::pair<std::uint32_t, std::uint32_t>>>;

std::string data(const std::string& name) { return std::string(CPUTRAIN_TEXT_TEST_DATA) + "/" + name; }

pre_tokenizer_chain chain_of(const nlohmann::json& json) {
  std::vector<pre_tokenizer_chain::step> steps;
  detail::read_pre_tokenizer(detail::json_at("test.json", json, "pre_tokenizer"), steps);
  return pre_tokenizer_chain(std::move(steps));
}

// The words `chain` cuts `text` (not normalized) into, with their code-point offsets in it.
pieces pieces_of(const pre_tokenizer_chain& chain, const std::string& text) {
  normalized_text whole(text);
  pre_tokenized_text words;
  words.assign(whole);
  chain.apply(words, 0);
  const char_positions positions(text);
  pieces out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const text_span o = words[i].original(0, words[i].str().size());
    const text_span chars = positions.chars(o.begin, o.end);
    out.push_back({words[i].str(), {chars.begin, chars.end}});
  }
  return out;
}

std::vector<std::string> words_of(const pre_tokenizer_chain& chain, const std::string& text) {
  std::vector<std::string> out;
  for (const auto& p : pieces_of(chain, text)) out.push_back(p.first);
  return out;
}

nlohmann::json split_on_space(const char* behavior) {
  return {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", behavior}, {"invert", false}};
}

TEST_CASE("each behaviour keeps, drops or joins the delimiters as Hugging Face's split does") {
  using words = std::vector<std::string>;
  const std::string text = "How are  you?";
  CHECK(words_of(chain_of(split_on_space("Removed")), text) == words{"How", "are", "you?"});
  CHECK(words_of(chain_of(split_on_space("Isolated")), text) == words{"How", " ", "are", " ", " ", "you?"});
  CHECK(words_of(chain_of(split_on_space("MergedWithPrevious")), text) == words{"How ", "are ", " ", "you?"});
  CHECK(words_of(chain_of(split_on_space("MergedWithNext")), text) == words{"How", " are", " ", " you?"});
  CHECK(words_of(chain_of(split_on_space("Contiguous")), text) == words{"How", " ", "are", "  ", "you?"});
  auto inverted = split_on_space("Removed");
  inverted["invert"] = true;  // the spaces are the words
  CHECK(words_of(chain_of(inverted), text) == words{" ", " ", " "});
}

TEST_CASE("every pre-tokenizer, alone and in sequences, gives Hugging Face's ids, offsets and word ids") {
  // xlmr_cut with its pre-tokenizer replaced by each variant of make_pre_tokenizer_reference.cjs's texts mode.
  std::ifstream records_in(data("unigram_pre_tokenizers_reference.jsonl"));
  REQUIRE(records_in);
  std::ifstream in(data("xlmr_cut/tokenizer.json"));
  REQUIRE(in);
  const auto base = nlohmann::ordered_json::parse(in);
  cputrain::test::temp_dir dir;
  std::optional<tokenizer> t;
  int loaded = -1, variants = 0, written_back = 0;
  std::size_t records = 0, words_cut = 0;
  for (std::string line; std::getline(records_in, line); ++records) {
    const auto r = nlohmann::json::parse(line);
    INFO("pre-tokenizer: " << r["pre_tokenizer"].dump() << ", text: " << r["text"].dump());
    if (r["variant"].get<int>() != loaded) {
      loaded = r["variant"].get<int>();
      ++variants;
      t.emplace(load_tokenizer_json(
          cputrain::test::write_tokenizer_json_variant(base, "pre_tokenizer", r["pre_tokenizer"], loaded, dir.path())));
      // Written back, the pre-tokenizer is the file's (an empty Sequence is written as none).
      const auto& unigram = std::get<unigram_tokenizer>(t->get());
      const auto written = nlohmann::json::parse(to_tokenizer_json(unigram, t->specials())["pre_tokenizer"].dump());
      const auto& p = r["pre_tokenizer"];
      const bool none = p.contains("pretokenizers") && p["pretokenizers"].empty();
      written_back += written == r["pre_tokenizer"] || (none && written.is_null());
    }
    const std::string text = r["text"];
    const encoding e = t->encode(text);
    CHECK(e.ids == r["ids"].get<std::vector<std::int32_t>>());
    spans offsets;
    for (const auto& o : e.offsets) offsets.emplace_back(o.begin, o.end);
    CHECK(offsets == r["offsets"].get<spans>());
    CHECK(e.word_ids == r["word_ids"].get<std::vector<std::int32_t>>());
    const auto& chain = std::get<unigram_tokenizer>(t->get()).pre_tokenizer();
    const auto expected = r["pieces"].get<pieces>();
    CHECK(pieces_of(chain, text) == expected);
    words_cut += expected.size();
  }
  CHECK(records > 1000);
  CHECK(variants == 24);
  CHECK(written_back == 24);
  CHECK(words_cut > 5000);
}

TEST_CASE("every Unicode code point is a word character, a number and of a script as Hugging Face counts it") {
  // The sweep checks the generated tables, which the release builds' run covers whole; under ASan (9x slower here:
  // 29 s) every 16th block still runs the cuts through the sanitizers.
  const std::size_t stride = CPUTRAIN_TEST_ASAN ? 16 : 1;
  std::ifstream in(data("pre_tokenizer_sweep.json"));
  REQUIRE(in);
  const auto sweep = nlohmann::json::parse(in);
  const auto block = sweep["block"].get<char32_t>();
  REQUIRE(sweep["sweeps"].size() == 3);
  for (const auto& s : sweep["sweeps"]) {
    const pre_tokenizer_chain chain = chain_of(s["pre_tokenizer"]);
    const auto& blocks = s["blocks"];
    REQUIRE(blocks.size() == 0x110000 / block);
    for (std::size_t b = 0; b < blocks.size(); b += stride) {
      std::string text;
      for (char32_t c = static_cast<char32_t>(b) * block; c < (static_cast<char32_t>(b) + 1) * block; ++c) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        std::string ch;
        append_utf8(ch, c);
        text += "a" + ch + "a \xD0\xB6" + ch + "\xD0\xB6 " + ch + ch + "1 ";
      }
      token_sequence words;
      for (const auto& [word, span] : pieces_of(chain, text)) words.push_back(0, {span.first, span.second}, {}, 0);
      INFO(s["pre_tokenizer"].dump() << ", code points from U+" << std::hex << b * block);
      CHECK(words.size() == blocks[b]["pieces"].get<std::size_t>());
      CHECK(cputrain::test::token_hash(words) == blocks[b]["hash"].get<std::uint32_t>());
    }
  }
}

TEST_CASE("a pre-tokenizer cputrain does not take is refused naming the JSON path and the problem") {
  const auto error_of = [](const nlohmann::json& json) {
    try {
      (void)chain_of(json);
    } catch (const text_error& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  CHECK(error_of(nullptr) == "<no error>");
  const nlohmann::json regex = {{"Regex", "\\s+"}};
  CHECK_THAT(error_of({{"type", "Split"}, {"pattern", regex}, {"behavior", "Removed"}, {"invert", false}}),
             Catch::Contains("test.json: pre_tokenizer.pattern.Regex is \"\\\\s+\"") &&
                 Catch::Contains("not yet a regex"));
  CHECK_THAT(error_of({{"type", "Split"}, {"pattern", {{"String", ""}}}, {"behavior", "Removed"}, {"invert", false}}),
             Catch::Contains("pre_tokenizer.pattern.String is empty"));
  CHECK_THAT(error_of(split_on_space("Dropped")), Catch::Contains("pre_tokenizer.behavior is \"Dropped\", expected"));
  CHECK_THAT(error_of({{"type", "CharDelimiterSplit"}, {"delimiter", "--"}}),
             Catch::Contains("pre_tokenizer.delimiter is \"--\", expected one character"));
  CHECK_THAT(error_of({{"type", "Sequence"}, {"pretokenizers", {{{"type", "ByteLevel"}}}}}),
             Catch::Contains("pre_tokenizer.pretokenizers[0].type is \"ByteLevel\""));
  CHECK_THAT(error_of({{"type", "Sequence"}, {"pretokenizers", "Whitespace"}}),
             Catch::Contains("pre_tokenizer.pretokenizers is \"Whitespace\", expected an array of pre-tokenizers"));
}

}  // namespace pre_tokenizer_steps_test
