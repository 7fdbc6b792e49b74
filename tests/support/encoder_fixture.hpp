// One fixture of scripts/encoder_reference.py (tests/nn/data/encoders/<model_type>_<head>.safetensors): the config,
// the batch, the weights by Hugging Face's names, PyTorch's loss, logits and gradients, and the comparisons every
// head test makes with them (fp32 against PyTorch, bf16 against autocast).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/io/safetensors.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "cputrain/nn/encoder_batch.hpp"
#include "cputrain/nn/encoder_model.hpp"
#include "cputrain/nn/parameters.hpp"

namespace cputrain::test {

struct encoder_fixture {
  io::safetensors_file file;
  nlohmann::json config_json;
  nn::bert_config config;
  std::vector<std::string> structurally_zero;  // gradients zero in exact arithmetic: both sides hold noise

  explicit encoder_fixture(const std::string& name)
      : file(io::safetensors_file::open(std::filesystem::path(CPUTRAIN_TESTS_SOURCE_DIR) / "nn/data/encoders" /
                                        (name + ".safetensors"))),
        config_json(nlohmann::json::parse(file.metadata().at("config"))) {
    const auto& c = config_json;
    config.model_type = c["model_type"];
    if (config.distilbert()) {
      distilbert_config(c);
    } else {
      bert_like_config(c);
    }
    config.num_labels = c.value("num_labels", 2);
    config.problem_type = c.value("problem_type", std::string());
    structurally_zero = nlohmann::json::parse(file.metadata().at("structurally_zero_grads")).get<std::vector<std::string>>();
  }

  void bert_like_config(const nlohmann::json& c) {
    config.vocab_size = c["vocab_size"];
    config.hidden_size = c["hidden_size"];
    config.num_hidden_layers = c["num_hidden_layers"];
    config.num_attention_heads = c["num_attention_heads"];
    config.intermediate_size = c["intermediate_size"];
    config.max_position_embeddings = c["max_position_embeddings"];
    config.type_vocab_size = c["type_vocab_size"];
    config.layer_norm_eps = c["layer_norm_eps"];
    config.hidden_dropout_prob = c["hidden_dropout_prob"];
    config.attention_probs_dropout_prob = c["attention_probs_dropout_prob"];
    config.pad_token_id = c["pad_token_id"];
    if (c.contains("embedding_size")) config.embedding_size = c["embedding_size"].get<int>();
  }
  void distilbert_config(const nlohmann::json& c) {
    config.vocab_size = c["vocab_size"];
    config.hidden_size = c["dim"];
    config.num_hidden_layers = c["n_layers"];
    config.num_attention_heads = c["n_heads"];
    config.intermediate_size = c["hidden_dim"];
    config.max_position_embeddings = c["max_position_embeddings"];
    config.hidden_dropout_prob = c["dropout"];
    config.attention_probs_dropout_prob = c["attention_dropout"];
    config.qa_dropout = c["qa_dropout"];
    config.seq_classif_dropout = c["seq_classif_dropout"];
    config.pad_token_id = c["pad_token_id"];
  }

  [[nodiscard]] bool has(const std::string& name) const { return file.contains(name); }
  [[nodiscard]] std::vector<std::int64_t> longs(const std::string& name) const {
    std::vector<std::int64_t> v(static_cast<std::size_t>(file.info(name).numel));
    file.read_i64(name, v);
    return v;
  }
  [[nodiscard]] std::vector<std::int32_t> ints(const std::string& name) const {
    const auto l = longs(name);
    return {l.begin(), l.end()};
  }
  [[nodiscard]] std::vector<float> floats(const std::string& name) const {
    std::vector<float> v(static_cast<std::size_t>(file.info(name).numel));
    file.read_float(name, v);
    return v;
  }

  /// The encoder's inputs of the batch into `b`.
  void inputs(nn::encoder_batch& b) const {
    const auto& ids = file.info("input/input_ids");
    b.batch = static_cast<std::size_t>(ids.shape[0]);
    b.seq = static_cast<std::size_t>(ids.shape[1]);
    b.input_ids = ints("input/input_ids");
    b.attention_mask = ints("input/attention_mask");
    b.token_type_ids = has("input/token_type_ids") ? ints("input/token_type_ids")
                                                   : std::vector<std::int32_t>(b.batch * b.seq, 0);
  }

