// Tests for include/cputrain/io/model_weights.hpp.
#include <catch2/catch.hpp>

#include "support/temp_dir.hpp"

#include <filesystem>
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "cputrain/io/model_weights.hpp"
#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/nn/encoder_model.hpp"
#include "cputrain/nn/masked_lm_head.hpp"
#include "cputrain/nn/sequence_classification_head.hpp"
#include "cputrain/nn/token_classification_head.hpp"
#include "support/encoder_fixture.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace model_weights_test {

namespace ct = cputrain;
namespace fs = std::filesystem;

namespace {

ct::nn::bert_config tiny_config() {
  ct::nn::bert_config c;
  c.vocab_size = 30;
  c.hidden_size = 8;
  c.num_hidden_layers = 1;
  c.num_attention_heads = 2;
  c.intermediate_size = 12;
  c.max_position_embeddings = 16;
  return c;
}

using cputrain::test::temp_dir;

/// Writes the model's tensors renamed by `rename` ("" drops a tensor), plus `extra` tensors of 4 floats.
void write_variant(const ct::nn::bert_qa<>& model, const fs::path& path,
                   const std::function<std::string(const std::string&)>& rename,
                   const std::vector<std::string>& extra = {}) {
  ct::io::safetensors_writer w;
  for (const auto& p : model.table().entries()) {
    const std::string name = rename(p.name);
    if (!name.empty()) w.add_f32(name, p.shape, model.params().subspan(p.offset, p.size));
  }
  const std::vector<float> four{1, 2, 3, 4};
  for (const auto& e : extra) w.add_f32(e, {4}, four);
  w.write(path);
}

/// The encoder's tensors of a fixture's model as transformers saves a bare BertModel, RobertaModel,
/// DistilBertModel or ElectraModel (no family prefix, no head), plus `extra` copies of the word table under
/// the names in it. Returns the names of the model's head tensors, which the file leaves out.
template <class Model>
std::vector<std::string> write_base_checkpoint(const ct::test::encoder_fixture& f, const Model& model,
                                               const fs::path& path, const std::vector<std::string>& extra = {}) {
  const std::string prefix = f.config.weights_prefix() + ".";
  std::vector<std::vector<float>> values;
  values.reserve(model.table().entries().size() + extra.size());
  ct::io::safetensors_writer w;
  std::vector<std::string> head;
  for (const auto& p : model.table().entries()) {
    if (p.offset >= model.head_offset()) {
      head.push_back(p.name);
      continue;
    }
    REQUIRE(p.name.starts_with(prefix));
    values.push_back(f.floats("param/" + p.name));
    w.add_f32(p.name.substr(prefix.size()), p.shape, values.back());
  }
  const auto& words = *model.table().first_of(ct::nn::parameter_role::word_embedding);
  for (const auto& name : extra) {
    values.push_back(f.floats("param/" + words.name));
    w.add_f32(name, words.shape, values.back());
  }
  w.write(path);
  return head;
}

/// A model of Head loads the base checkpoint of fixture `name` as from_pretrained would: the encoder's tensors as
/// saved, the head's reported as initialised and left as they were; with the fixture's head put in, the logits are
/// PyTorch's for the batch of the fixture.
template <class Head>
void check_base_checkpoint_loads(const std::string& name, const fs::path& dir,
                                 const std::vector<std::string>& tied = {}) {
  INFO(name);
  const ct::test::encoder_fixture f(name);
  ct::nn::encoder_model<Head> model(f.config, 7);
  const std::vector<float> initial(model.params().begin(), model.params().end());
  const fs::path path = dir / (name + ".safetensors");
  const std::vector<std::string> head = write_base_checkpoint(f, model, path, tied);
  REQUIRE_FALSE(head.empty());
  const auto report = ct::io::load_weights(model, path, ct::io::weight_loading::pretrained);
  CHECK(report.initialized == head);
  CHECK(report.ignored.empty());  // the tied decoder's copies of the word table are used, not reported
  CHECK(report.mismatched.empty());
  for (const auto& p : model.table().entries()) {
    INFO(p.name);
    const auto got = model.params().subspan(p.offset, p.size);
    if (p.offset >= model.head_offset()) {
      CHECK(std::equal(got.begin(), got.end(), initial.begin() + static_cast<std::ptrdiff_t>(p.offset)));
    } else {
      CHECK(std::vector<float>(got.begin(), got.end()) == f.floats("param/" + p.name));
    }
  }
  for (const auto& p : model.table().entries()) {
    if (p.offset >= model.head_offset()) f.file.read_float("param/" + p.name, model.params().subspan(p.offset, p.size));
  }
  model.parameters_changed();
  typename Head::batch_type batch;
  f.inputs(batch);
  (void)model.forward(batch);
  CHECK(ct::test::encoder_fixture::relative_error(model.logits(), f.floats("expected/logits")) < 1e-5);
}

}  // namespace

