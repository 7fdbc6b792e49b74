// Tests for include/cputrain/train/model_files.hpp: a config.json and a vocab.txt that do not belong together
// are refused before any work, naming both files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cputrain/io/bert_config_json.hpp"
#include "cputrain/text/load_bert_tokenizer.hpp"
#include "cputrain/text/load_tokenizer.hpp"
#include "cputrain/train/model_files.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace model_files_test {

using namespace cputrain;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
/// A model directory: config.json with these sizes, vocab.txt of the special tokens plus `words` more.
train::model_files model_dir(const fs::path& dir, int vocab_size, int type_vocab_size, int words) {
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"vocab_size": )" << vocab_size << R"(, "type_vocab_size": )"
                                     << type_vocab_size << R"(, "hidden_size": 8, "num_attention_heads": 2})";
  std::ofstream vocab(dir / "vocab.txt");
  vocab << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (int i = 0; i < words; ++i) vocab << "w" << i << "\n";
  return {dir / "config.json", std::nullopt, dir};
}
}  // namespace

TEST_CASE("a vocab.txt larger than config.json's vocab_size is refused naming both files") {
  test::temp_dir tmp;
  const auto files = model_dir(tmp.path() / "m", 10, 2, 20);  // 25 tokens, 10 embeddings
  const auto config = io::read_bert_config(files.config);
  const auto tokenizer = text::load_bert_tokenizer(files.tokenizer);
  CHECK_THROWS_WITH(train::check_model_fits_tokenizer(files, config, tokenizer),
                    Contains((tmp.path() / "m" / "vocab.txt").string()) && Contains("25 tokens") &&
                        Contains("vocab_size 10") && Contains(files.config.string()));
  // Equal sizes, and a model with spare embeddings (as bert-base's 30522 over a smaller vocabulary), fit.
  const auto exact = model_dir(tmp.path() / "exact", 25, 2, 20);
  CHECK_NOTHROW(train::check_model_fits_tokenizer(exact, io::read_bert_config(exact.config),
                                                  text::load_bert_tokenizer(exact.tokenizer)));
  const auto spare = model_dir(tmp.path() / "spare", 100, 2, 20);
  CHECK_NOTHROW(train::check_model_fits_tokenizer(spare, io::read_bert_config(spare.config),
                                                  text::load_bert_tokenizer(spare.tokenizer)));
}

TEST_CASE("a type_vocab_size below 2 is refused where the inputs are sentence pairs") {
  test::temp_dir tmp;
  const auto files = model_dir(tmp.path() / "m", 100, 1, 20);
  CHECK_THROWS_WITH(train::check_model_fits_tokenizer(files, io::read_bert_config(files.config),
                                                      text::load_bert_tokenizer(files.tokenizer)),
                    Contains(files.config.string()) && Contains("type_vocab_size = 1") && Contains(">= 2"));
  // Inputs of one text each (run_ner, run_mlm) never use token type 1.
  CHECK_NOTHROW(train::check_model_fits_tokenizer(files, io::read_bert_config(files.config),
                                                  text::load_bert_tokenizer(files.tokenizer), /*pairs=*/false));
}

TEST_CASE("a byte-level tokenizer is checked by its ids, and RoBERTa's layout needs one token type") {
  test::temp_dir tmp;
  const auto roberta = text::load_tokenizer(std::string(CPUTRAIN_TEXT_TEST_DATA) + "/gpt2_cut");  // ids 0 to 3260
  auto files = model_dir(tmp.path() / "m", 100, 1, 0);
  files.tokenizer = std::string(CPUTRAIN_TEXT_TEST_DATA) + "/gpt2_cut";
  CHECK_THROWS_WITH(train::check_model_fits_tokenizer(files, io::read_bert_config(files.config), roberta),
                    Contains("byte-level BPE tokenizer " + files.tokenizer.string()) && Contains("ids up to 3260") &&
                        Contains("vocab_size 100") && Contains(files.config.string()));
  const auto fits = model_dir(tmp.path() / "fits", 3261, 1, 0);  // type ids all 0: one type is enough
  CHECK_NOTHROW(train::check_model_fits_tokenizer(fits, io::read_bert_config(fits.config), roberta));
  // BERT's layout through the general type still needs two.
  const auto files_bert = model_dir(tmp.path() / "bert", 100, 1, 20);
  CHECK_THROWS_WITH(train::check_model_fits_tokenizer(files_bert, io::read_bert_config(files_bert.config),
                                                      text::load_tokenizer(files_bert.tokenizer,
                                                                           {.check_config_vocab_size = false})),
                    Contains("type_vocab_size = 1"));
}

TEST_CASE("save_tokenizer writes a byte-level tokenizer that loads back the same, with RoBERTa's config") {
  test::temp_dir tmp;
  const auto roberta = text::load_tokenizer(std::string(CPUTRAIN_TEXT_TEST_DATA) + "/gpt2_cut");
  train::save_tokenizer(roberta, 512, tmp.path());
  const auto again = text::load_tokenizer(tmp.path());
  const auto a = roberta.encode_pair("Who wrote it?", "It was written <mask> by  Ann."),
             b = again.encode_pair("Who wrote it?", "It was written <mask> by  Ann.");
  CHECK(a.ids == b.ids);
  CHECK(a.offsets == b.offsets);
  CHECK(again.specials().pad == roberta.specials().pad);
  CHECK(again.specials().mask == roberta.specials().mask);
  std::ifstream in(tmp.path() / "tokenizer_config.json");
  const auto config = nlohmann::json::parse(in);
  CHECK(config["tokenizer_class"] == "RobertaTokenizer");
  CHECK(config["model_max_length"] == 512);
  CHECK(config["pad_token"] == "<pad>");
  CHECK(config["cls_token"] == "<s>");
  CHECK(std::filesystem::exists(tmp.path() / "special_tokens_map.json"));
}

}  // namespace model_files_test
