// Tests for include/cputrain/text/unigram_tokenizer.hpp (with unigram_model.hpp, precompiled_charsmap.hpp,
// normalized_text.hpp, normalizer_steps.hpp, metaspace.hpp and unigram_json.hpp): XLM-RoBERTa's tokenizer against
// Hugging Face's Rust tokenizer on a small Unigram model trained with SentencePiece (tests/text/data/xlmr_cut, in
// today's converter's form and in the older Hub form; scripts/make_unigram_model.py, make_unigram_reference.cjs):
// the SQuAD files, nasty text, the normalizer's and Viterbi's corner cases, pairs, and every Unicode code point.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/text/load_tokenizer.hpp"
#include "cputrain/text/normalized_text.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/text/unigram_json_writer.hpp"
#include "cputrain/text/unigram_tokenizer.hpp"
#include "cputrain/text/utf8.hpp"
#include "support/temp_dir.hpp"
#include "support/tokenizer_json_variant.hpp"
#include "support/token_hash.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace unigram_tokenizer_test {

using namespace cputrain::text;
using spans = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

namespace {

std::string data(const std::string& name) { return std::string(CPUTRAIN_TEXT_TEST_DATA) + "/" + name; }

const tokenizer& xlmr() {
  static const tokenizer t = load_tokenizer(data("xlmr_cut"));
  return t;
}
const tokenizer& xlmr_hub() {
  static const tokenizer t = load_tokenizer(data("xlmr_cut_hub/tokenizer.json"));
  return t;
}

std::vector<nlohmann::json> records(const std::string& file) {
  std::ifstream in(data(file));
  REQUIRE(in);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

spans char_spans(const std::vector<text_span>& offsets) {
  spans out;
  for (const auto& s : offsets) out.emplace_back(s.begin, s.end);
  return out;
}

// Byte offsets must cut the same characters the code-point offsets name.
void check_byte_offsets(const std::string& text, const encoding& e) {
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e.special_tokens_mask[i]) continue;
    CHECK(e.byte_offsets[i].begin == byte_position(text, e.offsets[i].begin));
    CHECK(e.byte_offsets[i].end == byte_position(text, e.offsets[i].end));
  }
}

}  // namespace

TEST_CASE("XLM-R's tokenizer.json is read as a Unigram tokenizer with RoBERTa's layout and fairseq's ids") {
  const tokenizer& t = xlmr();
  CHECK(t.family() == "Unigram");
  CHECK(t.specials().layout == special_layout::roberta);
  CHECK(t.specials().cls == 0);
  CHECK(t.specials().pad == std::optional<std::int32_t>(1));
  CHECK(t.specials().sep == 2);
  CHECK(t.specials().unk == std::optional<std::int32_t>(3));
  CHECK(t.specials().mask == std::optional<std::int32_t>(2001));
  CHECK(t.id_count() == 2002);
  CHECK(t.token_to_id("<mask>") == std::optional<std::int32_t>(2001));
  CHECK(xlmr_hub().id_count() == 2002);
}

TEST_CASE("every reference text gets Hugging Face's ids, offsets, special-tokens mask and word ids") {
  const auto refs = records("unigram_reference.jsonl");
  REQUIRE(refs.size() > 60);
  for (const auto& r : refs) {
    const std::string text = r["text"];
    INFO("text: " << r["text"].dump());
    const encoding e = xlmr().encode(text);
    CHECK(e.ids == r["ids"].get<std::vector<std::int32_t>>());
    CHECK(char_spans(e.offsets) == r["offsets"].get<spans>());
    CHECK(std::vector<int>(e.special_tokens_mask.begin(), e.special_tokens_mask.end()) == r["special"].get<std::vector<int>>());
    CHECK(e.word_ids == r["word_ids"].get<std::vector<std::int32_t>>());
    check_byte_offsets(text, e);
    INFO("the older Hub form: Precompiled alone, Metaspace's add_prefix_space");
    const encoding hub = xlmr_hub().encode(text);
    CHECK(hub.ids == r["hub_ids"].get<std::vector<std::int32_t>>());
    CHECK(char_spans(hub.offsets) == r["hub_offsets"].get<spans>());
    CHECK(hub.word_ids == r["hub_word_ids"].get<std::vector<std::int32_t>>());
  }
}

