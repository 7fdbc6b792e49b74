// Tests for include/cputrain/nn/bert_config.hpp: Hugging Face's BertConfig defaults, head_dim, and validate()
// rejecting each field the model cannot run with by a usage_error that names the field and its value.
#include <catch2/catch.hpp>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cputrain/nn/bert_config.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace bert_config_test {

using Catch::Matchers::Contains;
using cputrain::usage_error;
using cputrain::nn::bert_config;

TEST_CASE("bert_config defaults are Hugging Face BertConfig's (bert-base-uncased)") {
  const bert_config c;
  CHECK(c.vocab_size == 30522);
  CHECK(c.hidden_size == 768);
  CHECK(c.num_hidden_layers == 12);
  CHECK(c.num_attention_heads == 12);
  CHECK(c.intermediate_size == 3072);
  CHECK(c.max_position_embeddings == 512);
  CHECK(c.type_vocab_size == 2);
  CHECK(c.layer_norm_eps == 1e-12f);
  CHECK(c.hidden_dropout_prob == 0.1f);
  CHECK(c.attention_probs_dropout_prob == 0.1f);
  CHECK(c.initializer_range == 0.02f);
  CHECK(c.pad_token_id == 0);
  CHECK(c.hidden_act == "gelu");
  CHECK(c.head_dim() == 64);
  CHECK_NOTHROW(c.validate());
}

TEST_CASE("head_dim is hidden_size / num_attention_heads") {
  bert_config large;
  large.hidden_size = 1024;
  large.num_attention_heads = 16;
  CHECK(large.head_dim() == 64);
  bert_config tiny;
  tiny.hidden_size = 8;
  tiny.num_attention_heads = 2;
  CHECK(tiny.head_dim() == 4);
  bert_config broken;
  broken.num_attention_heads = 0;
  CHECK(broken.head_dim() == 0);  // no division by zero before validate() has had its say
}

TEST_CASE("validate accepts the edges of each range") {
  bert_config c;
  c.hidden_dropout_prob = 0.0f;
  c.attention_probs_dropout_prob = 0.999f;
  c.initializer_range = 0.0f;
  c.pad_token_id = c.vocab_size - 1;
  c.num_hidden_layers = 1;
  c.hidden_size = 1;
  c.num_attention_heads = 1;
  CHECK_NOTHROW(c.validate());
}

TEST_CASE("validate rejects each bad field with a usage_error naming the field and its value") {
  struct bad_case {
    std::function<void(bert_config&)> mutate;
    std::vector<std::string> words;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<bad_case> cases = {
      {[](bert_config& c) { c.vocab_size = 0; }, {"vocab_size = 0", "positive"}},
      {[](bert_config& c) { c.hidden_size = -768; }, {"hidden_size = -768", "positive"}},
      {[](bert_config& c) { c.num_hidden_layers = 0; }, {"num_hidden_layers = 0"}},
      {[](bert_config& c) { c.num_attention_heads = -1; }, {"num_attention_heads = -1"}},
      {[](bert_config& c) { c.intermediate_size = 0; }, {"intermediate_size = 0"}},
      {[](bert_config& c) { c.max_position_embeddings = -512; }, {"max_position_embeddings = -512"}},
      {[](bert_config& c) { c.type_vocab_size = 0; }, {"type_vocab_size = 0"}},
      {[](bert_config& c) { c.hidden_size = 770; }, {"hidden_size = 770", "not divisible", "num_attention_heads = 12"}},
      {[](bert_config& c) { c.layer_norm_eps = 0.0f; }, {"layer_norm_eps = 0"}},
      {[](bert_config& c) { c.layer_norm_eps = -1e-5f; }, {"layer_norm_eps = -1e-05"}},
      {[inf](bert_config& c) { c.layer_norm_eps = inf; }, {"layer_norm_eps = inf"}},
      {[](bert_config& c) { c.hidden_dropout_prob = 1.0f; }, {"hidden_dropout_prob = 1", "[0, 1)"}},
      {[](bert_config& c) { c.hidden_dropout_prob = -0.1f; }, {"hidden_dropout_prob = -0.1"}},
      {[nan](bert_config& c) { c.hidden_dropout_prob = nan; }, {"hidden_dropout_prob = nan"}},
      {[](bert_config& c) { c.attention_probs_dropout_prob = 1.5f; }, {"attention_probs_dropout_prob = 1.5"}},
      {[](bert_config& c) { c.initializer_range = -0.02f; }, {"initializer_range = -0.02"}},
      {[nan](bert_config& c) { c.initializer_range = nan; }, {"initializer_range = nan"}},
      {[](bert_config& c) { c.pad_token_id = -1; }, {"pad_token_id = -1", "vocab_size = 30522"}},
      {[](bert_config& c) { c.pad_token_id = 30522; }, {"pad_token_id = 30522"}},
      {[](bert_config& c) { c.hidden_act = "gelu_new"; }, {"hidden_act = \"gelu_new\"", "only \"gelu\""}},
      {[](bert_config& c) { c.hidden_act = "relu"; }, {"hidden_act = \"relu\"", "only \"gelu\""}},
      {[](bert_config& c) { c.hidden_act = "GELU"; }, {"hidden_act = \"GELU\""}},
  };
  for (const auto& bad : cases) {
    bert_config c;
    bad.mutate(c);
    std::string message = "<no exception>";
    try {
      c.validate();
    } catch (const usage_error& e) {
      message = e.what();
    }
    INFO(message);
    CHECK_THAT(message, Contains("bert_config"));
    for (const auto& word : bad.words) CHECK_THAT(message, Contains(word));
  }
}

TEST_CASE("bert_config compares field by field") {
  bert_config a, b;
  CHECK(a == b);
  b.hidden_act = "relu";
  CHECK_FALSE(a == b);
}

TEST_CASE("sizes whose parameter count no 64-bit size can hold are refused by name before any estimate") {
  bert_config c;
  c.num_hidden_layers = 2147483647;
  c.hidden_size = 2147483646;
  c.num_attention_heads = 2;
  c.intermediate_size = 2147483647;
  CHECK_THROWS_WITH(c.validate(), Contains("num_hidden_layers = 2147483647") && Contains("hidden_size 2147483646") &&
                                      Contains("more parameters than a 64-bit size can count"));
  bert_config big_but_countable;
  big_but_countable.num_hidden_layers = 1000000000;  // refused later, by the memory bill, not here
  CHECK_NOTHROW(big_but_countable.validate());
}

}  // namespace bert_config_test
