// Tests for include/cputrain/nn/sequence_classification_head.hpp against the PyTorch reference of Hugging Face's
// BertForSequenceClassification, RobertaForSequenceClassification and DistilBertForSequenceClassification
// (scripts/encoder_reference.py): logits, loss
// and every gradient for the three problem types, bf16 mixed precision against autocast and against fp32, and the labels it refuses.
#include "cputrain/nn/sequence_classification_head.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "cputrain/nn/encoder_model.hpp"
#include "support/encoder_fixture.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace sequence_classification_head_test {

namespace ct = cputrain;
using head = ct::nn::sequence_classification_head;
using fp32_model = ct::nn::encoder_model<head, ct::precision::fp32>;

ct::nn::sequence_classification_batch batch_of(const ct::test::encoder_fixture& f) {
  ct::nn::sequence_classification_batch b;
  f.inputs(b);
  if (f.file.info("input/labels").dtype == ct::io::dtype::i64) {
    b.labels = f.longs("input/labels");
  } else {
    b.label_values = f.floats("input/labels");
  }
  return b;
}

TEST_CASE("BERT's, RoBERTa's, DistilBERT's and ELECTRA's sequence heads in fp32: logits, loss and every gradient as PyTorch's, for each problem type") {
  for (const std::string name :
       {"bert_sequence_classification", "bert_sequence_classification_multi_label",
        "bert_sequence_classification_regression", "roberta_sequence_classification",
        "roberta_sequence_classification_multi_label", "roberta_sequence_classification_regression",
        "distilbert_sequence_classification", "distilbert_sequence_classification_multi_label",
        "distilbert_sequence_classification_regression", "electra_sequence_classification",
        "electra_sequence_classification_multi_label", "electra_sequence_classification_regression"}) {
    INFO(name);
    const ct::test::encoder_fixture f(name);
    // only the key biases are structurally zero: every other tensor, the pooler's included, carries the gradient
    f.check_fp32_against_pytorch<head>(batch_of(f), f.config.num_hidden_layers);
  }
}

TEST_CASE("a sequence head under bf16 mixed precision stays near PyTorch's autocast and our fp32") {
  const std::string name = GENERATE("bert_sequence_classification", "roberta_sequence_classification",
                                    "distilbert_sequence_classification", "electra_sequence_classification");
  INFO(name);
  const ct::test::encoder_fixture f(name);
  (void)f.check_bf16_against_autocast<head>(batch_of(f));
}

TEST_CASE("dropout between pooler and classifier: classifier_dropout, else hidden_dropout_prob, drawn per step") {
  const ct::test::encoder_fixture f("bert_sequence_classification");
  ct::nn::bert_config config = f.config;
  config.classifier_dropout = 0.5f;  // the encoder stays without dropout: only the head's changes the loss
  fp32_model model(config, 1);
  f.load(model);
  const auto batch = batch_of(f);
  const float off = model.forward(batch, {.training = false});
  const float step0 = model.forward(batch, {.training = true, .seed = 3, .step = 0});
  const float again = model.forward(batch, {.training = true, .seed = 3, .step = 0});
  const float step1 = model.forward(batch, {.training = true, .seed = 3, .step = 1});
  CHECK(off == Approx(f.floats("expected/loss")[0]).epsilon(1e-5));
  CHECK(step0 != off);
  CHECK(step0 == again);
  CHECK(step1 != step0);
  config.classifier_dropout.reset();
  CHECK(config.classifier_dropout_prob() == config.hidden_dropout_prob);
}

TEST_CASE("labels a sequence head cannot use are refused naming the problem") {
  const ct::test::encoder_fixture f("bert_sequence_classification");
  fp32_model model(f.config, 1);
  auto batch = batch_of(f);
  batch.labels[1] = 3;  // num_labels is 3
  CHECK_THROWS_WITH(model.forward(batch), Catch::Contains("labels[1] = 3") && Catch::Contains("[0, 3)"));
  batch.labels[1] = -100;  // ignored, as CrossEntropyLoss ignores it
  CHECK(std::isfinite(model.forward(batch)));
  batch.labels.resize(2);
  CHECK_THROWS_WITH(model.forward(batch), Catch::Contains("2 labels for 3 sequences"));
  batch.labels.clear();
  batch.label_values = {0.5f, 1.0f};
  CHECK_THROWS_AS(model.forward(batch), ct::usage_error);  // single_label_classification needs class ids
}

}  // namespace sequence_classification_head_test
