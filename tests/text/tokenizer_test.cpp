// Tests for include/cputrain/text/tokenizer.hpp and special_tokens.hpp: one text and pairs of texts with the special
// tokens, against Hugging Face's Rust tokenizer (tests/text/data/pair_reference.jsonl, scripts/make_pair_reference.cjs)
// for BERT's layout (bert-base-uncased from its tokenizer.json and from vocab.txt) and RoBERTa's (the byte-level cut):
// ids, type ids, offsets, special-tokens masks, sequence ids and word ids.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/text/load_bert_tokenizer.hpp"
#include "cputrain/text/load_tokenizer.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/text/tokenizer_json_writer.hpp"
#include "support/conformance_data.hpp"
#include "support/temp_dir.hpp"
#include "support/tokenizer_json_variant.hpp"
#include "support/wordpiece_json.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace tokenizer_test {

using namespace cputrain::text;

namespace {

std::string data(const std::string& name) { return std::string(CPUTRAIN_TEXT_TEST_DATA) + "/" + name; }

std::vector<nlohmann::json> reference(const std::string& tokenizer_name) {
  std::ifstream in(data("pair_reference.jsonl"));
  REQUIRE(in);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    auto record = nlohmann::json::parse(line);
    if (record["tokenizer"] == tokenizer_name) out.push_back(std::move(record));
  }
  REQUIRE(out.size() > 20);
  return out;
}

void check_against(const tokenizer& t, const std::vector<nlohmann::json>& records) {
  for (const auto& r : records) {
    const std::string a = r["a"];
    const encoding e = r["b"].is_null() ? t.encode(a) : t.encode_pair(a, r["b"].get<std::string>());
    std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
    for (const auto& s : e.offsets) offsets.emplace_back(s.begin, s.end);
    std::vector<int> special(e.special_tokens_mask.begin(), e.special_tokens_mask.end());
    std::vector<int> sequence(e.sequence_ids.begin(), e.sequence_ids.end());
    INFO("a: " << a << "\nb: " << r["b"].dump());
    CHECK(e.ids == r["ids"].get<std::vector<std::int32_t>>());
    CHECK(e.type_ids == r["type_ids"].get<std::vector<std::int32_t>>());
    CHECK(offsets == r["offsets"].get<std::vector<std::pair<std::uint32_t, std::uint32_t>>>());
    CHECK(special == r["special"].get<std::vector<int>>());
    CHECK(sequence == r["sequence_ids"].get<std::vector<int>>());
    CHECK(e.word_ids == r["word_ids"].get<std::vector<std::int32_t>>());
  }
}

}  // namespace

TEST_CASE("pairs and single texts in BERT's layout equal Hugging Face's, from tokenizer.json and from vocab.txt") {
  const auto vocab = cputrain::test::conformance_file("bert-base-uncased/vocab.txt");
  if (!vocab) return;  // reported skipped, naming what is missing
  const cputrain::test::temp_dir dir;
  cputrain::test::write_json(dir.path() / "tokenizer.json",
                             cputrain::test::wordpiece_tokenizer_json(cputrain::test::read_lines(*vocab)));
  const tokenizer from_json = load_tokenizer(dir.path());
  CHECK(from_json.specials().layout == special_layout::bert);
  CHECK(from_json.family() == "WordPiece");
  check_against(from_json, reference("bert"));
  const tokenizer from_vocab(load_bert_tokenizer(*vocab));
  check_against(from_vocab, reference("bert"));
}

