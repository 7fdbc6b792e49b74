// Tests for include/cputrain/nn/qa_head.hpp on the encoder families: BertForQuestionAnswering,
// RobertaForQuestionAnswering and DistilBertForQuestionAnswering against their PyTorch references (scripts/encoder_reference.py) — logits, loss and
// every gradient in fp32, bf16 near autocast. (tests/nn/bert_qa_test.cpp holds the BERT model's older reference and
// its AdamW steps.)
#include "cputrain/nn/qa_head.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "cputrain/nn/encoder_model.hpp"
#include "support/encoder_fixture.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace qa_head_test {

namespace ct = cputrain;
using fp32_model = ct::nn::encoder_model<ct::nn::qa_head, ct::precision::fp32>;

ct::nn::qa_batch batch_of(const ct::test::encoder_fixture& f) {
  ct::nn::qa_batch b;
  f.inputs(b);
  b.start_positions = f.longs("input/start_positions");
  b.end_positions = f.longs("input/end_positions");
  return b;
}

TEST_CASE("BERT's, RoBERTa's, DistilBERT's and ELECTRA's QA models in fp32: logits, loss and every gradient as PyTorch's") {
  const std::string name =
      GENERATE("bert_question_answering", "roberta_question_answering", "distilbert_question_answering",
               "electra_question_answering");
  INFO(name);
  const ct::test::encoder_fixture f(name);
  // the key biases, qa_outputs' bias and through it the last LayerNorm's bias are structurally zero
  f.check_fp32_against_pytorch<ct::nn::qa_head>(batch_of(f), f.config.num_hidden_layers + 2);
}

TEST_CASE("RoBERTa's padding rows learn nothing: the word table's and the position table's pad_token_id rows") {
  const ct::test::encoder_fixture f("roberta_question_answering");
  REQUIRE(f.config.pad_token_id == 1);
  fp32_model model(f.config, 1);
  f.load(model);
  const auto batch = batch_of(f);
  model.zero_grad();
  (void)model.forward(batch);
  model.backward();
  const auto H = static_cast<std::size_t>(f.config.hidden_size);
  const auto& word = model.table().at("roberta.embeddings.word_embeddings.weight");
  const auto& position = model.table().at("roberta.embeddings.position_embeddings.weight");
  REQUIRE(std::count(batch.input_ids.begin(), batch.input_ids.end(), 1) > 0);  // padding is in the batch
  CHECK(f.max_abs(model.grads().subspan(word.offset + H, H)) == 0.0);
  CHECK(f.max_abs(model.grads().subspan(position.offset + H, H)) == 0.0);
  const auto first_id = static_cast<std::size_t>(batch.input_ids[0]);
  CHECK(f.max_abs(model.grads().subspan(word.offset + first_id * H, H)) > 0.0);
  CHECK(f.max_abs(model.grads().subspan(position.offset + 2 * H, H)) > 0.0);  // the first real token's position
}

TEST_CASE("DistilBERT's qa_dropout is drawn per step, the other families' QA heads have no dropout") {
  for (const std::string name : {"distilbert_question_answering", "bert_question_answering"}) {
    INFO(name);
    const ct::test::encoder_fixture f(name);
    ct::nn::bert_config config = f.config;
    config.qa_dropout = 0.5f;  // the encoder stays without dropout: only the head's could change the loss
    fp32_model model(config, 1);
    f.load(model);
    const auto batch = batch_of(f);
    const float off = model.forward(batch, {.training = false});
    const float on = model.forward(batch, {.training = true, .seed = 3, .step = 0});
    const float next = model.forward(batch, {.training = true, .seed = 3, .step = 1});
    if (config.distilbert()) {
      CHECK(on != off);
      CHECK(next != on);
    } else {
      CHECK(on == off);
    }
  }
}

TEST_CASE("a RoBERTa sequence longer than max_position_embeddings - pad_token_id - 1 is refused") {
  const ct::test::encoder_fixture f("roberta_question_answering");
  ct::nn::bert_config config = f.config;
  fp32_model model(config, 1);
  ct::nn::qa_batch batch;
  batch.batch = 1;
  batch.seq = static_cast<std::size_t>(config.max_position_embeddings - 1);  // one more than the 12 that fit
  batch.input_ids.assign(batch.seq, 5);
  batch.token_type_ids.assign(batch.seq, 0);
  batch.attention_mask.assign(batch.seq, 1);
  CHECK_THROWS_WITH(model.forward(batch), Catch::Contains("sequence length 13"));
  batch.seq = 12;
  batch.input_ids.resize(12);
  batch.token_type_ids.resize(12);
  batch.attention_mask.resize(12);
  CHECK(std::isnan(model.forward(batch)));  // fits; no labels, no loss
}

TEST_CASE("a QA model under bf16 mixed precision stays near PyTorch's autocast and our fp32") {
  const std::string name =
      GENERATE("bert_question_answering", "roberta_question_answering", "distilbert_question_answering",
               "electra_question_answering");
  INFO(name);
  const ct::test::encoder_fixture f(name);
  (void)f.check_bf16_against_autocast<ct::nn::qa_head>(batch_of(f));
}

}  // namespace qa_head_test
