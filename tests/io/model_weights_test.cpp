// Tests for include/cputrain/io/model_weights.hpp.
#include <catch2/catch.hpp>

#include "support/temp_dir.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cputrain/io/model_weights.hpp"
#include "cputrain/nn/bert_qa.hpp"

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