TEST_CASE("each post-processor of a byte-level tokenizer.json places and trims as Hugging Face's does") {
  // The byte-level cut with its post_processor replaced (scripts/make_byte_level_reference.cjs post_processors):
  // RobertaProcessing with and without trimming, TemplateProcessing alone (which trims nothing), Sequences of
  // ByteLevel and TemplateProcessing, BertProcessing, ByteLevel alone, none.
  std::ifstream in(data("byte_level_post_processor_reference.jsonl"));
  REQUIRE(in);
  std::ifstream base_in(data("gpt2_cut/tokenizer.json"));
  REQUIRE(base_in);
  const auto base = nlohmann::ordered_json::parse(base_in);
  const cputrain::test::temp_dir dir;
  std::optional<tokenizer> t;
  int loaded = -1;
  std::size_t records = 0;
  for (std::string line; std::getline(in, line); ++records) {
    const auto r = nlohmann::json::parse(line);
    if (r["variant"].get<int>() != loaded) {
      loaded = r["variant"].get<int>();
      const auto file =
          cputrain::test::write_tokenizer_json_variant(base, "post_processor", r["post_processor"], loaded, dir.path());
      t.emplace(load_tokenizer(file));
    }
    const std::string a = r["text"];
    INFO("post_processor: " << r["post_processor"].dump() << "\na: " << r["text"].dump()
                            << "\nb: " << r["pair"].dump());
    const encoding e = r["pair"].is_null() ? t->encode(a) : t->encode_pair(a, r["pair"].get<std::string>());
    std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
    for (const auto& span : e.offsets) offsets.emplace_back(span.begin, span.end);
    CHECK(e.ids == r["ids"].get<std::vector<std::int32_t>>());
    CHECK(e.type_ids == r["type_ids"].get<std::vector<std::int32_t>>());
    CHECK(offsets == r["offsets"].get<std::vector<std::pair<std::uint32_t, std::uint32_t>>>());
    CHECK(e.word_ids == r["word_ids"].get<std::vector<std::int32_t>>());
  }
  CHECK(loaded == 7);
  CHECK(records > 250);
}

TEST_CASE("byte-level files with a normalizer, or added tokens matched after it, encode as Hugging Face's") {
  // The byte-level cut with its normalizer, pre-tokenizer or added tokens replaced (make_byte_level_reference.cjs
  // normalizers): NFC as GPT-NeoX's files have it, NFKC with a prefix space, NFD with Lowercase, added tokens marked
  // normalized (roberta-base's four) with and without a normalizer, Replace, Strip and NFKC without the split pattern.
  std::ifstream in(data("byte_level_normalizer_reference.jsonl"));
  REQUIRE(in);
  std::ifstream base_in(data("gpt2_cut/tokenizer.json"));
  REQUIRE(base_in);
  const auto base = nlohmann::ordered_json::parse(base_in);
  const cputrain::test::temp_dir dir;
  std::optional<tokenizer> read, written;
  int loaded = -1;
  std::size_t records = 0, normalized_added = 0;
  for (std::string line; std::getline(in, line); ++records) {
    const auto r = nlohmann::json::parse(line);
    INFO("sections: " << r["sections"].dump() << "\ntext: " << r["text"].dump());
    if (r["variant"].get<int>() != loaded) {
      loaded = r["variant"].get<int>();
      auto json = base;
      for (const auto& [key, value] : r["sections"].items()) json[key] = value;
      const auto file = dir.path() / ("variant-" + std::to_string(loaded) + ".json");
      std::ofstream(file) << json.dump();
      read.emplace(load_tokenizer_json(file));
      // Written back, the file reads back the same tokenizer.
      const auto& bpe = std::get<byte_level_bpe_tokenizer>(read->get());
      const auto again = dir.path() / ("written-" + std::to_string(loaded) + ".json");
      std::ofstream(again) << to_tokenizer_json(bpe, read->specials()).dump();
      written.emplace(load_tokenizer_json(again));
    }
    for (const tokenizer* t : {&*read, &*written}) {
      const encoding e = t->encode(r["text"].get<std::string>());
      std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
      for (const auto& span : e.offsets) offsets.emplace_back(span.begin, span.end);
      CHECK(e.ids == r["ids"].get<std::vector<std::int32_t>>());
      CHECK(offsets == r["offsets"].get<std::vector<std::pair<std::uint32_t, std::uint32_t>>>());
      CHECK(e.word_ids == r["word_ids"].get<std::vector<std::int32_t>>());
    }
    for (const auto& id : r["ids"]) normalized_added += id == 3261;  // "new york", matched after normalizing
  }
  CHECK(loaded == 6);
  CHECK(records > 200);
  CHECK(normalized_added == 2);  // "new york" in the one text that has it, in both variants that add it
}