TEST_CASE("pairs are <s> A </s></s> B </s> with type ids 0, as Hugging Face encodes them") {
  const auto refs = records("unigram_pair_reference.jsonl");
  REQUIRE(refs.size() > 40);
  for (const auto& r : refs) {
    INFO("first: " << r["first"].dump() << "\nsecond: " << r["second"].dump());
    const encoding e = xlmr().encode_pair(r["first"].get<std::string>(), r["second"].get<std::string>());
    CHECK(e.ids == r["ids"].get<std::vector<std::int32_t>>());
    CHECK(e.type_ids == r["type_ids"].get<std::vector<std::int32_t>>());
    CHECK(char_spans(e.offsets) == r["offsets"].get<spans>());
    CHECK(std::vector<int>(e.special_tokens_mask.begin(), e.special_tokens_mask.end()) == r["special"].get<std::vector<int>>());
    CHECK(std::vector<int>(e.sequence_ids.begin(), e.sequence_ids.end()) == r["sequence_ids"].get<std::vector<int>>());
    CHECK(e.word_ids == r["word_ids"].get<std::vector<std::int32_t>>());
  }
}

// The same text and hash as scripts/make_unigram_reference.cjs's sweep mode.
std::string sweep_text(char32_t first, char32_t block) {
  std::string text;
  for (char32_t c = first; c < first + block && c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    std::string ch;
    append_utf8(ch, c);
    text += "a" + ch + " " + ch + "b  " + ch + "\xCC\x81 ";  // U+0301 after the last
  }
  return text;
}

TEST_CASE("every Unicode code point is normalized, split and placed as by Hugging Face's Unigram tokenizer") {
  const auto& t = xlmr();
  std::ifstream in(data("unigram_sweep.json"));
  REQUIRE(in);
  const auto ref = nlohmann::json::parse(in);
  const auto block = ref["block"].get<char32_t>();
  std::size_t blocks = 0, failed = 0;
  for (const auto& b : ref["blocks"]) {
    const auto first = b["first"].get<char32_t>();
    token_sequence got;
    t.encode(sweep_text(first, block), got);
    INFO("code points " << std::hex << static_cast<std::uint32_t>(first) << " to "
                        << static_cast<std::uint32_t>(first + block - 1)
                        << " (scripts/make_unigram_reference.cjs sweep makes the same text)");
    CHECK(got.size() == b["tokens"].get<std::size_t>());
    CHECK(cputrain::test::token_hash(got) == b["hash"].get<std::uint32_t>());
    failed += cputrain::test::token_hash(got) != b["hash"].get<std::uint32_t>();
    ++blocks;
  }
  CHECK(blocks == 272);
  CHECK(failed == 0);
}

TEST_CASE("a Unigram tokenizer written back as tokenizer.json keeps the file's scores and charsmap and encodes the same") {
  const tokenizer& t = xlmr();
  const auto written = to_tokenizer_json(std::get<unigram_tokenizer>(t.get()), t.specials());
  std::ifstream in(data("xlmr_cut/tokenizer.json"));
  REQUIRE(in);
  const auto original = nlohmann::ordered_json::parse(in);
  CHECK(written["model"] == original["model"]);
  CHECK(written["normalizer"] == original["normalizer"]);
  CHECK(written["pre_tokenizer"] == original["pre_tokenizer"]);
  CHECK(written["post_processor"]["single"] == original["post_processor"]["single"]);
  CHECK(written["post_processor"]["pair"] == original["post_processor"]["pair"]);
  CHECK(written["added_tokens"] == original["added_tokens"]);
  cputrain::test::temp_dir dir;
  std::ofstream(dir.path() / "tokenizer.json") << written.dump();
  const tokenizer back = load_tokenizer_json(dir.path() / "tokenizer.json");
  for (const auto& r : records("unigram_reference.jsonl")) {
    INFO("text: " << r["text"].dump());
    const encoding e = back.encode(r["text"].get<std::string>());
    CHECK(e.ids == r["ids"].get<std::vector<std::int32_t>>());
    CHECK(char_spans(e.offsets) == r["offsets"].get<spans>());
  }
  CHECK(t.id_to_token(2001) == std::optional<std::string>("<mask>"));
  CHECK(t.id_to_token(5) == std::optional<std::string>(std::get<unigram_tokenizer>(t.get()).model().vocab()[5].first));
  CHECK(t.id_to_token(2002) == std::nullopt);
}

