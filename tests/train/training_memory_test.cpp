// Tests for include/cputrain/train/training_memory.hpp: the training bill adds AdamW's moments and the larger
// batch's activations to the model's buffers, names the option that sets the batch, and the trainer refuses a
// step that cannot fit before allocating its optimizer.
#include <catch2/catch.hpp>

#include <string>

#include "cputrain/nn/model_memory.hpp"
#include "cputrain/train/training_memory.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace training_memory_test {

namespace ct = cputrain;
using Catch::Matchers::Contains;

namespace {

ct::nn::bert_config tiny() {
  ct::nn::bert_config c;
  c.num_hidden_layers = 2;
  c.hidden_size = 64;
  c.num_attention_heads = 4;
  c.intermediate_size = 256;
  c.vocab_size = 1000;
  c.max_position_embeddings = 128;
  return c;
}

}  // namespace

TEST_CASE("AdamW's moments are two floats per parameter") {
  const auto c = tiny();
  CHECK(ct::train::optimizer_memory(c).total() == 8.0 * static_cast<double>(ct::nn::parameter_count(c)));
}

TEST_CASE("the training bill is the model, AdamW and the larger batch that runs, named by its option") {
  const auto c = tiny();
  ct::train::training_options options;
  options.per_device_train_batch_size = 4;
  options.per_device_eval_batch_size = 16;
  const auto training_only = ct::train::training_memory(c, options, 4, 128, false);
  const auto with_eval = ct::train::training_memory(c, options, 4, 128, true, "--");
  const double model_and_adam = ct::nn::model_memory(c, 4).total() + ct::train::optimizer_memory(c).total();
  CHECK(training_only.total() == Approx(model_and_adam + ct::nn::activation_memory(c, 4, {4, 128}).total()));
  CHECK(with_eval.total() == Approx(model_and_adam + ct::nn::activation_memory(c, 4, {16, 128}).total()));
  const auto* acts = &with_eval.items().back();
  CHECK_THAT(acts->cause, Contains("--per_device_eval_batch_size 16 x --max_seq_length 128 tokens"));
  CHECK_THAT(training_only.items().back().cause, Contains("per_device_train_batch_size 4 x max_seq_length 128"));
  // bf16: activations in 2 bytes and the weights' bf16 copy
  const auto bf16 = ct::train::training_memory(c, options, 2, 128, false);
  CHECK(bf16.total() < training_only.total());
}

}  // namespace training_memory_test
