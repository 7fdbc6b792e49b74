// Tests for include/cputrain/text/load_tokenizer.hpp (with wordpiece_json.hpp and tokenizer_json.hpp's
// post-processors): which files a model directory's tokenizer comes from, what tokenizer_config.json changes, and
// the files it refuses, each named with the JSON path and what was expected.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/text/load_tokenizer.hpp"
#include "support/temp_dir.hpp"
#include "support/wordpiece_json.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace load_tokenizer_test {

using namespace cputrain::text;
using cputrain::test::write_json;
using nlohmann::json;

namespace {

const std::vector<std::string> small_vocab{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "Hello",
                                           "!", "##s"};

std::string data(const std::string& name) { return std::string(CPUTRAIN_TEXT_TEST_DATA) + "/" + name; }

void write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
}

/// The message load_tokenizer throws for a directory whose tokenizer.json is `edit`ed from the small one.
template <class Edit>
std::string refusal(Edit&& edit) {
  const cputrain::test::temp_dir dir;
  json j = cputrain::test::wordpiece_tokenizer_json(small_vocab);
  edit(j);
  write_json(dir.path() / "tokenizer.json", j);
  try {
    (void)load_tokenizer(dir.path());
  } catch (const text_error& e) {
    const std::string message = e.what();
    CHECK(message.find((dir.path() / "tokenizer.json").string()) != std::string::npos);
    return message;
  }
  FAIL("load_tokenizer accepted the edited tokenizer.json");
  return {};
}

}  // namespace

TEST_CASE("WordPiece from tokenizer.json, with tokenizer_config.json's do_lower_case over its normalizer") {
  const cputrain::test::temp_dir dir;
  write_json(dir.path() / "tokenizer.json", cputrain::test::wordpiece_tokenizer_json(small_vocab));
  const tokenizer lowered = load_tokenizer(dir.path());
  CHECK(lowered.encode("Hello worlds!").ids == std::vector<std::int32_t>{2, 5, 6, 9, 8, 3});
  write_json(dir.path() / "tokenizer_config.json", json{{"do_lower_case", false}});
  const tokenizer cased = load_tokenizer(dir.path());
  CHECK(cased.encode("Hello worlds!").ids == std::vector<std::int32_t>{2, 7, 6, 9, 8, 3});
  // The special tokens written in the text are found on the raw text, as the added tokens ask.
  CHECK(cased.encode("[MASK]hello").ids == std::vector<std::int32_t>{2, 4, 5, 3});
}

TEST_CASE("tokenizer_config.json names the pad token, tokenizer.json's padding too, and a missing one is refused") {
  const cputrain::test::temp_dir dir;
  json j = cputrain::test::wordpiece_tokenizer_json(small_vocab);
  write_json(dir.path() / "tokenizer.json", j);
  write_json(dir.path() / "tokenizer_config.json", json{{"pad_token", {{"content", "[MASK]"}}}});
  CHECK(load_tokenizer(dir.path()).specials().pad == 4);
  write_json(dir.path() / "tokenizer_config.json", json{{"pad_token", "<nope>"}});
  CHECK_THROWS_WITH(load_tokenizer(dir.path()),
                    Catch::Contains("tokenizer_config.json: pad_token names \"<nope>\"") &&
                        Catch::Contains("does not have"));
  std::filesystem::remove(dir.path() / "tokenizer_config.json");
  j["padding"] = {{"pad_id", 1}, {"pad_token", "[UNK]"}};
  write_json(dir.path() / "tokenizer.json", j);
  CHECK(load_tokenizer(dir.path()).specials().pad == 1);
}

TEST_CASE("a tokenizer with ids beyond config.json's vocab_size is refused, naming both sizes") {
  const cputrain::test::temp_dir dir;
  write_json(dir.path() / "tokenizer.json", cputrain::test::wordpiece_tokenizer_json(small_vocab));
  write_json(dir.path() / "config.json", json{{"model_type", "bert"}, {"vocab_size", 8}});
  CHECK_THROWS_WITH(load_tokenizer(dir.path()),
                    Catch::Contains("config.json: vocab_size is 8") && Catch::Contains("ids up to 9"));
  CHECK(load_tokenizer(dir.path(), {.check_config_vocab_size = false}).id_count() == 10);  // run_qa checks itself
  write_json(dir.path() / "config.json", json{{"model_type", "bert"}, {"vocab_size", 12}});  // padded tables are fine
  CHECK(load_tokenizer(dir.path()).id_count() == 10);
}

