// Tests for include/cputrain/nn/bert_qa.hpp against the PyTorch reference (scripts/pytorch_reference.py writes
// tests/nn/data/bert_qa_reference.safetensors): loss, logits, every gradient, and the weights after three
// clipped AdamW steps with a warmup schedule, in fp32; bf16 mixed precision against fp32.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/io/safetensors.hpp"
#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/optim/adamw.hpp"
#include "cputrain/optim/grad_clip.hpp"
#include "cputrain/optim/lr_schedule.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace bert_qa_test {

namespace ct = cputrain;
using fp32_model = ct::nn::bert_qa<ct::policy<ct::precision::fp32>>;
using bf16_model = ct::nn::bert_qa<ct::policy<ct::precision::bf16_mixed>>;

namespace {

const std::filesystem::path fixture_path = std::filesystem::path(CPUTRAIN_TESTS_SOURCE_DIR) / "nn/data/bert_qa_reference.safetensors";

struct fixture {
  ct::io::safetensors_file file = ct::io::safetensors_file::open(fixture_path);
  ct::nn::bert_config config;
  ct::nn::qa_batch batch;
  nlohmann::json training;

  fixture() {
    const auto c = nlohmann::json::parse(file.metadata().at("config"));
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
    training = nlohmann::json::parse(file.metadata().at("training"));

    const auto& ids = file.info("input/input_ids");
    batch.batch = static_cast<std::size_t>(ids.shape[0]);
    batch.seq = static_cast<std::size_t>(ids.shape[1]);
    batch.input_ids = ints("input/input_ids");
    batch.token_type_ids = ints("input/token_type_ids");
    batch.attention_mask = ints("input/attention_mask");
    batch.start_positions = longs("input/start_positions");
    batch.end_positions = longs("input/end_positions");
  }
  std::vector<std::int64_t> longs(const std::string& name) const {
    std::vector<std::int64_t> v(static_cast<std::size_t>(file.info(name).numel));
    file.read_i64(name, v);
    return v;
  }
  std::vector<std::int32_t> ints(const std::string& name) const {
    const auto l = longs(name);
    return {l.begin(), l.end()};
  }
  std::vector<float> floats(const std::string& name) const {
    std::vector<float> v(static_cast<std::size_t>(file.info(name).numel));
    file.read_float(name, v);
    return v;
  }
  template <class Model>
  void load(Model& model, const std::string& prefix) const {
    for (const auto& p : model.table().entries()) {
      REQUIRE(file.info(prefix + p.name).shape == p.shape);
      file.read_float(prefix + p.name, model.params().subspan(p.offset, p.size));
    }
    model.parameters_changed();
  }
};

/// Largest |got - want| over the tensor, relative to the tensor's largest |want| (so near-zero elements of a
/// well-scaled tensor do not demand impossible relative precision).
double relative_error(std::span<const float> got, std::span<const float> want) {
  REQUIRE(got.size() == want.size());
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return scale == 0 ? worst : worst / scale;
}

/// Largest |x| of a tensor.
double max_abs(std::span<const float> x) {
  double m = 0;
  for (float v : x) m = std::max(m, std::abs(static_cast<double>(v)));
  return m;
}

/// Some gradients are zero in exact arithmetic: a key bias shifts every score of a query row alike (softmax
/// ignores it), and the QA head's bias, and through it the last LayerNorm's bias, receive the sum over positions
/// of softmax - one-hot, which is zero. Both frameworks then hold rounding noise there, which no tolerance can
/// compare, and Adam, normalising by the gradient's own size, turns that noise into steps of up to lr.
bool structurally_zero(const fixture& f, const std::string& name, double global_scale) {
  return max_abs(f.floats("grad/" + name)) < 1e-6 * global_scale;
}

double global_gradient_scale(const fixture& f, const ct::nn::parameter_table& table) {
  double scale = 0;
  for (const auto& p : table.entries()) scale = std::max(scale, max_abs(f.floats("grad/" + p.name)));
  return scale;
}

}  // namespace

