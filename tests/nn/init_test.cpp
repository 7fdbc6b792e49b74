// Tests for include/cputrain/nn/init.hpp: Hugging Face's BERT initialisation — LayerNorm weight 1 and bias 0, every
// bias 0, the padding row 0, the other weights normal(0, initializer_range) — deterministic per seed.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "cputrain/nn/init.hpp"
#include "cputrain/nn/parameters.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace init_test {

using cputrain::nn::hf_initialize;
using cputrain::nn::parameter_role;
using cputrain::nn::parameter_table;
using cputrain::nn::standard_normal;

namespace {

constexpr std::int64_t vocab = 30, hidden = 64;

// The word table's padding row is registered as the embeddings register it (pad_token_id; -1: none).
parameter_table bert_like_table(std::int64_t pad = 0) {
  parameter_table t;
  t.add("bert.embeddings.word_embeddings.weight", {vocab, hidden}, parameter_role::word_embedding, pad);
  t.add("bert.embeddings.position_embeddings.weight", {16, hidden}, parameter_role::embedding);
  t.add("bert.embeddings.token_type_embeddings.weight", {2, hidden}, parameter_role::embedding);
  t.add("bert.embeddings.LayerNorm.weight", {hidden}, parameter_role::norm_weight);
  t.add("bert.embeddings.LayerNorm.bias", {hidden}, parameter_role::norm_bias);
  t.add("bert.encoder.layer.0.intermediate.dense.weight", {512, 256}, parameter_role::weight);
  t.add("bert.encoder.layer.0.intermediate.dense.bias", {512}, parameter_role::bias);
  t.add("bert.encoder.layer.0.output.dense.weight", {256, 512}, parameter_role::weight);
  t.add("bert.encoder.layer.0.output.LayerNorm.weight", {hidden + 3}, parameter_role::norm_weight);
  t.add("bert.encoder.layer.0.output.LayerNorm.bias", {hidden + 3}, parameter_role::norm_bias);
  t.add("qa_outputs.weight", {2, hidden}, parameter_role::weight);
  t.add("qa_outputs.bias", {2}, parameter_role::bias);
  return t;
}

std::vector<float> initialized(const parameter_table& t, float range, std::uint64_t seed, float fill = 0.0f) {
  std::vector<float> params(t.total_size(), fill);
  hf_initialize(t, params, range, seed);
  return params;
}

std::span<const float> tensor(const parameter_table& t, const std::vector<float>& params, const std::string& name) {
  const auto& p = t.at(name);
  return {params.data() + p.offset, p.size};
}

}  // namespace

TEST_CASE("hf_initialize: LayerNorm weight 1, LayerNorm bias 0, biases 0") {
  const auto t = bert_like_table();
  const auto params = initialized(t, 0.02f, 1, std::numeric_limits<float>::quiet_NaN());
  for (const auto& p : t.entries()) {
    const auto v = tensor(t, params, p.name);
    INFO(p.name);
    for (float x : v) REQUIRE(std::isfinite(x));  // every element written
    if (p.role == parameter_role::norm_weight) {
      for (float x : v) REQUIRE(x == 1.0f);
    } else if (p.role == parameter_role::bias || p.role == parameter_role::norm_bias) {
      for (float x : v) REQUIRE(x == 0.0f);
    } else {
      std::size_t zeros = 0;
      for (float x : v) zeros += x == 0.0f;
      CHECK(zeros <= static_cast<std::size_t>(hidden));  // at most the padding row
    }
  }
}

TEST_CASE("hf_initialize goes by each tensor's role, not its name") {
  // DistilBERT's names: no "LayerNorm" in the norms, and the word table is found by its role.
  parameter_table t;
  t.add("distilbert.embeddings.word_embeddings.weight", {vocab, hidden}, parameter_role::word_embedding, 3);
  t.add("distilbert.transformer.layer.0.sa_layer_norm.weight", {hidden}, parameter_role::norm_weight);
  t.add("distilbert.transformer.layer.0.sa_layer_norm.bias", {hidden}, parameter_role::norm_bias);
  t.add("distilbert.transformer.layer.0.ffn.lin1.weight", {hidden, hidden}, parameter_role::weight);
  t.add("tokens", {vocab, hidden}, parameter_role::word_embedding, 3);  // any name: still the padding row
  // RoBERTa's position table has a padding row too (its padding_idx is pad_token_id)
  t.add("roberta.embeddings.position_embeddings.weight", {16, hidden}, parameter_role::embedding, 3);
  const auto params = initialized(t, 0.02f, 7, std::numeric_limits<float>::quiet_NaN());
  for (float x : tensor(t, params, "distilbert.transformer.layer.0.sa_layer_norm.weight")) CHECK(x == 1.0f);
  for (float x : tensor(t, params, "distilbert.transformer.layer.0.sa_layer_norm.bias")) CHECK(x == 0.0f);
  std::size_t zeros = 0;
  for (float x : tensor(t, params, "distilbert.transformer.layer.0.ffn.lin1.weight")) zeros += x == 0.0f;
  CHECK(zeros == 0);
  for (const char* table :
       {"distilbert.embeddings.word_embeddings.weight", "tokens", "roberta.embeddings.position_embeddings.weight"}) {
    const auto word = tensor(t, params, table);
    INFO(table);
    for (std::int64_t j = 0; j < hidden; ++j) CHECK(word[static_cast<std::size_t>(3 * hidden + j)] == 0.0f);
    CHECK(word[static_cast<std::size_t>(2 * hidden)] != 0.0f);
  }
}

