// Tests for include/cputrain/nn/masked_lm_head.hpp against the PyTorch references of BertForMaskedLM,
// RobertaForMaskedLM, DistilBertForMaskedLM and ElectraForMaskedLM (scripts/encoder_reference.py): logits over the
// vocabulary, the loss over the masked tokens, and every gradient — the word table's summed over its two uses (the
// embeddings and the tied decoder) — in fp32; bf16 near autocast.
#include "cputrain/nn/masked_lm_head.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/nn/encoder_model.hpp"
#include "support/encoder_fixture.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace masked_lm_head_test {

namespace ct = cputrain;
using fp32_model = ct::nn::encoder_model<ct::nn::masked_lm_head, ct::precision::fp32>;

ct::nn::masked_lm_batch batch_of(const ct::test::encoder_fixture& f) {
  ct::nn::masked_lm_batch b;
  f.inputs(b);
  b.labels = f.longs("input/labels");
  return b;
}

TEST_CASE("each family's masked-LM model in fp32: logits, loss and every gradient as PyTorch's, the tied table's too") {
  const std::string name = GENERATE("bert_masked_lm", "roberta_masked_lm", "distilbert_masked_lm", "electra_masked_lm");
  INFO(name);
  const ct::test::encoder_fixture f(name);
  fp32_model model(f.config, 1);
  f.load(model);
  // the decoder has no weight of its own: the word table is the file's only [vocab, W] tensor
  const auto& word = model.table().entries().front();
  CHECK(word.role == ct::nn::parameter_role::word_embedding);
  CHECK(word.offset == 0);
  const auto batch = batch_of(f);
  CHECK(std::count(batch.labels.begin(), batch.labels.end(), -100) > 0);  // only the masked tokens count
  f.check_fp32_against_pytorch<ct::nn::masked_lm_head>(batch, f.config.num_hidden_layers);
  model.zero_grad();
  (void)model.forward(batch);
  model.backward();
  // every row of the word table gets gradient through the decoder, the padding row too (as in PyTorch)
  const auto W = static_cast<std::size_t>(f.config.embedding_width());
  const auto pad = static_cast<std::size_t>(f.config.pad_token_id);
  CHECK(f.max_abs(model.grads().subspan(word.offset + pad * W, W)) > 0.0);
}

TEST_CASE("a masked-LM model under bf16 mixed precision stays near PyTorch's autocast and our fp32") {
  const std::string name = GENERATE("bert_masked_lm", "roberta_masked_lm");
  INFO(name);
  const ct::test::encoder_fixture f(name);
  (void)f.check_bf16_against_autocast<ct::nn::masked_lm_head>(batch_of(f));
}

TEST_CASE("the masked-LM loss does not depend on the thread count (rows in parallel, summed in order)") {
  const ct::test::encoder_fixture f("bert_masked_lm");
  fp32_model model(f.config, 1);
  f.load(model);
  const auto batch = batch_of(f);
  const float many = model.forward(batch);
  float one = 0;
  oneapi::tbb::task_arena(1).execute([&] { one = model.forward(batch); });
  CHECK(one == many);
}

}  // namespace masked_lm_head_test
