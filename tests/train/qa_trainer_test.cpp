// qa_trainer in one process: the gradient hook, and a NaN or Inf in a gradient stopping training before any
// weight or checkpoint sees it (the loop's other behaviour — learning, exact resume, logging — is checked end to
// end through run_qa in tests/examples).
#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/train/qa_trainer.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "support/tiny_qa_run.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace qa_trainer_test {

namespace ct = cputrain;
using model_type = ct::nn::bert_qa<ct::policy<ct::precision::fp32>>;

namespace {

// The shared tiny model and features (six demo paragraphs), with this file's training arguments.
struct tiny_run : ct::test::tiny_qa_run {
  tiny_run() : tiny_qa_run("cputrain-qa-trainer", 6) {}

  [[nodiscard]] ct::train::training_options args(std::int64_t max_steps) const {
    ct::train::training_options a;
    a.output_dir = (dir.path() / "out").string();
    a.per_device_train_batch_size = 4;
    a.learning_rate = 1e-3;
    a.max_steps = max_steps;
    a.logging_steps = 1;
    a.save_steps = 2;
    a.disable_tqdm = true;
    return a;
  }
};

std::vector<float> copy_of(std::span<const float> values) { return {values.begin(), values.end()}; }

// Rank 0 of a pretend world of two whose other rank computes what this one does — until it is told that its
// gradients went bad: from then on it answers the ranks' agreement (all_reduce_max) with 1.
struct pretend_pair {
  inline static bool other_rank_bad = false;
  [[nodiscard]] int rank() const { return 0; }
  [[nodiscard]] int size() const { return 2; }
  void all_reduce_sum(std::span<float> buffer) {
    for (float& x : buffer) x += x;
  }
  void broadcast(std::span<float>, int) {}
  void barrier() {}
  [[nodiscard]] double all_reduce_sum(double value) { return value + value; }
  [[nodiscard]] std::int64_t all_reduce_max(std::int64_t value) {
    return other_rank_bad ? std::max<std::int64_t>(value, 1) : value;
  }
  [[nodiscard]] std::vector<float> gatherv(std::span<const float> part, int) {
    std::vector<float> both(part.begin(), part.end());
    both.insert(both.end(), part.begin(), part.end());
    return both;
  }
};
struct pretend_pair_policy : ct::parallel::single {
  static constexpr std::string_view name = "pretend pair";
  using communicator = pretend_pair;
};

}  // namespace

TEST_CASE("on_gradients sees every step's finished gradients once, numbered from 1, and what it leaves is used") {
  tiny_run run;
  model_type model(run.config, 7);
  const std::vector<float> initial = copy_of(model.params());
  auto args = run.args(4);
  args.weight_decay = 0.0;
  args.save_strategy = "no";
  std::vector<std::int64_t> steps;
  double first_norm = 0.0;
  ct::train::trainer_callbacks callbacks;
  callbacks.on_gradients = [&](std::span<float> grads, std::int64_t step) {
    REQUIRE(grads.size() == model.params().size());
    steps.push_back(step);
    double sum = 0.0;
    for (const float g : grads) sum += static_cast<double>(g) * g;
    if (step == 1) first_norm = std::sqrt(sum);
    std::fill(grads.begin(), grads.end(), 0.0f);  // AdamW without weight decay then moves nothing
  };
  ct::train::qa_trainer<model_type::policy_type> trainer(model, args, callbacks);
  trainer.train(run.features);
  CHECK(steps == std::vector<std::int64_t>{1, 2, 3, 4});
  CHECK(first_norm > 0.0);  // the hook saw real gradients, not zeros
  CHECK(copy_of(model.params()) == initial);
}

TEST_CASE("a NaN or Inf injected into one gradient stops training at that step with the weights and checkpoints untouched") {
  const float bad = GENERATE(std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity());
  const double max_grad_norm = GENERATE(1.0, 0.0);  // clipped, and the plain norm
  CAPTURE(bad, max_grad_norm);
  tiny_run run;
  model_type model(run.config, 7);
  auto args = run.args(6);
  args.max_grad_norm = max_grad_norm;
  std::vector<float> after_step_3;
  ct::train::trainer_callbacks callbacks;
  callbacks.on_step_end = [&](const ct::train::trainer_state& state) {
    if (state.global_step == 3) after_step_3 = copy_of(model.params());
  };
  callbacks.on_gradients = [&](std::span<float> grads, std::int64_t step) {
    if (step == 4) grads[grads.size() / 2] = bad;  // one element somewhere in the encoder
  };
  ct::train::qa_trainer<model_type::policy_type> trainer(model, args, callbacks);
  std::string message;
  try {
    trainer.train(run.features);
  } catch (const ct::train::training_error& e) {
    message = e.what();
  }
  INFO(message);
  CHECK_THAT(message, Catch::Contains("training stopped at step 4") && Catch::Contains("gradient norm is") &&
                          Catch::Contains("no weights were changed") && Catch::Contains("checkpoint-2"));
  CHECK_THAT(message, Catch::Contains(std::isnan(bad) ? "nan" : "inf"));
  REQUIRE(after_step_3.size() == model.params().size());
  // Step 3 moved the weights (so "unchanged" below means something), step 4 did not.
  CHECK(copy_of(model.params()) == after_step_3);
  const auto finite = [](std::span<const float> v) { return std::all_of(v.begin(), v.end(), [](float w) { return std::isfinite(w); }); };
  CHECK(finite(model.params()));
  // The checkpoint of step 2 stays the last one, whole: weights loaded from it are finite.
  const auto checkpoints = ct::train::list_checkpoints(args.output_dir);
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints.back().filename() == "checkpoint-2");
  model_type reloaded(run.config, 99);
  ct::io::load_weights(reloaded, checkpoints.back() / "model.safetensors", ct::io::weight_loading::exact);
  CHECK(finite(reloaded.params()));
  CHECK(copy_of(reloaded.params()) != after_step_3);
}

