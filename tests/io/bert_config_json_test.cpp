// Tests for include/cputrain/io/bert_config_json.hpp: the real bert-base-uncased config.json, a round trip,
// missing keys taking defaults, the exact text written (HF's indent=2, sort_keys=True), and each bad key, bad
// value and unreadable file throwing io_error naming the file, the key and the value.
#include <catch2/catch.hpp>

#include "support/temp_dir.hpp"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "cputrain/io/bert_config_json.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace bert_config_json_test {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cputrain::usage_error;
using cputrain::io::io_error;
using cputrain::io::read_bert_config;
using cputrain::io::write_bert_config;
using cputrain::nn::bert_config;

namespace {

using cputrain::test::temp_dir;


fs::path put(const temp_dir& dir, const std::string& text, const std::string& name = "config.json") {
  const fs::path p = dir.path() / name;
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string read_error(const temp_dir& dir, const std::string& text) {
  const fs::path p = put(dir, text);
  try {
    (void)read_bert_config(p);
  } catch (const io_error& e) {
    return e.what();
  }
  return "<read_bert_config did not throw>";
}

// bert-base-uncased's config.json as published on the Hugging Face hub.
const char* const bert_base_uncased = R"({
  "architectures": [
    "BertForMaskedLM"
  ],
  "attention_probs_dropout_prob": 0.1,
  "gradient_checkpointing": false,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 768,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "model_type": "bert",
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "transformers_version": "4.6.0.dev0",
  "type_vocab_size": 2,
  "use_cache": true,
  "vocab_size": 30522
}
)";

}  // namespace

TEST_CASE("read_bert_config reads bert-base-uncased's config.json, ignoring keys it does not use") {
  temp_dir dir;
  const bert_config c = read_bert_config(put(dir, bert_base_uncased));
  CHECK(c.vocab_size == 30522);
  CHECK(c.hidden_size == 768);
  CHECK(c.num_hidden_layers == 12);
  CHECK(c.num_attention_heads == 12);
  CHECK(c.intermediate_size == 3072);
  CHECK(c.max_position_embeddings == 512);
  CHECK(c.type_vocab_size == 2);
  CHECK(c.layer_norm_eps == 1e-12f);
  CHECK(c.hidden_dropout_prob == 0.1f);
  CHECK(c.attention_probs_dropout_prob == 0.1f);
  CHECK(c.initializer_range == 0.02f);
  CHECK(c.pad_token_id == 0);
  CHECK(c.hidden_act == "gelu");
  CHECK(c == bert_config{});
}

TEST_CASE("read_bert_config reads every field, not just the defaults") {
  temp_dir dir;
  const bert_config c = read_bert_config(put(dir, R"({
    "model_type": "bert", "vocab_size": 28996, "hidden_size": 1024, "num_hidden_layers": 24,
    "num_attention_heads": 16, "intermediate_size": 4096, "max_position_embeddings": 1024, "type_vocab_size": 3,
    "layer_norm_eps": 1e-5, "hidden_dropout_prob": 0, "attention_probs_dropout_prob": 0.25,
    "initializer_range": 0.05, "pad_token_id": 100, "hidden_act": "gelu", "torch_dtype": "bfloat16",
    "classifier_dropout": null, "id2label": {"0": "A"}})"));
  CHECK(c.vocab_size == 28996);
  CHECK(c.hidden_size == 1024);
  CHECK(c.num_hidden_layers == 24);
  CHECK(c.num_attention_heads == 16);
  CHECK(c.intermediate_size == 4096);
  CHECK(c.max_position_embeddings == 1024);
  CHECK(c.type_vocab_size == 3);
  CHECK(c.layer_norm_eps == 1e-5f);
  CHECK(c.hidden_dropout_prob == 0.0f);  // an integer JSON 0 is a valid probability
  CHECK(c.attention_probs_dropout_prob == 0.25f);
  CHECK(c.initializer_range == 0.05f);
  CHECK(c.pad_token_id == 100);
  CHECK(c.head_dim() == 64);
}