TEST_CASE("each of Hugging Face's normalizers, alone and in sequences, gives its ids, offsets and word ids") {
  // xlmr_cut with its normalizer replaced by each variant of scripts/make_unigram_reference.cjs's normalizers mode.
  const auto refs = records("unigram_normalizers_reference.jsonl");
  REQUIRE(refs.size() > 1000);
  std::ifstream in(data("xlmr_cut/tokenizer.json"));
  REQUIRE(in);
  const auto base = nlohmann::ordered_json::parse(in);
  cputrain::test::temp_dir dir;
  std::optional<tokenizer> t;
  int loaded = -1;
  std::size_t written_back = 0;
  for (const auto& r : refs) {
    INFO("normalizer: " << r["normalizer"].dump() << ", text: " << r["text"].dump());
    if (r["variant"].get<int>() != loaded) {
      loaded = r["variant"].get<int>();
      t.emplace(load_tokenizer_json(
          cputrain::test::write_tokenizer_json_variant(base, "normalizer", r["normalizer"], loaded, dir.path())));
      // Written back, the normalizer is the file's.
      const auto& unigram = std::get<unigram_tokenizer>(t->get());
      const auto written = to_tokenizer_json(unigram, t->specials())["normalizer"].dump();
      written_back += nlohmann::json::parse(written) == r["normalizer"];
    }
    const std::string text = r["text"];
    const encoding e = t->encode(text);
    CHECK(e.ids == r["ids"].get<std::vector<std::int32_t>>());
    CHECK(char_spans(e.offsets) == r["offsets"].get<spans>());
    CHECK(e.word_ids == r["word_ids"].get<std::vector<std::int32_t>>());
    check_byte_offsets(text, e);
    normalized_text normalized(text);
    std::get<unigram_tokenizer>(t->get()).normalizer().apply(normalized);
    CHECK(normalized.str() == r["normalized"].get<std::string>());
  }
  CHECK(written_back == 16);
}

TEST_CASE("scores are used as Hugging Face reads them from JSON: digits over a power of ten") {
  // Exact parsing gives the nearest double; the reference divides the digits by 10^15 instead, one ulp away.
  CHECK(score_as_reference_reads(-12.563669634938593) == -12.563669634938591);
  CHECK(score_as_reference_reads(-9.634415443986683) == -9.634415443986684);
  CHECK(score_as_reference_reads(-0.43561181362301915) == -0.4356118136230191);
  std::size_t differ = 0, total = 0;
  for (const auto& [token, score] : std::get<unigram_tokenizer>(xlmr().get()).model().vocab()) {
    const double read = score_as_reference_reads(score);
    CHECK(std::abs(read - score) <= std::abs(score) * 3e-16);
    differ += read != score;
    ++total;
  }
  INFO(differ << " of " << total << " scores read differently than exactly");
  CHECK(differ > 50);  // the fixture's writer found 116 of its 2002 one ulp off
  CHECK(differ < 200);
  CHECK(score_as_reference_reads(0.0) == 0.0);
  CHECK(score_as_reference_reads(-1.5) == -1.5);
}