TEST_CASE("saved weights load back exactly, with HF names and the pt format tag") {
  temp_dir dir;
  ct::nn::bert_qa<> a(tiny_config(), 1), b(tiny_config(), 2);
  REQUIRE(std::vector<float>(a.params().begin(), a.params().end()) !=
          std::vector<float>(b.params().begin(), b.params().end()));
  ct::io::save_weights(a, dir.path() / "model.safetensors");
  const auto file = ct::io::safetensors_file::open(dir.path() / "model.safetensors");
  CHECK(file.metadata().at("format") == "pt");
  CHECK(file.contains("bert.encoder.layer.0.attention.self.query.weight"));
  CHECK(file.contains("qa_outputs.bias"));
  CHECK(file.size() == a.table().entries().size());

  const auto report = ct::io::load_weights(b, dir.path() / "model.safetensors");
  CHECK(report.initialized.empty());
  CHECK(report.ignored.empty());
  CHECK(std::vector<float>(a.params().begin(), a.params().end()) ==
        std::vector<float>(b.params().begin(), b.params().end()));
}

TEST_CASE("exact loading lists every missing, unexpected and misshapen tensor at once") {
  temp_dir dir;
  ct::nn::bert_qa<> model(tiny_config(), 1);
  write_variant(model, dir.path() / "partial.safetensors",
                [](const std::string& n) { return n == "qa_outputs.weight" || n == "bert.embeddings.LayerNorm.bias" ? "" : n; },
                {"bert.pooler.dense.bias"});
  try {
    ct::io::load_weights(model, dir.path() / "partial.safetensors");
    FAIL("expected an error");
  } catch (const ct::io::io_error& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("partial.safetensors"));
    CHECK_THAT(what, Catch::Contains("qa_outputs.weight"));
    CHECK_THAT(what, Catch::Contains("bert.embeddings.LayerNorm.bias"));
    CHECK_THAT(what, Catch::Contains("bert.pooler.dense.bias"));
  }

  auto other = tiny_config();
  other.intermediate_size = 16;
  ct::nn::bert_qa<> wider(other, 1);
  ct::io::save_weights(wider, dir.path() / "wider.safetensors");
  CHECK_THROWS_WITH(ct::io::load_weights(model, dir.path() / "wider.safetensors"),
                    Catch::Contains("bert.encoder.layer.0.intermediate.dense.weight"));
}