TEST_CASE("missing keys take BertConfig's defaults") {
  temp_dir dir;
  CHECK(read_bert_config(put(dir, "{}")) == bert_config{});
  const bert_config c = read_bert_config(put(dir, R"({"num_hidden_layers": 2})"));
  bert_config expected;
  expected.num_hidden_layers = 2;
  CHECK(c == expected);
}

TEST_CASE("write_bert_config writes what save_pretrained writes: sorted keys, 2-space indent, final newline") {
  temp_dir dir;
  const fs::path path = dir.path() / "config.json";
  write_bert_config(bert_config{}, path);
  CHECK(slurp(path) == R"({
  "architectures": [
    "BertForQuestionAnswering"
  ],
  "attention_probs_dropout_prob": 0.1,
  "classifier_dropout": null,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 768,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "model_type": "bert",
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "type_vocab_size": 2,
  "use_cache": true,
  "vocab_size": 30522
}
)");
  write_bert_config(bert_config{}, path, "BertModel");
  CHECK_THAT(slurp(path), Contains("\"BertModel\""));
}

TEST_CASE("write_bert_config then read_bert_config gives the same config back") {
  temp_dir dir;
  bert_config c;
  c.vocab_size = 1000;
  c.hidden_size = 96;
  c.num_hidden_layers = 3;
  c.num_attention_heads = 6;
  c.intermediate_size = 384;
  c.max_position_embeddings = 128;
  c.type_vocab_size = 1;
  c.layer_norm_eps = 1e-7f;
  c.hidden_dropout_prob = 0.3f;
  c.attention_probs_dropout_prob = 0.0f;
  c.initializer_range = 0.0123456789f;  // not a short decimal: the float must still come back bit-exact
  c.pad_token_id = 999;
  const fs::path path = dir.path() / "config.json";
  write_bert_config(c, path);
  CHECK(read_bert_config(path) == c);
  // Overwriting an existing file works too (atomically, via rename).
  c.num_hidden_layers = 4;
  write_bert_config(c, path);
  CHECK(read_bert_config(path).num_hidden_layers == 4);
}

TEST_CASE("write_bert_config refuses an invalid config and a missing directory") {
  temp_dir dir;
  bert_config c;
  c.hidden_act = "relu";
  const fs::path path = dir.path() / "config.json";
  CHECK_THROWS_AS(write_bert_config(c, path), usage_error);
  CHECK_FALSE(fs::exists(path));
  const fs::path nowhere = dir.path() / "missing" / "config.json";
  CHECK_THROWS_WITH(write_bert_config(bert_config{}, nowhere), Contains(nowhere.string()));
}

TEST_CASE("values of the wrong JSON type throw io_error naming the file, the key and the value") {
  temp_dir dir;
  const auto names_file = Contains("config.json");
  CHECK_THAT(read_error(dir, R"({"hidden_size": "768"})"), names_file && Contains("\"hidden_size\" is \"768\""));
  CHECK_THAT(read_error(dir, R"({"hidden_size": 768.5})"),
             names_file && Contains("\"hidden_size\" is 768.5") && Contains("integer"));
  CHECK_THAT(read_error(dir, R"({"hidden_size": 768.0})"), Contains("\"hidden_size\" is 768.0"));
  CHECK_THAT(read_error(dir, R"({"num_hidden_layers": true})"), Contains("\"num_hidden_layers\" is true"));
  CHECK_THAT(read_error(dir, R"({"vocab_size": null})"), Contains("\"vocab_size\" is null"));
  CHECK_THAT(read_error(dir, R"({"vocab_size": 10000000000})"),
             Contains("\"vocab_size\" is 10000000000") && Contains("32-bit"));
  CHECK_THAT(read_error(dir, R"({"pad_token_id": -10000000000})"), Contains("\"pad_token_id\""));
  CHECK_THAT(read_error(dir, R"({"hidden_dropout_prob": "0.1"})"),
             Contains("\"hidden_dropout_prob\" is \"0.1\"") && Contains("a number"));
  CHECK_THAT(read_error(dir, R"({"layer_norm_eps": [1e-12]})"), Contains("\"layer_norm_eps\" is [1e-12]"));
  CHECK_THAT(read_error(dir, R"({"hidden_act": 5})"), Contains("\"hidden_act\" is 5") && Contains("a string"));
}