TEST_CASE("fp32 forward and backward match PyTorch: loss, logits and every gradient") {
  const fixture f;
  fp32_model model(f.config, 1);
  f.load(model, "param/");
  model.zero_grad();
  const float loss = model.forward(f.batch, {.training = true});
  const float want = f.floats("expected/loss")[0];
  INFO("loss " << loss << " PyTorch " << want);
  CHECK(std::abs(loss - want) <= 1e-5 * std::abs(want));
  CHECK(relative_error(model.logits(), f.floats("expected/logits")) < 1e-5);

  model.backward();
  const double scale = global_gradient_scale(f, model.table());
  int structural = 0;
  for (const auto& p : model.table().entries()) {
    INFO(p.name);
    const auto got = model.grads().subspan(p.offset, p.size);
    if (structurally_zero(f, p.name, scale)) {
      ++structural;
      CHECK(max_abs(got) < 1e-6 * scale);  // ours is noise-sized too
    } else {
      CHECK(relative_error(got, f.floats("grad/" + p.name)) < 1e-4);
    }
  }
  // exactly the key biases of both layers, the last output LayerNorm bias and the QA bias
  CHECK(structural == 4);
  // the padding token's embedding row gets no gradient
  const auto& word = model.table().at("bert.embeddings.word_embeddings.weight");
  const auto pad_row = model.grads().subspan(word.offset, static_cast<std::size_t>(f.config.hidden_size));
  CHECK(std::all_of(pad_row.begin(), pad_row.end(), [](float g) { return g == 0.0f; }));
}

TEST_CASE("three clipped AdamW steps with linear warmup end where PyTorch's do") {
  const fixture f;
  fp32_model model(f.config, 1);
  f.load(model, "param/");
  ct::optim::adamw_options options;
  options.weight_decay = f.training["weight_decay"];
  ct::optim::adamw optimizer(model.params().size(), model.table().ranges(), options);
  ct::optim::lr_schedule schedule{ct::optim::schedule_kind::linear, f.training["lr"], f.training["warmup_steps"],
                                  f.training["total_steps"]};
  const auto losses = f.floats("expected/losses");
  const auto norms = f.floats("expected/grad_norms");
  const auto lrs = f.floats("expected/lrs");
  for (int step = 0; step < 3; ++step) {
    model.zero_grad();
    const float loss = model.forward(f.batch, {.training = true, .step = static_cast<std::uint64_t>(step)});
    model.backward();
    const float norm = ct::optim::clip_grad_norm(model.grads(), f.training["max_grad_norm"]);
    const double lr = schedule.lr(step);
    INFO("step " << step);
    CHECK(std::abs(loss - losses[static_cast<std::size_t>(step)]) <= 1e-5 * losses[static_cast<std::size_t>(step)]);
    CHECK(std::abs(norm - norms[static_cast<std::size_t>(step)]) <= 1e-4 * norms[static_cast<std::size_t>(step)]);
    CHECK(static_cast<float>(lr) == lrs[static_cast<std::size_t>(step)]);
    optimizer.step(model.params(), model.grads(), lr);
    model.parameters_changed();
  }
  const double scale = global_gradient_scale(f, model.table());
  const double lr_sum = static_cast<double>(lrs[0]) + lrs[1] + lrs[2];
  for (const auto& p : model.table().entries()) {
    INFO(p.name);
    const auto got = model.params().subspan(p.offset, p.size);
    const auto want = f.floats("after3/" + p.name);
    if (structurally_zero(f, p.name, scale)) {
      // Adam moves each element by at most about lr per step, whatever the noise said.
      const auto before = f.floats("param/" + p.name);
      for (std::size_t i = 0; i < p.size; ++i) CHECK(std::abs(got[i] - before[i]) <= 1.01 * lr_sum + 1e-7);
    } else {
      CHECK(relative_error(got, want) < 1e-5);
    }
  }
}

TEST_CASE("bf16 mixed precision stays within 1e-2 of fp32 and keeps half the activation memory") {
  const fixture f;
  fp32_model full(f.config, 1);
  bf16_model mixed(f.config, 1);
  f.load(full, "param/");
  f.load(mixed, "param/");
  const float loss32 = full.forward(f.batch);
  const float loss16 = mixed.forward(f.batch);
  INFO("fp32 " << loss32 << " bf16 " << loss16);
  CHECK(std::abs(loss16 - loss32) <= 1e-2 * std::abs(loss32));
  CHECK(loss16 != loss32);  // the bf16 path really rounds
  CHECK(mixed.activation_bytes() * 2 == full.activation_bytes());
  full.backward();
  mixed.backward();
  CHECK(relative_error(mixed.grads(), full.grads()) < 5e-2);
}

