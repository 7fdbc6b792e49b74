// Tests for include/cputrain/nn/parameters.hpp: 64-byte aligned offsets, sizes and counts, Hugging Face's
// weight-decay grouping by role, decay ranges that tile the flat buffer, lookups, and the errors for bad tensors;
// parameter_tally counting the same layout without building it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/nn/parameters.hpp"
#include "cputrain/optim/param_ranges.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace parameters_test {

using cputrain::usage_error;
using cputrain::nn::hf_decays;
using cputrain::nn::parameter_role;
using cputrain::nn::parameter_table;
using cputrain::nn::parameter_tally;

constexpr parameter_role weight = parameter_role::weight;

TEST_CASE("parameter_table puts every tensor on a 16-float boundary, padding after each") {
  parameter_table t;
  CHECK(parameter_table::alignment_floats == 16);
  CHECK(t.add("a.weight", {1}, weight) == 0);
  CHECK(t.add("b.weight", {17}, weight) == 16);       // 1 float + 15 padding
  CHECK(t.add("c.weight", {16}, weight) == 48);       // 17 -> 32
  CHECK(t.add("d.weight", {5, 3}, weight) == 64);     // exactly 16: no padding
  CHECK(t.add("e.weight", {2, 3, 4}, weight) == 80);  // 15 -> 16
  CHECK(t.total_size() == 80 + 32);
  CHECK(t.parameter_count() == 1 + 17 + 16 + 15 + 24);
  const auto& e = t.entries();
  REQUIRE(e.size() == 5);
  for (const auto& p : e) CHECK(p.offset % 16 == 0);
  CHECK(e[3].name == "d.weight");
  CHECK(e[3].shape == std::vector<std::int64_t>{5, 3});
  CHECK(e[3].size == 15);
  CHECK(e[4].size == 24);
}

TEST_CASE("hf_decays: weights and embedding tables decay, biases and every norm parameter do not") {
  CHECK(hf_decays(parameter_role::weight));
  CHECK(hf_decays(parameter_role::embedding));
  CHECK(hf_decays(parameter_role::word_embedding));
  CHECK_FALSE(hf_decays(parameter_role::bias));
  CHECK_FALSE(hf_decays(parameter_role::norm_weight));
  CHECK_FALSE(hf_decays(parameter_role::norm_bias));
}

TEST_CASE("parameter_table decides decay by the role a tensor was registered with, not by its name") {
  parameter_table t;
  // DistilBERT's and ELECTRA's names: no "LayerNorm" in them, yet LayerNorm modules (not decayed, as HF's Trainer
  // groups by module type); a weight whose name happens to hold "bias" is still a Linear's weight.
  t.add("distilbert.transformer.layer.0.sa_layer_norm.weight", {8}, parameter_role::norm_weight);
  t.add("distilbert.transformer.layer.0.output_layer_norm.bias", {8}, parameter_role::norm_bias);
  t.add("electra.embeddings_project.weight", {8, 4}, parameter_role::weight);
  t.add("cls.predictions.bias", {10}, parameter_role::bias);
  t.add("distilbert.embeddings.word_embeddings.weight", {10, 8}, parameter_role::word_embedding);
  const auto& e = t.entries();
  REQUIRE(e.size() == 5);
  CHECK_FALSE(e[0].decay());
  CHECK_FALSE(e[1].decay());
  CHECK(e[2].decay());
  CHECK_FALSE(e[3].decay());
  CHECK(e[4].decay());
  CHECK(e[0].role == parameter_role::norm_weight);
  CHECK(e[4].role == parameter_role::word_embedding);
  REQUIRE(t.first_of(parameter_role::word_embedding) != nullptr);
  CHECK(t.first_of(parameter_role::word_embedding)->name == "distilbert.embeddings.word_embeddings.weight");
  CHECK(t.first_of(parameter_role::bias) == &e[3]);
  CHECK(t.first_of(parameter_role::embedding) == nullptr);
}