TEST_CASE("values the model cannot run with throw io_error naming the file, the field and the value") {
  temp_dir dir;
  const auto names_file = Contains("config.json");
  CHECK_THAT(read_error(dir, R"({"hidden_size": -768})"), names_file && Contains("hidden_size = -768"));
  CHECK_THAT(read_error(dir, R"({"hidden_size": 770})"),
             names_file && Contains("hidden_size = 770") && Contains("not divisible"));
  CHECK_THAT(read_error(dir, R"({"num_attention_heads": 0})"), Contains("num_attention_heads = 0"));
  CHECK_THAT(read_error(dir, R"({"hidden_dropout_prob": 1.5})"), Contains("hidden_dropout_prob = 1.5"));
  CHECK_THAT(read_error(dir, R"({"layer_norm_eps": 0})"), Contains("layer_norm_eps = 0"));
  CHECK_THAT(read_error(dir, R"({"layer_norm_eps": 1e300})"), Contains("layer_norm_eps = inf"));
  CHECK_THAT(read_error(dir, R"({"pad_token_id": 30522})"), Contains("pad_token_id = 30522"));
  CHECK_THAT(read_error(dir, R"({"hidden_act": "gelu_new"})"),
             names_file && Contains("\"gelu_new\"") && Contains("only \"gelu\""));
  CHECK_THAT(read_error(dir, R"({"hidden_act": "relu"})"), Contains("\"relu\""));
}

TEST_CASE("configs of other models or other position embeddings are refused") {
  temp_dir dir;
  CHECK_THAT(read_error(dir, R"({"model_type": "gpt2"})"),
             Contains("config.json") && Contains("\"model_type\" is \"gpt2\"") &&
                 Contains("\"bert\", \"roberta\", \"xlm-roberta\""));
  CHECK_THAT(read_error(dir, R"({"model_type": 1})"), Contains("\"model_type\""));
  CHECK_THAT(read_error(dir, R"({"position_embedding_type": "relative_key"})"),
             Contains("\"position_embedding_type\" is \"relative_key\"") && Contains("absolute"));
  CHECK_THAT(read_error(dir, R"({"is_decoder": true})"), Contains("\"is_decoder\" is true"));
  CHECK_THAT(read_error(dir, R"({"add_cross_attention": true})"), Contains("\"add_cross_attention\""));
  CHECK_NOTHROW(read_bert_config(put(dir, R"({"is_decoder": false, "position_embedding_type": "absolute"})")));
}

TEST_CASE("RoBERTa and XLM-RoBERTa configs read with their own defaults and write back as themselves") {
  temp_dir dir;
  for (const std::string type : {"roberta", "xlm-roberta"}) {
    INFO(type);
    // roberta-base's config.json, abridged: no pad_token_id would mean RobertaConfig's 1
    const auto c = read_bert_config(put(dir, R"({"model_type": ")" + type + R"(", "vocab_size": 50265,
        "max_position_embeddings": 514, "type_vocab_size": 1, "layer_norm_eps": 1e-05})"));
    CHECK(c.model_type == type);
    CHECK(c.pad_token_id == 1);
    CHECK(c.positions_after_padding());
    CHECK(c.weights_prefix() == "roberta");
    CHECK(c.max_sequence_length() == 512);
    CHECK(c.type_vocab_size == 1);
    const fs::path out = dir.path() / "written.json";
    write_bert_config(c, out);
    const auto back = read_bert_config(out);
    CHECK(back == c);
    const auto json = nlohmann::json::parse(std::ifstream(out));
    CHECK(json["model_type"] == type);
    CHECK(json["architectures"][0] == (type == "roberta" ? "RobertaForQuestionAnswering" : "XLMRobertaForQuestionAnswering"));
  }
  // a position table with no room after the padding rows is refused naming the field
  CHECK_THAT(read_error(dir, R"({"model_type": "roberta", "max_position_embeddings": 2})"),
             Contains("max_position_embeddings = 2") && Contains("pad_token_id + 2"));
}