TEST_CASE("pretrained loading takes published naming, ignores heads it does not use, initialises the QA head") {
  temp_dir dir;
  ct::nn::bert_qa<> source(tiny_config(), 3), target(tiny_config(), 4);
  // A bare BertModel checkpoint in the old TensorFlow-era names: no "bert." prefix, LayerNorm gamma/beta, a
  // pooler and a pre-training head, and no QA head.
  write_variant(source, dir.path() / "pretrained.safetensors",
                [](std::string n) {
                  if (n.starts_with("qa_outputs.")) return std::string();
                  n = n.substr(5);  // drop "bert."
                  if (n.ends_with("LayerNorm.weight")) n = n.substr(0, n.size() - 6) + "gamma";
                  if (n.ends_with("LayerNorm.bias")) n = n.substr(0, n.size() - 4) + "beta";
                  return n;
                },
                {"pooler.dense.bias", "cls.predictions.bias"});
  const auto qa = target.table().at("qa_outputs.weight");
  const std::vector<float> qa_before(target.params().begin() + static_cast<std::ptrdiff_t>(qa.offset),
                                     target.params().begin() + static_cast<std::ptrdiff_t>(qa.offset + qa.size));
  const auto report =
      ct::io::load_weights(target, dir.path() / "pretrained.safetensors", ct::io::weight_loading::pretrained);
  CHECK(report.initialized == std::vector<std::string>{"qa_outputs.weight", "qa_outputs.bias"});
  CHECK(report.ignored == std::vector<std::string>{"cls.predictions.bias", "pooler.dense.bias"});
  for (const auto& p : target.table().entries()) {
    INFO(p.name);
    const auto got = target.params().subspan(p.offset, p.size);
    if (p.name == "qa_outputs.weight") {
      CHECK(std::vector<float>(got.begin(), got.end()) == qa_before);
    } else if (!p.name.starts_with("qa_outputs.")) {
      const auto want = source.params().subspan(p.offset, p.size);
      CHECK(std::vector<float>(got.begin(), got.end()) == std::vector<float>(want.begin(), want.end()));
    }
  }
  // an encoder tensor missing is an error, even when fine-tuning
  write_variant(source, dir.path() / "broken.safetensors",
                [](const std::string& n) { return n.find("layer.0.output.dense.weight") != std::string::npos ? "" : n; });
  CHECK_THROWS_WITH(
      ct::io::load_weights(target, dir.path() / "broken.safetensors", ct::io::weight_loading::pretrained),
      Catch::Contains("missing bert.encoder.layer.0.output.dense.weight"));
}

TEST_CASE("a base model's checkpoint of each family loads into each head: the encoder as saved, the head initialised and reported, PyTorch's logits once the head is PyTorch's") {
  temp_dir dir;
  for (const std::string family : {"bert", "roberta", "distilbert", "electra"}) {
    check_base_checkpoint_loads<ct::nn::qa_head>(family + "_question_answering", dir.path());
    check_base_checkpoint_loads<ct::nn::sequence_classification_head>(family + "_sequence_classification", dir.path());
    check_base_checkpoint_loads<ct::nn::token_classification_head>(family + "_token_classification", dir.path());
  }
  // A masked-LM checkpoint as transformers writes it keeps the decoder's names for the tied word table.
  check_base_checkpoint_loads<ct::nn::masked_lm_head>("bert_masked_lm", dir.path(),
                                                      {"cls.predictions.decoder.weight"});
  check_base_checkpoint_loads<ct::nn::masked_lm_head>("roberta_masked_lm", dir.path(), {"lm_head.decoder.weight"});
  check_base_checkpoint_loads<ct::nn::masked_lm_head>("distilbert_masked_lm", dir.path(), {"vocab_projector.weight"});
  check_base_checkpoint_loads<ct::nn::masked_lm_head>("electra_masked_lm", dir.path(), {"generator_lm_head.weight"});
}