TEST_CASE("parameter_table records the decay flag of every tensor and ranges() tiles the buffer") {
  parameter_table t;
  t.add("bert.embeddings.word_embeddings.weight", {10, 8}, parameter_role::word_embedding);
  t.add("bert.embeddings.LayerNorm.weight", {8}, parameter_role::norm_weight);
  t.add("bert.embeddings.LayerNorm.bias", {8}, parameter_role::norm_bias);
  t.add("bert.encoder.layer.0.attention.self.query.weight", {8, 8}, weight);
  t.add("bert.encoder.layer.0.attention.self.query.bias", {8}, parameter_role::bias);
  t.add("qa_outputs.weight", {2, 8}, weight);
  t.add("qa_outputs.bias", {2}, parameter_role::bias);
  const std::vector<bool> decays{true, false, false, true, false, true, false};
  const auto& e = t.entries();
  REQUIRE(e.size() == decays.size());
  for (std::size_t i = 0; i < e.size(); ++i) CHECK(e[i].decay() == decays[i]);

  const auto r = t.ranges();
  REQUIRE(r.size() == e.size());
  CHECK_NOTHROW(cputrain::optim::check_ranges(r, t.total_size(), "test"));
  std::size_t covered = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    CHECK(r[i].offset == e[i].offset);
    CHECK(r[i].offset == covered);
    CHECK(r[i].size >= e[i].size);      // the tensor and its padding
    CHECK(r[i].size < e[i].size + 16);
    CHECK(r[i].size % 16 == 0);
    CHECK(r[i].decay == decays[i]);
    covered += r[i].size;
  }
  CHECK(covered == t.total_size());
  CHECK(parameter_table{}.ranges().empty());
  CHECK(parameter_table{}.total_size() == 0);
}

TEST_CASE("parameter_table find and at") {
  parameter_table t;
  t.add("a.weight", {3, 4}, weight);
  t.add("a.bias", {3}, parameter_role::bias);
  REQUIRE(t.find("a.bias") != nullptr);
  CHECK(t.find("a.bias")->offset == 16);
  CHECK(t.find("a.bias")->size == 3);
  CHECK(t.find("a.bia") == nullptr);
  CHECK(&t.at("a.weight") == &t.entries()[0]);
  CHECK_THROWS_AS(t.at("missing"), usage_error);
  CHECK_THROWS_WITH(t.at("missing"), Catch::Contains("missing"));
}

TEST_CASE("parameter_table rejects duplicate names and non-positive dimensions, and stays unchanged") {
  parameter_table t;
  t.add("a.weight", {3, 4}, weight);
  CHECK_THROWS_AS(t.add("a.weight", {3, 4}, weight), usage_error);
  CHECK_THROWS_WITH(t.add("a.weight", {1}, weight), Catch::Contains("a.weight"));
  CHECK_THROWS_AS(t.add("b.weight", {3, 0}, weight), usage_error);
  CHECK_THROWS_AS(t.add("c.weight", {-1}, weight), usage_error);
  CHECK_THROWS_AS(t.add("d.weight", {0}, weight), usage_error);
  CHECK(t.entries().size() == 1);
  CHECK(t.total_size() == 16);
  CHECK(t.find("b.weight") == nullptr);
  // The rejected names are still free.
  CHECK(t.add("b.weight", {3, 1}, weight) == 16);
}

TEST_CASE("parameter_tally counts what parameter_table lays out: the same offsets and total") {
  parameter_table table;
  parameter_tally tally("test layout");
  const std::vector<std::vector<std::int64_t>> shapes{{1}, {17}, {16}, {5, 3}, {2, 3, 4}};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    std::string name = "t";  // appended, not "t" + to_string: GCC 12's -Wrestrict misfires on the latter
    name.append(std::to_string(i));
    CHECK(tally.add(name, shapes[i], weight) == table.add(name, shapes[i], weight));
  }
  CHECK(tally.total() == table.total_size());
  // Copies of a described block: what a table holding them one after another would total.
  parameter_tally block("test block");
  block.add("w", {3, 7}, weight);  // 21 -> 32
  block.add("b", {7}, parameter_role::bias);  // 7 -> 16
  tally.add_copies(block, 5);
  CHECK(tally.total() == table.total_size() + 5 * 48);
}

TEST_CASE("parameter_tally refuses a layout it cannot count in 64 bits, saying what it counts") {
  parameter_tally tally("bert_config: vocab_size 4000000000");
  CHECK_THROWS_WITH(tally.add("w", {4'000'000'000, 4'000'000'000, 4'000'000'000}, weight),
                    Catch::Contains("bert_config: vocab_size 4000000000") &&
                        Catch::Contains("more than 64-bit sizes can count"));
  parameter_tally near_end("padding");
  // A tensor that fits, but whose padding to 16 floats would not.
  CHECK_THROWS_WITH(near_end.add("w", {INT64_MAX, 2}, weight), Catch::Contains("padding"));
  parameter_tally block("layers");
  block.add("w", {1'000'000}, weight);
  parameter_tally total("layers");
  CHECK_THROWS_WITH(total.add_copies(block, std::uint64_t{1} << 50), Catch::Contains("64-bit"));
  CHECK_THROWS_AS(parameter_tally("dims").add("w", {3, 0}, weight), usage_error);
}

}  // namespace parameters_test