TEST_CASE("a WordPiece tokenizer.json set up otherwise than BERT's is read as Hugging Face runs it") {
  // Each of these leaves bert_tokenizer's one-pass path for the general one; pre_tokenizer_steps_test and
  // wordpiece_tokenizer_test compare them with the reference.
  const auto load = [](auto&& edit) {
    const cputrain::test::temp_dir dir;
    json j = cputrain::test::wordpiece_tokenizer_json(small_vocab);
    edit(j);
    write_json(dir.path() / "tokenizer.json", j);
    return load_tokenizer(dir.path());
  };
  const auto ids = [](const tokenizer& t, const char* text) { return t.encode(text).ids; };
  using ids_t = std::vector<std::int32_t>;
  // BERT's own: [CLS] hello world ##s ! [SEP], lower-cased.
  CHECK(ids(load([](json&) {}), "Hello worlds!") == ids_t{2, 5, 6, 9, 8, 3});
  CHECK(std::holds_alternative<bert_tokenizer>(load([](json&) {}).get()));
  // No normalizer: "Hello" keeps its capital.
  const tokenizer cased = load([](json& j) { j["normalizer"] = nullptr; });
  CHECK(std::holds_alternative<wordpiece_tokenizer>(cased.get()));
  CHECK(ids(cased, "Hello worlds!") == ids_t{2, 7, 6, 9, 8, 3});
  // WhitespaceSplit keeps "worlds!" one word, which no token spells to the end: [UNK].
  CHECK(ids(load([](json& j) { j["pre_tokenizer"] = {{"type", "WhitespaceSplit"}}; }), "hello worlds!") ==
        ids_t{2, 5, 1, 3});
  // Another prefix: "##s" is no continuation any more, so "worlds" is unknown.
  CHECK(ids(load([](json& j) { j["model"]["continuing_subword_prefix"] = "@@"; }), "hello worlds") ==
        ids_t{2, 5, 1, 3});
  // An added token beyond BERT's, and one matched after normalization.
  CHECK(ids(load([](json& j) {
          j["added_tokens"].push_back({{"id", 10}, {"content", "<new>"}, {"normalized", false}, {"special", true}});
          j["added_tokens"].push_back({{"id", 11}, {"content", "big world"}, {"normalized", true}, {"special", false}});
        }),
            "hello<new>BIG WORLD!") == ids_t{2, 5, 10, 11, 8, 3});
}

TEST_CASE("WordPiece tokenizer.json settings cputrain does not implement are refused at their JSON path") {
  CHECK_THAT(refusal([](json& j) { j["normalizer"]["type"] = "Lowercased"; }),
             Catch::Contains("normalizer.type is \"Lowercased\"") && Catch::Contains("BertNormalizer"));
  CHECK_THAT(refusal([](json& j) { j["pre_tokenizer"]["type"] = "ByteLevel"; }),
             Catch::Contains("pre_tokenizer.type is \"ByteLevel\""));
  CHECK_THAT(refusal([](json& j) { j["model"]["unk_token"] = "<unk>"; }),
             Catch::Contains("model.unk_token is \"<unk>\"") && Catch::Contains("is not in the vocabulary"));
  CHECK_THAT(refusal([](json& j) { j["model"]["vocab"]["hello"] = 42; }),
             Catch::Contains("model.vocab.hello is 42") && Catch::Contains("ids 0 to 9"));
  CHECK_THAT(refusal([](json& j) { j["model"]["vocab"]["hello"] = 6; }),
             Catch::Contains("which \"world\" has too") || Catch::Contains("which \"hello\" has too"));
  CHECK_THAT(refusal([](json& j) { j["added_tokens"].push_back({{"id", 12}, {"content", ""}}); }),
             Catch::Contains("added_tokens[5].content is empty"));
  CHECK_THAT(refusal([](json& j) { j["post_processor"]["pair"].erase(4); }),
             Catch::Contains("post_processor.pair is neither BERT's"));
  CHECK_THAT(refusal([](json& j) { j["post_processor"]["special_tokens"].erase("[SEP]"); }),
             Catch::Contains("post_processor.special_tokens has no entry for \"[SEP]\""));
  CHECK_THAT(refusal([](json& j) { j["post_processor"] = {{"type", "Sequence"}}; }),
             Catch::Contains("post_processor.processors is null, expected an array of post-processors"));
  CHECK_THAT(refusal([](json& j) {
               j["post_processor"] = {{"type", "Sequence"}, {"processors", {j["post_processor"], j["post_processor"]}}};
             }),
             Catch::Contains("post_processor.processors[1] adds special tokens after another post-processor"));
  CHECK_THAT(refusal([](json& j) { j["post_processor"] = {{"type", "Passthrough"}}; }),
             Catch::Contains("post_processor.type is \"Passthrough\""));
  CHECK_THAT(refusal([](json& j) { j["model"] = {{"type", "WordLevel"}, {"vocab", json::object()}}; }),
             Catch::Contains("model.type is \"WordLevel\"") && Catch::Contains("\"Unigram\""));
}