TEST_CASE("a DistilBERT config.json reads its own keys and defaults, and writes back as DistilBertConfig writes it") {
  temp_dir dir;
  const auto c = read_bert_config(put(dir, R"({"model_type": "distilbert", "dim": 64, "n_heads": 4,
      "hidden_dim": 256, "dropout": 0.05, "attention_dropout": 0.2, "activation": "gelu", "qa_dropout": 0.3,
      "sinusoidal_pos_embds": false, "layer_norm_eps": 0.5})"));
  CHECK(c.distilbert());
  CHECK(c.hidden_size == 64);
  CHECK(c.num_hidden_layers == 6);  // DistilBertConfig's default
  CHECK(c.num_attention_heads == 4);
  CHECK(c.intermediate_size == 256);
  CHECK(c.hidden_dropout_prob == 0.05f);
  CHECK(c.attention_probs_dropout_prob == 0.2f);
  CHECK(c.qa_dropout == 0.3f);
  CHECK(c.seq_classif_dropout == 0.2f);
  CHECK(c.layer_norm_eps == 1e-12f);  // fixed in DistilBERT's code, whatever the file says
  CHECK(c.weights_prefix() == "distilbert");
  const fs::path out = dir.path() / "written.json";
  write_bert_config(c, out);
  CHECK(read_bert_config(out) == c);
  const auto json = nlohmann::json::parse(std::ifstream(out));
  CHECK(json["architectures"][0] == "DistilBertForQuestionAnswering");
  CHECK(json["dim"] == 64);
  CHECK(json["n_layers"] == 6);
  CHECK_FALSE(json.contains("hidden_size"));
  CHECK_THAT(read_error(dir, R"({"model_type": "distilbert", "sinusoidal_pos_embds": true})"),
             Contains("\"sinusoidal_pos_embds\" is true"));
  CHECK_THAT(read_error(dir, R"({"model_type": "distilbert", "dim": 30, "n_heads": 4})"),
             Contains("hidden_size = 30") && Contains("num_attention_heads = 4"));
}

TEST_CASE("an ELECTRA discriminator's config.json: ElectraConfig's defaults, embedding_size and its projection") {
  temp_dir dir;
  const auto small = read_bert_config(put(dir, R"({"model_type": "electra"})"));
  CHECK(small.weights_prefix() == "electra");
  CHECK(small.hidden_size == 256);
  CHECK(small.num_attention_heads == 4);
  CHECK(small.intermediate_size == 1024);
  CHECK(small.embedding_width() == 128);
  CHECK(small.projects_embeddings());
  const fs::path out = dir.path() / "written.json";
  write_bert_config(small, out);
  CHECK(read_bert_config(out) == small);
  const auto json = nlohmann::json::parse(std::ifstream(out));
  CHECK(json["embedding_size"] == 128);
  CHECK(json["architectures"][0] == "ElectraForQuestionAnswering");
  const auto base = read_bert_config(put(dir, R"({"model_type": "electra", "embedding_size": 768, "hidden_size": 768,
      "num_attention_heads": 12, "intermediate_size": 3072})"));
  CHECK_FALSE(base.projects_embeddings());
  CHECK_THAT(read_error(dir, R"({"model_type": "electra", "embedding_size": 512})"),
             Contains("embedding_size = 512") && Contains("hidden_size = 256"));
}

// distilbert-base-uncased-finetuned-sst-2-english's config.json as published on the Hugging Face hub.
const char* const distilbert_sst2 = R"({
  "activation": "gelu",
  "architectures": [
    "DistilBertForSequenceClassification"
  ],
  "attention_dropout": 0.1,
  "dim": 768,
  "dropout": 0.1,
  "finetuning_task": "sst-2",
  "hidden_dim": 3072,
  "id2label": {
    "0": "NEGATIVE",
    "1": "POSITIVE"
  },
  "initializer_range": 0.02,
  "label2id": {
    "NEGATIVE": 0,
    "POSITIVE": 1
  },
  "max_position_embeddings": 512,
  "model_type": "distilbert",
  "n_heads": 12,
  "n_layers": 6,
  "output_past": true,
  "pad_token_id": 0,
  "qa_dropout": 0.1,
  "seq_classif_dropout": 0.2,
  "sinusoidal_pos_embds": false,
  "tie_weights_": true,
  "vocab_size": 30522
}
)";