TEST_CASE("without a fault the same run changes the weights every step and finishes") {
  tiny_run run;
  model_type model(run.config, 7);
  auto args = run.args(4);
  args.save_strategy = "no";
  std::vector<std::vector<float>> seen;
  ct::train::trainer_callbacks callbacks;
  callbacks.on_step_end = [&](const ct::train::trainer_state&) { seen.push_back(copy_of(model.params())); };
  ct::train::qa_trainer<model_type::policy_type> trainer(model, args, callbacks);
  const auto result = trainer.train(run.features);
  CHECK(result.global_step == 4);
  REQUIRE(seen.size() == 4);
  for (std::size_t i = 1; i < seen.size(); ++i) CHECK(seen[i] != seen[i - 1]);
}

TEST_CASE("a gradient that is not finite on another rank only stops this rank too, before its weights move") {
  tiny_run run;
  using pair_policy = ct::policy<ct::precision::fp32, pretend_pair_policy>;
  // The parallelism is the trainer's: the model of a pair of ranks is the one-process model's type.
  STATIC_REQUIRE(std::is_same_v<ct::nn::bert_qa<pair_policy>, model_type>);
  model_type model(run.config, 7);
  auto args = run.args(6);
  std::vector<float> after_step_2;
  ct::train::trainer_callbacks callbacks;
  callbacks.on_step_end = [&](const ct::train::trainer_state& state) {
    if (state.global_step == 2) after_step_2 = copy_of(model.params());
  };
  // This rank's own gradients stay finite: only the other rank's verdict can stop step 3.
  callbacks.on_gradients = [&](std::span<float>, std::int64_t step) { pretend_pair::other_rank_bad = step == 3; };
  ct::train::qa_trainer<pair_policy> trainer(model, args, callbacks);
  std::string message;
  try {
    trainer.train(run.features);
  } catch (const ct::train::training_error& e) {
    message = e.what();
  }
  pretend_pair::other_rank_bad = false;
  CHECK_THAT(message, Catch::Contains("training stopped at step 3") &&
                          Catch::Contains("the gradient norm is not finite on another rank") &&
                          Catch::Contains("no weights were changed") && Catch::Contains("checkpoint-2"));
  REQUIRE(!after_step_2.empty());
  CHECK(copy_of(model.params()) == after_step_2);
}

TEST_CASE("a trainer keeps its own copy of the arguments, so one built from a temporary trains") {
  tiny_run run;
  model_type model(run.config, 7);
  // The arguments die at the end of the declaration: a trainer holding a reference would read freed stack
  // (ASan reports it in the ci-asan preset; elsewhere the run would read whatever is there).
  ct::train::qa_trainer<model_type::policy_type> trainer(model, [&] {
    auto args = run.args(3);
    args.save_strategy = "no";
    return args;
  }());
  const auto result = trainer.train(run.features);
  CHECK(result.global_step == 3);
  CHECK(trainer.state().max_steps == 3);
}

TEST_CASE("a batch that cannot fit is refused by train() naming the option, before the optimizer or a step") {
  tiny_run run;
  model_type model(run.config, 7);
  const auto before = copy_of(model.params());
  auto args = run.args(4);
  args.per_device_train_batch_size = 2'000'000'000;
  ct::train::qa_trainer<model_type::policy_type> trainer(model, args);
  CHECK_THROWS_WITH(trainer.train(run.features),
                    Catch::Matchers::Contains("qa_trainer::train: per_device_train_batch_size 2000000000 x "
                                              "max_seq_length 64 tokens") &&
                        Catch::Matchers::Contains("needs about") && Catch::Matchers::Contains("this machine allows"));
  CHECK(copy_of(model.params()) == before);
  CHECK_FALSE(std::filesystem::exists(run.dir.path() / "out" / "checkpoint-2"));
}

}  // namespace qa_trainer_test