TEST_CASE("a head of another size is refused naming the tensor and both shapes, or re-initialised when asked") {
  // A RoBERTa classifier of three labels, saved, then loaded into one of five labels.
  temp_dir dir;
  const ct::test::encoder_fixture f("roberta_sequence_classification");
  using model_type = ct::nn::encoder_model<ct::nn::sequence_classification_head>;
  model_type three(f.config, 1);
  REQUIRE(f.config.num_labels == 3);
  ct::io::save_weights(three, dir.path() / "three.safetensors");
  ct::nn::bert_config five_labels = f.config;
  five_labels.num_labels = 5;
  model_type five(five_labels, 2);
  const std::vector<float> before(five.params().begin(), five.params().end());
  std::string message = "<no error>";
  try {
    (void)ct::io::load_weights(five, dir.path() / "three.safetensors", ct::io::weight_loading::pretrained);
  } catch (const ct::io::io_error& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Contains((dir.path() / "three.safetensors").string()) &&
                          Catch::Contains("classifier.out_proj.weight: shape [3, 32] in the file, [5, 32] in the model") &&
                          Catch::Contains("classifier.out_proj.bias: shape [3] in the file, [5] in the model") &&
                          Catch::Contains("ignore_mismatched_sizes"));
  CHECK(std::vector<float>(five.params().begin(), five.params().end()) == before);

  const auto report = ct::io::load_weights(five, dir.path() / "three.safetensors", ct::io::weight_loading::pretrained,
                                           {.ignore_mismatched_sizes = true});
  CHECK(report.mismatched == std::vector<std::string>{
                                 "classifier.out_proj.weight: shape [3, 32] in the file, [5, 32] in the model",
                                 "classifier.out_proj.bias: shape [3] in the file, [5] in the model"});
  CHECK(report.ignored.empty());
  CHECK(report.initialized.empty());
  for (const auto& p : five.table().entries()) {
    INFO(p.name);
    const auto got = five.params().subspan(p.offset, p.size);
    const bool out_proj = p.name.starts_with("classifier.out_proj.");
    const auto want = out_proj ? std::span<const float>(before).subspan(p.offset, p.size)
                               : std::span<const float>(three.params()).subspan(three.table().at(p.name).offset, p.size);
    CHECK(std::equal(got.begin(), got.end(), want.begin(), want.end()));
  }
}

TEST_CASE("a file that is not there is an io_error naming it") {
  ct::nn::bert_qa<> model(tiny_config(), 1);
  CHECK_THROWS_WITH(ct::io::load_weights(model, "/nonexistent/dir/model.safetensors"),
                    Catch::Contains("/nonexistent/dir/model.safetensors"));
}

TEST_CASE("weights of the wrong dtype or shape are refused naming the file and the tensor, the model untouched") {
  // A model file whose tensor names fit but whose contents do not: an I64 tensor where a float weight belongs
  // (it opens, since cputrain reads I64, but it is no weight), and a float tensor of another shape. A caller
  // that catches the error must still have the model it had: nothing is read before everything is checked.
  temp_dir dir;
  ct::nn::bert_qa<> model(tiny_config(), 1);
  const std::vector<float> before(model.params().begin(), model.params().end());
  for (const bool wrong_shape : {false, true}) {
    ct::io::safetensors_writer w;
    const std::string odd = "bert.encoder.layer.0.output.dense.bias";
    for (const auto& p : model.table().entries()) {
      if (p.name != odd) {
        std::vector<float> ones(p.size, 1.0f);
        w.add_f32(p.name, p.shape, ones);
      } else if (wrong_shape) {
        std::vector<float> ones(p.size + 1, 1.0f);
        w.add_f32(p.name, {static_cast<std::int64_t>(p.size + 1)}, ones);
      } else {
        std::vector<std::int64_t> ints(p.size, 1);
        w.add_i64(p.name, p.shape, ints);
      }
    }
    const fs::path path = dir.path() / (wrong_shape ? "shape.safetensors" : "dtype.safetensors");
    w.write(path);
    for (const auto mode : {ct::io::weight_loading::exact, ct::io::weight_loading::pretrained}) {
      std::string message = "<no error>";
      try {
        ct::io::load_weights(model, path, mode);
      } catch (const ct::io::io_error& e) {
        message = e.what();
      }
      CHECK_THAT(message, Catch::Contains(path.string()) && Catch::Contains(odd));
      CHECK_THAT(message, Catch::Contains(wrong_shape ? "[9]" : "I64"));
      CHECK(std::vector<float>(model.params().begin(), model.params().end()) == before);
    }
  }
}

}  // namespace model_weights_test