TEST_CASE("a classifier's labels: id2label read into names by id, written back with label2id as save_pretrained writes them") {
  temp_dir dir;
  const auto sst2 = read_bert_config(put(dir, distilbert_sst2));
  CHECK(sst2.num_labels == 2);
  CHECK(sst2.label_names == std::vector<std::string>{"NEGATIVE", "POSITIVE"});
  CHECK(sst2.label_name(1) == "POSITIVE");
  CHECK(sst2.problem_type.empty());

  bert_config c;
  c.model_type = "roberta";
  c.pad_token_id = 1;
  c.num_labels = 3;
  c.label_names = {"entailment", "neutral", "contradiction"};
  c.problem_type = "single_label_classification";
  c.classifier_dropout = 0.25f;
  const fs::path out = dir.path() / "written.json";
  write_bert_config(c, out, "RobertaForSequenceClassification");
  CHECK(read_bert_config(out) == c);
  const auto json = nlohmann::json::parse(std::ifstream(out));
  CHECK(json["id2label"] == nlohmann::json{{"0", "entailment"}, {"1", "neutral"}, {"2", "contradiction"}});
  CHECK(json["label2id"] == nlohmann::json{{"contradiction", 2}, {"entailment", 0}, {"neutral", 1}});
  CHECK(json["problem_type"] == "single_label_classification");
  CHECK(json["classifier_dropout"] == 0.25);
  CHECK_FALSE(json.contains("num_labels"));  // a property of PretrainedConfig, never saved

  // DistilBERT writes them too; regression's one label is named as Hugging Face names it.
  bert_config d;
  d.model_type = "distilbert";
  d.num_labels = 1;
  d.problem_type = "regression";
  write_bert_config(d, out);
  CHECK(read_bert_config(out) == d);
  const auto djson = nlohmann::json::parse(std::ifstream(out));
  CHECK(djson["id2label"] == nlohmann::json{{"0", "LABEL_0"}});
  CHECK(djson["problem_type"] == "regression");

  // Two labels with Hugging Face's own names are its default: not written, as save_pretrained leaves them out.
  write_bert_config(bert_config{}, out);
  CHECK_FALSE(nlohmann::json::parse(std::ifstream(out)).contains("id2label"));
  CHECK(read_bert_config(put(dir, R"({"id2label": {"1": "LABEL_1", "0": "LABEL_0"}})")) == bert_config{});
  // A config written by hand may give num_labels alone.
  const auto five = read_bert_config(put(dir, R"({"num_labels": 5, "problem_type": null, "classifier_dropout": null})"));
  CHECK(five.num_labels == 5);
  CHECK(five.label_name(4) == "LABEL_4");
  CHECK_FALSE(five.classifier_dropout.has_value());
}

TEST_CASE("labels that do not make sense are refused naming the file, the key and the value") {
  temp_dir dir;
  CHECK_THAT(read_error(dir, R"({"id2label": {"0": "a", "2": "b"}})"),
             Contains("config.json") && Contains("\"id2label\" has the key \"2\"") && Contains("ids 0 to 1"));
  CHECK_THAT(read_error(dir, R"({"id2label": {"zero": "a"}})"), Contains("\"id2label\" has the key \"zero\""));
  CHECK_THAT(read_error(dir, R"({"id2label": {"0": 7}})"), Contains("\"id2label\" names label 0 as 7, not as a string"));
  CHECK_THAT(read_error(dir, R"({"id2label": ["a", "b"]})"), Contains("\"id2label\" is") && Contains("an object"));
  CHECK_THAT(read_error(dir, R"({"id2label": {"0": "a", "1": "b"}, "num_labels": 3})"),
             Contains("\"num_labels\" is 3, but \"id2label\" names 2 labels"));
  CHECK_THAT(read_error(dir, R"({"num_labels": 0})"), Contains("num_labels = 0"));
  CHECK_THAT(read_error(dir, R"({"problem_type": "ranking"})"),
             Contains("\"problem_type\" is \"ranking\"") && Contains("\"multi_label_classification\""));
  CHECK_THAT(read_error(dir, R"({"classifier_dropout": 1.5})"), Contains("classifier_dropout = 1.5"));
  CHECK_THAT(read_error(dir, R"({"label2id": 3})"), Contains("\"label2id\" is 3"));
}