TEST_CASE("XLM-R's legacy sentencepiece.bpe.model is converted as transformers converts it") {
  cputrain::test::temp_dir dir;
  for (const char* name : {"sentencepiece.bpe.model", "tokenizer_config.json", "config.json"})
    std::filesystem::copy_file(data(std::string("xlmr_cut/") + name), dir.path() / name);
  const tokenizer t = load_tokenizer(dir.path());
  CHECK(t.family() == "Unigram");
  CHECK(t.id_count() == 2002);
  CHECK(t.specials().mask == std::optional<std::int32_t>(2001));
  // The converter hands the model's float scores to the tokenizer without JSON, so they are not read the way
  // tokenizer.json's are; on these texts no split is close enough for that to matter.
  for (const auto& r : records("unigram_reference.jsonl")) {
    INFO("text: " << r["text"].dump());
    const encoding e = t.encode(r["text"].get<std::string>());
    CHECK(e.ids == r["ids"].get<std::vector<std::int32_t>>());
    CHECK(char_spans(e.offsets) == r["offsets"].get<spans>());
    CHECK(e.word_ids == r["word_ids"].get<std::vector<std::int32_t>>());
  }
  // Its tokens and scores are tokenizer.json's: the same conversion.
  std::ifstream in(data("xlmr_cut/tokenizer.json"));
  const auto original = nlohmann::json::parse(in);
  const auto& model = std::get<unigram_tokenizer>(t.get()).model();
  REQUIRE(model.size() == original["model"]["vocab"].size());
  for (std::size_t i = 0; i < model.size(); ++i) {
    CHECK(model.vocab()[i].first == original["model"]["vocab"][i][0].get<std::string>());
    CHECK(model.vocab()[i].second == original["model"]["vocab"][i][1].get<double>());
  }
}

TEST_CASE("a damaged or foreign SentencePiece model file is refused naming the file") {
  cputrain::test::temp_dir dir;
  const auto error_of = [&](const std::string& bytes, const std::string& config = "{}") {
    std::ofstream(dir.path() / "sentencepiece.bpe.model", std::ios::binary) << bytes;
    std::ofstream(dir.path() / "tokenizer_config.json") << config;
    try {
      (void)load_tokenizer(dir.path(), {false});
    } catch (const text_error& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  std::ifstream in(data("xlmr_cut/sentencepiece.bpe.model"), std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(error_of(good) == "<no error>");
  CHECK_THAT(error_of(good.substr(0, good.size() / 2)),
             Catch::Contains("sentencepiece.bpe.model: not a SentencePiece model: a field longer than the rest"));
  CHECK_THAT(error_of(""), Catch::Contains("not a SentencePiece model: it has no pieces"));
  CHECK_THAT(error_of("\x0b"), Catch::Contains("wire type 3") && Catch::Contains("at byte 0"));
  CHECK_THAT(error_of(good, R"({"tokenizer_class": "CamembertTokenizer"})"),
             Catch::Contains("tokenizer_config.json: tokenizer_class is \"CamembertTokenizer\""));
  // A BPE SentencePiece model: the trainer spec's model_type (field 3 of field 2) set to 2.
  const std::string bpe = good + std::string("\x12\x02\x18\x02", 4);
  CHECK_THAT(error_of(bpe), Catch::Contains("a SentencePiece BPE model; cputrain reads Unigram models"));
}

TEST_CASE("words served from the per-thread cache give the tokens a fresh split gives") {
  // Each model's first pass fills the calling thread's cache; switching models empties it. Both passes of both
  // models must still equal the reference, and a second tokenizer of another family in between must not leak in.
  const tokenizer bpe = load_tokenizer(data("gpt2_cut/tokenizer.json"));
  const auto refs = records("unigram_reference.jsonl");
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& r : refs) {
      const std::string text = r["text"];
      INFO("pass " << pass << ", text: " << r["text"].dump());
      const encoding first = xlmr().encode(text);
      const encoding byte_level = bpe.encode(text);
      const encoding hub = xlmr_hub().encode(text);
      const encoding again = xlmr().encode(text);
      CHECK(first.ids == r["ids"].get<std::vector<std::int32_t>>());
      CHECK(again.ids == first.ids);
      CHECK(char_spans(again.offsets) == r["offsets"].get<spans>());
      CHECK(hub.ids == r["hub_ids"].get<std::vector<std::int32_t>>());
      CHECK(byte_level.ids == bpe.encode(text).ids);
    }
  }
}

}  // namespace unigram_tokenizer_test
