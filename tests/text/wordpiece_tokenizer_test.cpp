// Tests for include/cputrain/text/wordpiece_tokenizer.hpp (with wordpiece_model.hpp, model_tokenizer.hpp,
// tokenizer_pipeline.hpp, wordpiece_json.hpp and wordpiece_json_writer.hpp): WordPiece tokenizer.json files set up
// otherwise than BERT's against Hugging Face's Rust tokenizer (tests/text/data/wordpiece_cut, a vocabulary made from
// xlmr_cut's pieces, with 7 setups: scripts/make_wordpiece_reference.cjs), written back and read again, and the
// WordPiece search on cases worked out by hand.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/text/load_tokenizer.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/text/wordpiece_json_writer.hpp"
#include "cputrain/text/wordpiece_model.hpp"
#include "cputrain/text/wordpiece_tokenizer.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace wordpiece_tokenizer_test {

using namespace cputrain::text;
using spans = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

std::string data(const std::string& name) { return std::string(CPUTRAIN_TEXT_TEST_DATA) + "/" + name; }

// `base` with a reference record's patch applied, as make_wordpiece_reference.cjs's patched() applies it.
nlohmann::ordered_json patched(nlohmann::ordered_json json, const nlohmann::json& patch) {
  for (const char* key : {"normalizer", "pre_tokenizer"})
    if (patch.contains(key)) json[key] = patch[key];
  if (patch.contains("added_tokens"))
    for (const auto& t : patch["added_tokens"]) json["added_tokens"].push_back(nlohmann::ordered_json(t));
  if (patch.contains("model"))
    for (const auto& [key, value] : patch["model"].items()) json["model"][key] = value;
  if (patch.contains("vocab_prefix")) {
    nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
    const std::string prefix = patch["vocab_prefix"];
    for (const auto& [token, id] : json["model"]["vocab"].items())
      vocab[token.starts_with("##") && token.size() > 2 ? prefix + token.substr(2) : token] = id;
    json["model"]["vocab"] = vocab;
  }
  return json;
}

spans char_spans(const std::vector<text_span>& offsets) {
  spans out;
  for (const auto& s : offsets) out.emplace_back(s.begin, s.end);
  return out;
}

TEST_CASE("WordPiece files of every setup give Hugging Face's ids, offsets and word ids, also written back") {
  std::ifstream records_in(data("wordpiece_reference.jsonl"));
  REQUIRE(records_in);
  std::ifstream in(data("wordpiece_cut/tokenizer.json"));
  REQUIRE(in);
  const auto base = nlohmann::ordered_json::parse(in);
  cputrain::test::temp_dir dir;
  std::optional<tokenizer> read, written;
  int loaded = -1, variants = 0;
  std::size_t records = 0, unknown = 0;
  for (std::string line; std::getline(records_in, line); ++records) {
    const auto r = nlohmann::json::parse(line);
    INFO("setup: " << r["patch"].dump() << ", text: " << r["text"].dump());
    if (r["variant"].get<int>() != loaded) {
      loaded = r["variant"].get<int>();
      ++variants;
      const auto file = dir.path() / ("variant-" + std::to_string(loaded) + ".json");
      std::ofstream(file) << patched(base, r["patch"]).dump();
      read.emplace(load_tokenizer_json(file));
      REQUIRE(std::holds_alternative<wordpiece_tokenizer>(read->get()));  // none of them is BERT's own setup
      const auto again = dir.path() / ("written-" + std::to_string(loaded) + ".json");
      std::ofstream(again) << to_tokenizer_json(std::get<wordpiece_tokenizer>(read->get()), read->specials()).dump();
      written.emplace(load_tokenizer_json(again));
    }
    const std::string text = r["text"];
    const auto ids = r["ids"].get<std::vector<std::int32_t>>();
    for (const tokenizer* t : {&*read, &*written}) {
      const encoding e = t->encode(text);
      CHECK(e.ids == ids);
      CHECK(char_spans(e.offsets) == r["offsets"].get<spans>());
      CHECK(e.word_ids == r["word_ids"].get<std::vector<std::int32_t>>());
    }
    for (const auto id : ids) unknown += id == 1;
  }
  CHECK(records == 231);
  CHECK(variants == 7);
  CHECK(unknown > 10);  // the whole-word unknowns were exercised
}

TEST_CASE("the WordPiece search takes the longest token, then the longest continuation, else one unknown word") {
  wordpiece_options options;
  options.continuing_subword_prefix = "@@";
  options.max_input_chars_per_word = 6;
  const wordpiece_model model({"[UNK]", "un", "unb", "@@believ", "@@able", "@@e", "é", "@@é"}, options, "test");
  const auto split = [&](const std::string& word) {
    std::vector<model_token> out;
    model.tokenize(word, out);
    std::vector<std::pair<std::int32_t, std::pair<std::uint32_t, std::uint32_t>>> pieces;
    for (const auto& t : out) pieces.push_back({t.id, {t.begin, t.end}});
    return pieces;
  };
  using pieces = std::vector<std::pair<std::int32_t, std::pair<std::uint32_t, std::uint32_t>>>;
  CHECK(split("unbe") == pieces{{2, {0, 3}}, {5, {3, 4}}});  // "unb" before "un"
  CHECK(split("éé") == pieces{{6, {0, 2}}, {7, {2, 4}}});    // bytes, whole characters
  CHECK(split("unbx") == pieces{{0, {0, 4}}});               // no token for "x": the whole word is unknown
  CHECK(split("unbelievable") == pieces{{0, {0, 12}}});      // 12 characters, more than 6
  CHECK(split("").empty());
  CHECK_THROWS_WITH(wordpiece_model({"a"}, options, "vocab.json"),
                    Catch::Contains("vocab.json: the unknown token \"[UNK]\" is not in the vocabulary"));
}

}  // namespace wordpiece_tokenizer_test