TEST_CASE("a forward that keeps no activations gives the same logits from one layer's buffers and refuses backward") {
  const fixture f;
  REQUIRE(f.config.num_hidden_layers >= 2);  // one layer's buffers must serve several
  fp32_model kept(f.config, 1), evaluating(f.config, 1);
  f.load(kept, "param/");
  f.load(evaluating, "param/");
  ct::nn::forward_options train_off;
  train_off.training = false;
  ct::nn::forward_options no_keep = train_off;
  no_keep.keep_activations = false;
  const float loss_kept = kept.forward(f.batch, train_off);
  const float loss_evaluating = evaluating.forward(f.batch, no_keep);
  CHECK(loss_evaluating == loss_kept);
  CHECK(std::vector<float>(evaluating.logits().begin(), evaluating.logits().end()) ==
        std::vector<float>(kept.logits().begin(), kept.logits().end()));
  // The layers' kept activations shrink to one layer's (the embeddings' stay): L layers keep L - 1 layers more.
  const auto layers = static_cast<std::size_t>(f.config.num_hidden_layers);
  const std::size_t one_layer = (kept.activation_bytes() - evaluating.activation_bytes()) / (layers - 1);
  CHECK(one_layer > 0);
  CHECK(evaluating.activation_bytes() + (layers - 1) * one_layer == kept.activation_bytes());
  CHECK(evaluating.activation_bytes() > one_layer);
  CHECK_THROWS_WITH(evaluating.backward(), Catch::Contains("kept no activations"));
  // Training again lays every layer out anew: its gradients are those of a model that always kept them.
  CHECK(evaluating.forward(f.batch, train_off) == loss_kept);
  kept.backward();
  evaluating.backward();
  CHECK(std::vector<float>(evaluating.grads().begin(), evaluating.grads().end()) ==
        std::vector<float>(kept.grads().begin(), kept.grads().end()));
}

TEST_CASE("training mode draws dropout masks from (seed, step): same inputs give the same loss, a new step new masks") {
  const fixture f;
  auto config = f.config;
  config.hidden_dropout_prob = 0.1f;
  config.attention_probs_dropout_prob = 0.1f;
  fp32_model model(config, 1);
  f.load(model, "param/");
  const float a = model.forward(f.batch, {.training = true, .seed = 5, .step = 3});
  const float b = model.forward(f.batch, {.training = true, .seed = 5, .step = 3});
  const float c = model.forward(f.batch, {.training = true, .seed = 5, .step = 4});
  const float eval = model.forward(f.batch, {.training = false});
  CHECK(a == b);
  CHECK(a != c);
  CHECK(eval == Approx(f.floats("expected/loss")[0]).epsilon(1e-5));  // no dropout in evaluation
}

TEST_CASE("backward reports each block's gradients final as soon as they are: head, last layer first, embeddings") {
  const fixture f;
  fp32_model model(f.config, 1);
  f.load(model, "param/");
  model.zero_grad();
  (void)model.forward(f.batch, {.training = true});
  model.backward();
  const std::vector<float> final_grads(model.grads().begin(), model.grads().end());

  model.zero_grad();
  (void)model.forward(f.batch, {.training = true});
  std::vector<std::size_t> offsets;
  model.backward(1.0f, [&](std::size_t offset) {
    offsets.push_back(offset);
    // Everything from `offset` on is already what the whole backward ends with...
    const auto tail = model.grads().subspan(offset);
    CHECK(std::equal(tail.begin(), tail.end(), final_grads.begin() + static_cast<std::ptrdiff_t>(offset)));
    // ... and the tensor just before it is not done yet (its gradient is still zero).
    if (offset > 0) {
      const auto& table = model.table();
      const auto before = std::find_if(table.entries().rbegin(), table.entries().rend(),
                                       [&](const auto& p) { return p.offset < offset; });
      REQUIRE(before != table.entries().rend());
      const auto g = model.grads().subspan(before->offset, before->size);
      CHECK(std::all_of(g.begin(), g.end(), [](float x) { return x == 0.0f; }));
    }
  });
  const auto& table = model.table();
  std::vector<std::size_t> want{table.at("qa_outputs.weight").offset};
  for (int l = f.config.num_hidden_layers; l-- > 0;) {
    want.push_back(table.at("bert.encoder.layer." + std::to_string(l) + ".attention.self.query.weight").offset);
  }
  want.push_back(0);
  CHECK(offsets == want);
  CHECK(std::equal(final_grads.begin(), final_grads.end(), model.grads().begin()));
}

}  // namespace bert_qa_test
