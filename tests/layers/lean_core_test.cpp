// A program of the lean core (tests/layers/CMakeLists.txt): tokenizes a question and a context, trains the model on
// them with AdamW, and reads the answer back — built against cputrain::cputrain alone, with MPI's, Boost's and
// hwloc's headers poisoned, so that it compiling at all is the proof that nn/, kernels/, optim/ and text/ (and
// everything they include) need none of them. Catch's runner is the shared one (support/catch_main.cpp, which
// includes no cputrain header).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/optim/adamw.hpp"
#include "cputrain/policy/policy.hpp"
#include "cputrain/policy/precision.hpp"
#include "cputrain/text/bert_tokenizer.hpp"

namespace ct = cputrain;

namespace {

ct::text::bert_tokenizer tiny_tokenizer() {
  return ct::text::bert_tokenizer(ct::text::vocabulary(
      {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "where", "is", "the", "cat", "?", "sits", "on", "mat", ".", "a",
       "##s", "dog"}));
}

// [CLS] question [SEP] context [SEP], one sequence; the answer span is given in context tokens.
ct::nn::qa_batch question_and_context(const ct::text::bert_tokenizer& tokenizer, const std::string& question,
                                      const std::string& context, std::int64_t answer_first, std::int64_t answer_last) {
  const auto q = tokenizer.encode(question);
  const auto c = tokenizer.encode(context);
  ct::nn::qa_batch batch;
  batch.batch = 1;
  batch.input_ids.push_back(2);
  batch.input_ids.insert(batch.input_ids.end(), q.ids.begin(), q.ids.end());
  batch.input_ids.push_back(3);
  const auto context_start = static_cast<std::int64_t>(batch.input_ids.size());
  batch.input_ids.insert(batch.input_ids.end(), c.ids.begin(), c.ids.end());
  batch.input_ids.push_back(3);
  batch.seq = batch.input_ids.size();
  batch.token_type_ids.assign(batch.seq, 0);
  std::fill(batch.token_type_ids.begin() + context_start, batch.token_type_ids.end(), 1);
  batch.attention_mask.assign(batch.seq, 1);
  batch.start_positions = {context_start + answer_first};
  batch.end_positions = {context_start + answer_last};
  return batch;
}

}  // namespace

TEST_CASE("the tokenizer splits words into the vocabulary's pieces") {
  const auto tokenizer = tiny_tokenizer();
  const auto tokens = tokenizer.encode("Where is the cat? The cats sit.");
  // "sit" is not a word of the vocabulary: [UNK]; "cats" is cat + ##s.
  CHECK(tokens.ids == std::vector<std::int32_t>{5, 6, 7, 8, 9, 7, 8, 15, 1, 13});
}

TEST_CASE("the model learns an answer span with AdamW, in both precisions") {
  const auto tokenizer = tiny_tokenizer();
  const auto batch = question_and_context(tokenizer, "where is the cat?", "the cat sits on a mat.", 4, 5);
  REQUIRE(batch.seq == 15);  // [CLS] + 5 question tokens + [SEP] + 7 context tokens + [SEP]

  ct::nn::bert_config config;
  config.vocab_size = 17;
  config.hidden_size = 32;
  config.num_hidden_layers = 2;
  config.num_attention_heads = 4;
  config.intermediate_size = 64;
  config.max_position_embeddings = 32;
  config.hidden_dropout_prob = 0.0f;
  config.attention_probs_dropout_prob = 0.0f;

  const auto train = [&](auto policy_tag) {
    using policy_type = decltype(policy_tag);
    ct::nn::bert_qa<policy_type> model(config, 7);
    ct::optim::adamw_options options;
    options.lr = 1e-3;
    ct::optim::adamw<> optimizer(model.params().size(), model.table().ranges(), options);
    ct::nn::forward_options training;
    training.training = true;
    const float first = model.forward(batch, training);
    float loss = first;
    for (int step = 0; step < 60; ++step) {
      model.zero_grad();
      loss = model.forward(batch, training);
      model.backward();
      optimizer.step(model.params(), model.grads(), options.lr);
      model.parameters_changed();
    }
    // ln(15) = 2.71 per end at the start (uniform over 15 positions); a model that learns ends far below.
    CHECK(first > 2.0f);
    CHECK(loss < 0.2f * first);
    // The answer read back from the logits: "a mat" is context tokens 4-5, positions 11-12.
    ct::nn::qa_batch eval = batch;
    eval.start_positions.clear();
    eval.end_positions.clear();
    ct::nn::forward_options evaluation;
    evaluation.training = false;
    model.forward(eval, evaluation);
    std::size_t best_start = 0, best_end = 0;
    const auto logits = model.logits();  // [tokens, 2]: start, end
    for (std::size_t t = 0; t < eval.seq; ++t) {
      if (logits[t * 2] > logits[best_start * 2]) best_start = t;
      if (logits[t * 2 + 1] > logits[best_end * 2 + 1]) best_end = t;
    }
    CHECK(best_start == 11);
    CHECK(best_end == 12);
  };
  SECTION("fp32") { train(ct::policy<ct::precision::fp32>{}); }
  SECTION("bf16") { train(ct::policy<ct::precision::bf16_mixed>{}); }
}