TEST_CASE("hf_initialize zeroes the padding row of the word embeddings only, and leaves the padding floats") {
  for (std::int64_t pad : {std::int64_t{0}, std::int64_t{5}, vocab - 1}) {
    const auto t = bert_like_table(pad);
    const auto params = initialized(t, 0.02f, 2);
    const auto word = tensor(t, params, "bert.embeddings.word_embeddings.weight");
    for (std::int64_t r = 0; r < vocab; ++r) {
      std::size_t zeros = 0;
      for (std::int64_t j = 0; j < hidden; ++j) zeros += word[static_cast<std::size_t>(r * hidden + j)] == 0.0f;
      INFO("pad=" << pad << " row=" << r);
      CHECK(zeros == (r == pad ? static_cast<std::size_t>(hidden) : 0));
    }
    // The position table has a row `pad` too: it is not a padding row.
    const auto position = tensor(t, params, "bert.embeddings.position_embeddings.weight");
    for (std::int64_t j = 0; j < hidden; ++j) CHECK(position[static_cast<std::size_t>(pad % 16 * hidden + j)] != 0.0f);
    // Padding between tensors stays as it was (zero).
    const auto& ln = t.at("bert.encoder.layer.0.output.LayerNorm.weight");
    for (std::size_t i = ln.offset + ln.size; i < t.at("bert.encoder.layer.0.output.LayerNorm.bias").offset; ++i) {
      CHECK(params[i] == 0.0f);
    }
  }
  // No padding token (-1) or one outside the vocabulary: no row zeroed, nothing written out of bounds.
  for (std::int64_t pad : {std::int64_t{-1}, vocab, vocab + 100}) {
    const auto t = bert_like_table(pad);
    const auto params = initialized(t, 0.02f, 2);
    std::size_t zeros = 0;
    for (float x : tensor(t, params, "bert.embeddings.word_embeddings.weight")) zeros += x == 0.0f;
    CHECK(zeros == 0);
    CHECK(params == initialized(bert_like_table(-1), 0.02f, 2));
  }
}

TEST_CASE("hf_initialize draws weights from normal(0, initializer_range)") {
  const auto t = bert_like_table();
  for (float range : {0.02f, 0.5f}) {
    const auto params = initialized(t, range, 3);
    const auto w = tensor(t, params, "bert.encoder.layer.0.intermediate.dense.weight");
    const double n = static_cast<double>(w.size());
    double sum = 0, sq = 0;
    std::size_t within1 = 0, beyond2 = 0, beyond3 = 0;
    for (float x : w) {
      sum += x;
      sq += static_cast<double>(x) * x;
      const double z = std::abs(x) / range;
      within1 += z < 1;
      beyond2 += z > 2;
      beyond3 += z > 3;
    }
    const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
    INFO("range=" << range);
    CHECK(std::abs(mean) < 6 * range / std::sqrt(n));
    CHECK(std::abs(sd / range - 1) < 6 / std::sqrt(2 * n));
    // The shape is a normal's (a uniform with the same spread has 57.7% within one sd and none beyond two).
    CHECK(std::abs(within1 / n - 0.682689) < 0.006);
    CHECK(std::abs(beyond2 / n - 0.045500) < 0.003);
    CHECK(std::abs(beyond3 / n - 0.002700) < 0.0009);
  }
}

TEST_CASE("hf_initialize is deterministic per seed, different across seeds and across tensors") {
  const auto t = bert_like_table();
  const auto a = initialized(t, 0.02f, 7), b = initialized(t, 0.02f, 7), c = initialized(t, 0.02f, 8);
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  std::size_t same = 0, random_elements = 0;
  for (const auto& p : t.entries()) {
    if (p.name.find("LayerNorm") != std::string::npos || p.name.ends_with(".bias")) continue;
    for (std::size_t i = p.offset; i < p.offset + p.size; ++i) {
      ++random_elements;
      same += a[i] == c[i];
    }
  }
  CHECK(same <= static_cast<std::size_t>(hidden));  // the padding row is zero under every seed
  CHECK(random_elements > 200000);
  // Two tensors of one model do not repeat each other's draws.
  const auto x = tensor(t, a, "bert.encoder.layer.0.intermediate.dense.weight");
  const auto y = tensor(t, a, "bert.encoder.layer.0.output.dense.weight");
  double xy = 0, xx = 0, yy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    xy += static_cast<double>(x[i]) * y[i];
    xx += static_cast<double>(x[i]) * x[i];
    yy += static_cast<double>(y[i]) * y[i];
  }
  CHECK(std::abs(xy / std::sqrt(xx * yy)) < 6 / std::sqrt(static_cast<double>(x.size())));
}

TEST_CASE("standard_normal is a pure, finite function of (seed, stream, index)") {
  CHECK(standard_normal(1, 2, 3) == standard_normal(1, 2, 3));
  CHECK(standard_normal(1, 2, 3) != standard_normal(1, 2, 4));
  CHECK(standard_normal(1, 2, 3) != standard_normal(1, 3, 3));
  CHECK(standard_normal(1, 2, 3) != standard_normal(2, 2, 3));
  const std::size_t n = 200000;
  double sum = 0, sq = 0, fourth = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const double z = standard_normal(9, 4, i);
    REQUIRE(std::isfinite(z));
    sum += z;
    sq += z * z;
    fourth += z * z * z * z;
  }
  CHECK(std::abs(sum / n) < 6 / std::sqrt(static_cast<double>(n)));
  CHECK(std::abs(sq / n - 1) < 6 * std::sqrt(2.0 / n));
  CHECK(std::abs(fourth / n - 3) < 6 * std::sqrt(96.0 / n));  // kurtosis 3; Var(z^4) = 105 - 9
}

}  // namespace init_test