TEST_CASE("BertProcessing and RoBERTa's template give the same layouts as their TemplateProcessing") {
  const cputrain::test::temp_dir dir;
  json j = cputrain::test::wordpiece_tokenizer_json(small_vocab);
  j["post_processor"] = {{"type", "BertProcessing"}, {"sep", {"[SEP]", 3}}, {"cls", {"[CLS]", 2}}};
  write_json(dir.path() / "tokenizer.json", j);
  const encoding bert = load_tokenizer(dir.path()).encode_pair("hello", "world");
  CHECK(bert.ids == std::vector<std::int32_t>{2, 5, 3, 6, 3});
  CHECK(bert.type_ids == std::vector<std::int32_t>{0, 0, 0, 1, 1});
  // XLM-RoBERTa's tokenizer.json writes RoBERTa's layout as a template.
  const auto special = [](const char* name) { return json{{"SpecialToken", {{"id", name}, {"type_id", 0}}}}; };
  const auto sequence = [](const char* id) { return json{{"Sequence", {{"id", id}, {"type_id", 0}}}}; };
  j["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", {special("[CLS]"), sequence("A"), special("[SEP]")}},
      {"pair", {special("[CLS]"), sequence("A"), special("[SEP]"), special("[SEP]"), sequence("B"), special("[SEP]")}},
      {"special_tokens",
       {{"[CLS]", {{"id", "[CLS]"}, {"ids", {2}}, {"tokens", {"[CLS]"}}}},
        {"[SEP]", {{"id", "[SEP]"}, {"ids", {3}}, {"tokens", {"[SEP]"}}}}}}};
  write_json(dir.path() / "tokenizer.json", j);
  const encoding roberta = load_tokenizer(dir.path()).encode_pair("hello", "world");
  CHECK(roberta.ids == std::vector<std::int32_t>{2, 5, 3, 3, 6, 3});
  CHECK(roberta.type_ids == std::vector<std::int32_t>{0, 0, 0, 0, 0, 0});
}

TEST_CASE("legacy files: vocab.txt, or vocab.json with merges.txt by tokenizer_class or model_type") {
  const cputrain::test::temp_dir dir;
  std::string vocab_txt;
  for (const auto& t : small_vocab) vocab_txt += t + "\n";
  write_text(dir.path() / "vocab.txt", vocab_txt);
  CHECK(load_tokenizer(dir.path()).family() == "WordPiece");
  CHECK(load_tokenizer(dir.path() / "vocab.txt").encode("hello").ids == std::vector<std::int32_t>{2, 5, 3});
  std::filesystem::remove(dir.path() / "vocab.txt");

  write_json(dir.path() / "vocab.json", json{{"<s>", 0}, {"<pad>", 1}, {"</s>", 2}, {"<unk>", 3}, {"h", 4}, {"i", 5},
                                             {"hi", 6}, {"<mask>", 7}});
  write_text(dir.path() / "merges.txt", "#version: 0.2\nh i\n");
  CHECK_THROWS_WITH(load_tokenizer(dir.path()), Catch::Contains("neither") && Catch::Contains("tokenizer_class"));
  write_json(dir.path() / "config.json", json{{"model_type", "roberta"}});
  const tokenizer roberta = load_tokenizer(dir.path());
  CHECK(roberta.specials().layout == special_layout::roberta);
  CHECK(roberta.specials().pad == 1);
  CHECK(roberta.encode_pair("hi", "hi").ids == std::vector<std::int32_t>{0, 6, 2, 2, 6, 2});
  write_json(dir.path() / "tokenizer_config.json", json{{"tokenizer_class", "GPT2Tokenizer"}});
  const tokenizer gpt2 = load_tokenizer(dir.path());
  CHECK(gpt2.specials().layout == special_layout::none);
  CHECK(gpt2.encode("hi").ids == std::vector<std::int32_t>{6});
  write_json(dir.path() / "tokenizer_config.json", json{{"tokenizer_class", "XLNetTokenizer"}});
  CHECK_THROWS_WITH(load_tokenizer(dir.path()), Catch::Contains("tokenizer_class is \"XLNetTokenizer\""));
}

TEST_CASE("a directory without a tokenizer cputrain reads says what it looked for") {
  const cputrain::test::temp_dir dir;
  CHECK_THROWS_WITH(load_tokenizer(dir.path()), Catch::Contains("looked for tokenizer.json, vocab.txt"));
  write_text(dir.path() / "sentencepiece.bpe.model", "not read");
  CHECK_THROWS_WITH(load_tokenizer(dir.path()), Catch::Contains("SentencePiece"));
  CHECK_THROWS_WITH(load_tokenizer(dir.path() / "missing"), Catch::Contains("no such file or directory"));
  write_text(dir.path() / "tokenizer.json", "{\"model\": ");
  CHECK_THROWS_WITH(load_tokenizer(dir.path()), Catch::Contains("tokenizer.json: not valid JSON"));
}

TEST_CASE("byte-level tokenizer.json takes tokenizer_config.json's add_prefix_space") {
  const cputrain::test::temp_dir dir;
  std::filesystem::copy_file(data("gpt2_cut/tokenizer.json"), dir.path() / "tokenizer.json");
  const auto plain = load_tokenizer(dir.path()).encode("hello", false).ids;
  write_json(dir.path() / "tokenizer_config.json", json{{"add_prefix_space", true}});
  const auto prefixed = load_tokenizer(dir.path()).encode("hello", false).ids;
  CHECK(prefixed == load_tokenizer(dir.path()).encode(" hello", false).ids);
  CHECK(prefixed != plain);
}

}  // namespace load_tokenizer_test
