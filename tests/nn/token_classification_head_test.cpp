// Tests for include/cputrain/nn/token_classification_head.hpp against the PyTorch reference of Hugging Face's
// BertForTokenClassification, RobertaForTokenClassification and DistilBertForTokenClassification
// (scripts/encoder_reference.py): logits, loss with -100 ignored, every gradient,
// bf16 mixed precision, and the labels it refuses.
#include "cputrain/nn/token_classification_head.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "cputrain/nn/encoder_model.hpp"
#include "support/encoder_fixture.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace token_classification_head_test {

namespace ct = cputrain;
using head = ct::nn::token_classification_head;
using fp32_model = ct::nn::encoder_model<head, ct::precision::fp32>;

ct::nn::token_classification_batch batch_of(const ct::test::encoder_fixture& f) {
  ct::nn::token_classification_batch b;
  f.inputs(b);
  b.labels = f.longs("input/labels");
  return b;
}

TEST_CASE("BERT's, RoBERTa's, DistilBERT's and ELECTRA's token heads in fp32: logits, loss over the labelled tokens and every gradient as PyTorch's") {
  const std::string name =
      GENERATE("bert_token_classification", "roberta_token_classification", "distilbert_token_classification",
               "electra_token_classification");
  INFO(name);
  const ct::test::encoder_fixture f(name);
  const auto batch = batch_of(f);
  // the fixture ignores padding and some real tokens
  CHECK(std::count(batch.labels.begin(), batch.labels.end(), -100) > 0);
  f.check_fp32_against_pytorch<head>(batch, f.config.num_hidden_layers);
}

TEST_CASE("a token head under bf16 mixed precision stays near PyTorch's autocast and our fp32") {
  const std::string name =
      GENERATE("bert_token_classification", "roberta_token_classification", "distilbert_token_classification",
               "electra_token_classification");
  INFO(name);
  const ct::test::encoder_fixture f(name);
  (void)f.check_bf16_against_autocast<head>(batch_of(f));
}

TEST_CASE("a token head's labels: -100 ignored everywhere is a NaN loss, a class beyond num_labels is refused") {
  const ct::test::encoder_fixture f("bert_token_classification");
  fp32_model model(f.config, 1);
  auto batch = batch_of(f);
  batch.labels[4] = 5;  // num_labels is 5
  CHECK_THROWS_WITH(model.forward(batch), Catch::Contains("labels[4] = 5"));
  std::fill(batch.labels.begin(), batch.labels.end(), -100);
  CHECK(std::isnan(model.forward(batch)));  // 0/0, as PyTorch gives
  batch.labels.resize(3);
  CHECK_THROWS_WITH(model.forward(batch), Catch::Contains("3 labels for batch x seq = 36 tokens"));
}

}  // namespace token_classification_head_test