TEST_CASE("unreadable files and non-JSON throw io_error naming the file") {
  temp_dir dir;
  const fs::path missing = dir.path() / "missing.json";
  CHECK_THROWS_WITH(read_bert_config(missing), Contains(missing.string()) && Contains("No such file or directory"));
  CHECK_THROWS_WITH(read_bert_config(dir.path()), Contains(dir.path().string()) && Contains("directory"));
  CHECK_THAT(read_error(dir, ""), Contains("config.json") && Contains("not valid JSON"));
  CHECK_THAT(read_error(dir, "{\"hidden_size\": 768,"), Contains("not valid JSON"));
  CHECK_THAT(read_error(dir, "hidden_size = 768"), Contains("not valid JSON"));
  CHECK_THAT(read_error(dir, std::string("{}") + '\0' + R"({"hidden_size": "x"})"), Contains("NUL"));
  CHECK_THAT(read_error(dir, "[768]"), Contains("config.json") && Contains("not a JSON object"));
}

TEST_CASE("zero or negative sizes and heads that do not divide hidden_size are refused naming the file and field") {
  // Each would size a tensor negatively (a huge allocation after the cast) or divide by zero in head_dim(): the
  // reader must stop at config.json, before any model is built.
  temp_dir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"vocab_size": -30522})", "vocab_size = -30522"},
      {R"({"vocab_size": 0})", "vocab_size = 0"},
      {R"({"num_hidden_layers": -2})", "num_hidden_layers = -2"},
      {R"({"num_attention_heads": -12})", "num_attention_heads = -12"},
      {R"({"intermediate_size": -3072})", "intermediate_size = -3072"},
      {R"({"max_position_embeddings": -512})", "max_position_embeddings = -512"},
      {R"({"max_position_embeddings": 0})", "max_position_embeddings = 0"},
      {R"({"type_vocab_size": -2})", "type_vocab_size = -2"},
      {R"({"hidden_size": 64, "num_attention_heads": 0})", "num_attention_heads = 0"},
      {R"({"hidden_size": 64, "num_attention_heads": 3})", "hidden_size = 64 is not divisible by num_attention_heads = 3"},
  };
  for (const auto& [text, says] : cases) {
    INFO(text);
    CHECK_THAT(read_error(dir, text), Contains("config.json") && Contains(says));
  }
}

TEST_CASE("a config.json nested a million levels deep is refused naming the file, not a stack overflow") {
  // Found by the fuzz target tests/fuzz/bert_config_json_fuzz.cpp (reproducer tests/fuzz/regressions/
  // bert_config_json/deep_nesting.json): nlohmann parses any depth, but the message for a value of the wrong type
  // printed it, recursing once per level until the stack ran out.
  temp_dir dir;
  const std::size_t depth = 1'000'000;
  const std::string deep = std::string(depth, '[') + std::string(depth, ']');
  for (const std::string& text : {R"({"hidden_size": )" + deep + "}", R"({"unknown_key": )" + deep + "}", deep}) {
    CHECK_THAT(read_error(dir, text), Contains("config.json") && Contains("nests deeper than 100 levels"));
  }
  // What real files nest, and a little more, still reads.
  CHECK_THAT(read_error(dir, R"({"hidden_size": [[[[1]]]]})"),
             Contains("config.json") && Contains("\"hidden_size\" is [[[[1]]]], but must be an integer"));
}

}  // namespace bert_config_json_test