  /// The fixture's weights into every tensor of the model's table (each must be in the file, of the same shape).
  template <class Model>
  void load(Model& model) const {
    for (const auto& p : model.table().entries()) {
      INFO(p.name);
      REQUIRE(has("param/" + p.name));
      REQUIRE(file.info("param/" + p.name).shape == p.shape);
      file.read_float("param/" + p.name, model.params().subspan(p.offset, p.size));
    }
    model.parameters_changed();
  }

  /// Largest |got - want| relative to the largest |want| (near-zero elements of a well-scaled tensor do not
  /// demand impossible relative precision).
  static double relative_error(std::span<const float> got, std::span<const float> want) {
    REQUIRE(got.size() == want.size());
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
      scale = std::max(scale, std::abs(static_cast<double>(want[i])));
    }
    return scale == 0 ? worst : worst / scale;
  }
  static double max_abs(std::span<const float> x) {
    double m = 0;
    for (const float v : x) m = std::max(m, std::abs(static_cast<double>(v)));
    return m;
  }

  /// Every gradient of the model against PyTorch's: within 1e-4 of each tensor's scale, the structurally zero
  /// ones noise-sized on our side too. Returns how many were structurally zero.
  template <class Model>
  int check_gradients(const Model& model) const {
    double scale = 0;
    for (const auto& p : model.table().entries()) scale = std::max(scale, max_abs(floats("grad/" + p.name)));
    int structural = 0;
    for (const auto& p : model.table().entries()) {
      INFO(p.name);
      const auto got = model.grads().subspan(p.offset, p.size);
      if (std::find(structurally_zero.begin(), structurally_zero.end(), p.name) != structurally_zero.end()) {
        ++structural;
        CHECK(max_abs(got) < 1e-6 * scale);
      } else {
        CHECK(relative_error(got, floats("grad/" + p.name)) < 1e-4);
      }
    }
    return structural;
  }

  /// A fresh fp32 model of Head with the fixture's weights, run forward and backward on `batch`: loss and logits
  /// within 1e-5 of PyTorch's, every gradient as check_gradients says, `structural` of them structurally zero.
  template <class Head>
  void check_fp32_against_pytorch(const typename Head::batch_type& batch, int structural) const {
    nn::encoder_model<Head, precision::fp32> model(config, 1);
    load(model);
    model.zero_grad();
    const float loss = model.forward(batch, {.training = true});
    const float want = floats("expected/loss")[0];
    INFO("loss " << loss << " PyTorch " << want);
    CHECK(std::abs(loss - want) <= 1e-5 * std::abs(want));
    CHECK(relative_error(model.logits(), floats("expected/logits")) < 1e-5);
    model.backward();
    CHECK(check_gradients(model) == structural);
  }

  /// The bf16 mixed-precision model on `batch`: loss within 2e-2 and logits within 5e-2 of PyTorch's autocast, and
  /// of our fp32 model's; the gradients within 5e-2 of fp32's. Returns the bf16 loss.
  template <class Head>
  float check_bf16_against_autocast(const typename Head::batch_type& batch) const {
    nn::encoder_model<Head, precision::fp32> full(config, 1);
    nn::encoder_model<Head, precision::bf16_mixed> mixed(config, 1);
    load(full);
    load(mixed);
    const float loss32 = full.forward(batch);
    const float loss16 = mixed.forward(batch);
    const float autocast = floats("expected_bf16/loss")[0];
    INFO("fp32 " << loss32 << " bf16 " << loss16 << " autocast " << autocast);
    CHECK(loss16 != loss32);  // the bf16 path really rounds
    CHECK(std::abs(loss16 - loss32) <= 2e-2 * std::abs(loss32));
    CHECK(std::abs(loss16 - autocast) <= 2e-2 * std::abs(autocast));
    CHECK(relative_error(mixed.logits(), floats("expected_bf16/logits")) < 5e-2);
    full.backward();
    mixed.backward();
    CHECK(relative_error(mixed.grads(), full.grads()) < 5e-2);
    return loss16;
  }
};

}  // namespace cputrain::test