TEST_CASE("pairs and single texts in RoBERTa's layout equal Hugging Face's: <s> A </s></s> B </s>, type ids 0") {
  const tokenizer t = load_tokenizer(data("gpt2_cut"));
  CHECK(t.specials().layout == special_layout::roberta);
  CHECK(t.family() == "byte-level BPE");
  check_against(t, reference("roberta_cut"));
}

TEST_CASE("special tokens by role: RoBERTa's <pad>, <mask>, <unk>, and BERT's") {
  const tokenizer roberta = load_tokenizer(data("gpt2_cut/tokenizer.json"));
  CHECK(roberta.specials().cls == 3256);
  CHECK(roberta.specials().sep == 3258);
  CHECK(roberta.specials().pad == 3257);
  CHECK(roberta.specials().unk == 3259);
  CHECK(roberta.specials().mask == 3260);
  CHECK(roberta.specials().added(false) == 2);
  CHECK(roberta.specials().added(true) == 4);
  CHECK(roberta.specials().second_begin(5) == 8);
  CHECK(roberta.token_to_id("<mask>") == 3260);
  CHECK(roberta.id_count() == 3261);

  const tokenizer bert(bert_tokenizer(vocabulary::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n", "small")));
  CHECK(bert.specials().layout == special_layout::bert);
  CHECK(bert.specials().cls == 2);
  CHECK(bert.specials().sep == 3);
  CHECK(bert.specials().pad == 0);
  CHECK(bert.specials().added(true) == 3);
  CHECK(bert.specials().second_begin(5) == 7);
  CHECK(bert.id_count() == 6);
}

TEST_CASE("without special tokens a pair is its two texts, still typed by position") {
  const tokenizer bert(bert_tokenizer(vocabulary::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n", "small")));
  const encoding e = bert.encode_pair("hello", "world hello", false);
  CHECK(e.ids == std::vector<std::int32_t>{5, 6, 5});
  CHECK(e.type_ids == std::vector<std::int32_t>{0, 1, 1});
  CHECK(e.sequence_ids == std::vector<std::int8_t>{0, 1, 1});
  CHECK(e.special_tokens_mask == std::vector<std::uint8_t>{0, 0, 0});

  special_tokens none;  // GPT-2's: nothing added even when asked, the second text typed 1
  token_sequence a, b;
  a.push_back(7, {0, 1}, {0, 1});
  b.push_back(8, {0, 2}, {0, 2});
  const encoding plain = wrap(none, a, &b);
  CHECK(plain.ids == std::vector<std::int32_t>{7, 8});
  CHECK(plain.type_ids == std::vector<std::int32_t>{0, 1});
  CHECK_THROWS_WITH(none.pad_id("batch"), Catch::Contains("no padding token"));
}

TEST_CASE("words given already split are tokenized one by one, each token tagged with its word") {
  // Hugging Face encodes pre-tokenized input word by word (each word through the whole pipeline, word id = its
  // index, offsets within the word) and merges the words; the npm binding cannot take such input, so this checks
  // that rule against single-word encodings, which the references above pin down.
  const tokenizer bert(bert_tokenizer(vocabulary::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ndon\n'\nt\nhello\n", "small")));
  const std::vector<std::string> words{"don't", "", "Hello", " ", "[MASK]x"};
  const encoding e = bert.encode_words(words);
  CHECK(e.ids == std::vector<std::int32_t>{2, 5, 6, 7, 8, 4, 1, 3});
  CHECK(e.word_ids == std::vector<std::int32_t>{-1, 0, 0, 0, 2, 4, 4, -1});
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
  for (const auto& s : e.offsets) offsets.emplace_back(s.begin, s.end);
  CHECK(offsets == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{0, 0}, {0, 3}, {3, 4}, {4, 5}, {0, 5},
                                                                         {0, 6}, {6, 7}, {0, 0}});
  const encoding pair = bert.encode_words_pair(std::vector<std::string>{"hello"}, std::vector<std::string>{"t", "don"});
  CHECK(pair.ids == std::vector<std::int32_t>{2, 8, 3, 7, 5, 3});
  CHECK(pair.word_ids == std::vector<std::int32_t>{-1, 0, -1, 0, 1, -1});
  CHECK(pair.type_ids == std::vector<std::int32_t>{0, 0, 0, 1, 1, 1});

  // RoBERTa's needs add_prefix_space, as RobertaTokenizerFast insists for pre-tokenized input.
  const tokenizer roberta = load_tokenizer(data("gpt2_cut"));
  CHECK_THROWS_WITH(roberta.encode_words(words), Catch::Contains("needs add_prefix_space"));
  const cputrain::test::temp_dir dir;
  std::filesystem::copy_file(data("gpt2_cut/tokenizer.json"), dir.path() / "tokenizer.json");
  cputrain::test::write_json(dir.path() / "tokenizer_config.json", nlohmann::json{{"add_prefix_space", true}});
  const tokenizer prefixed = load_tokenizer(dir.path());
  const std::vector<std::string> names{"New", "York", "<mask>"};
  const encoding r = prefixed.encode_words(names);
  std::vector<std::int32_t> expected{prefixed.specials().cls};
  std::vector<std::int32_t> expected_words{-1};
  for (std::size_t w = 0; w < names.size(); ++w) {
    const encoding alone = prefixed.encode(names[w], false);
    CHECK(alone.ids == prefixed.encode(" " + names[w], false).ids);  // each word gets its prefix space
    expected.insert(expected.end(), alone.ids.begin(), alone.ids.end());
    expected_words.insert(expected_words.end(), alone.size(), static_cast<std::int32_t>(w));
  }
  expected.push_back(prefixed.specials().sep);
  expected_words.push_back(-1);
  CHECK(r.ids == expected);
  CHECK(r.word_ids == expected_words);
}

TEST_CASE("with_add_prefix_space does what tokenizer_config.json's add_prefix_space does (from_pretrained's keyword)") {
  // run_ner.py loads RoBERTa's and GPT-2's tokenizers with add_prefix_space=True whatever their files say.
  const tokenizer plain = load_tokenizer(data("gpt2_cut"));
  const cputrain::test::temp_dir dir;
  std::filesystem::copy_file(data("gpt2_cut/tokenizer.json"), dir.path() / "tokenizer.json");
  cputrain::test::write_json(dir.path() / "tokenizer_config.json", nlohmann::json{{"add_prefix_space", true}});
  const tokenizer configured = load_tokenizer(dir.path());
  const tokenizer asked = plain.with_add_prefix_space(true);
  const auto spans = [](const encoding& e) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
    for (const auto& s : e.offsets) out.emplace_back(s.begin, s.end);
    return out;
  };
  const std::vector<std::string> words{"New", "York", "<mask>", "café"};
  const encoding a = asked.encode_words(words), c = configured.encode_words(words);
  CHECK(a.ids == c.ids);
  CHECK(a.word_ids == c.word_ids);
  CHECK(spans(a) == spans(c));
  for (const std::string text : {"New York", "  two spaces", "x"}) {
    CHECK(asked.encode(text).ids == configured.encode(text).ids);
    CHECK(spans(asked.encode(text)) == spans(configured.encode(text)));
  }
  CHECK(asked.encode("York", false).ids == plain.encode(" York", false).ids);
  CHECK(asked.encode("York", false).ids != plain.encode("York", false).ids);
  // The tokenizer it came from is unchanged, and asking for false takes the space away again.
  CHECK_THROWS_WITH(plain.encode_words(words), Catch::Contains("needs add_prefix_space"));
  CHECK(configured.with_add_prefix_space(false).encode("York", false).ids == plain.encode("York", false).ids);
  CHECK(asked.specials().cls == plain.specials().cls);
  CHECK(asked.id_count() == plain.id_count());
  // WordPiece has no such switch: the same tokenizer back.
  const tokenizer bert(bert_tokenizer(vocabulary::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nnew\nyork\n", "small")));
  CHECK(bert.with_add_prefix_space(true).encode("new york").ids == bert.encode("new york").ids);
}

}  // namespace tokenizer_test
