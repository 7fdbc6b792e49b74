// The trainer's evaluation during training, with an evaluation whose metrics the test scripts: when it runs
// (eval_strategy steps and epoch), what log_history and trainer_state.json record, the best checkpoint ranked,
// kept by save_total_limit and loaded at the end, early stopping by EarlyStoppingCallback's rule, and resuming
// with the best so far.
#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/train/best_model.hpp"
#include "cputrain/train/qa_trainer.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "support/tiny_qa_run.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace trainer_evaluation_test {

namespace ct = cputrain;
namespace fs = std::filesystem;
using model_type = ct::nn::bert_qa<ct::policy<ct::precision::fp32>>;
using trainer_type = ct::train::qa_trainer<model_type::policy_type>;

namespace {

// The tiny QA run (four demo paragraphs: 4 batches of 4 features per epoch) and an evaluation that returns
// the next of `scores` as eval_f1 and records the step it ran at.
struct scripted_run : ct::test::tiny_qa_run {
  std::vector<double> scores;
  std::vector<std::int64_t> evaluated_at;
  const model_type* model = nullptr;
  std::vector<std::vector<float>> weights_at_evaluation;

  scripted_run() : tiny_qa_run("cputrain-trainer-evaluation", 4) {}

  [[nodiscard]] ct::train::training_options args(std::int64_t max_steps) const {
    ct::train::training_options a;
    a.output_dir = (dir.path() / "out").string();
    a.per_device_train_batch_size = 4;
    a.learning_rate = 1e-3;
    a.max_steps = static_cast<int>(max_steps);
    a.logging_steps = 1;
    a.disable_tqdm = true;
    return a;
  }

  // The evaluation's step is the last training log entry's (logging_steps is 1).
  [[nodiscard]] ct::train::trainer_callbacks callbacks(std::int64_t* step) {
    ct::train::trainer_callbacks c;
    c.on_log = [step](const nlohmann::ordered_json& entry) {
      if (entry.contains("loss")) *step = entry["step"].get<std::int64_t>();
    };
    c.evaluate = [this, step] {
      nlohmann::ordered_json metrics;
      const std::size_t k = evaluated_at.size();
      metrics["eval_f1"] = k < scores.size() ? scores[k] : 0.0;
      metrics["eval_loss"] = 1.0 / (1.0 + static_cast<double>(k));
      evaluated_at.push_back(*step);
      weights_at_evaluation.emplace_back(model->params().begin(), model->params().end());
      return metrics;
    };
    return c;
  }
};

std::vector<nlohmann::ordered_json> eval_entries(const ct::train::trainer_state& state) {
  std::vector<nlohmann::ordered_json> out;
  for (const auto& entry : state.log_history) {
    if (entry.contains("eval_f1")) out.push_back(entry);
  }
  return out;
}

std::vector<std::string> checkpoint_names(const std::string& output_dir) {
  std::vector<std::string> names;
  for (const auto& p : ct::train::list_checkpoints(output_dir)) names.push_back(p.filename().string());
  return names;
}

}  // namespace

TEST_CASE("eval_strategy steps evaluates every eval_steps and logs eval entries with epoch and step") {
  scripted_run run;
  model_type model(run.config, 7);
  run.model = &model;
  run.scores = {0.1, 0.2, 0.3};
  auto args = run.args(6);
  args.eval_strategy = "steps";
  args.eval_steps = 2;
  args.save_strategy = "no";
  std::int64_t step = 0;
  auto callbacks = run.callbacks(&step);
  trainer_type trainer(model, args, callbacks);
  trainer.train(run.features);
  const auto entries = eval_entries(trainer.state());
  REQUIRE(entries.size() == 3);
  CHECK(entries[0]["step"] == 2);
  CHECK(entries[1]["step"] == 4);
  CHECK(entries[2]["step"] == 6);
  CHECK(entries[0]["epoch"].get<double>() == Approx(0.5));
  CHECK(entries[1]["eval_f1"] == 0.2);
  // Nothing ranked without --load_best_model_at_end or --metric_for_best_model.
  CHECK_FALSE(trainer.state().best_metric.has_value());
  CHECK(trainer.state().to_json()["best_model_checkpoint"].is_null());
}

TEST_CASE("eval_strategy epoch evaluates at the end of each epoch and at the end of training within one") {
  scripted_run run;
  model_type model(run.config, 7);
  run.model = &model;
  auto args = run.args(10);  // 4 steps per epoch: epochs end at 4 and 8, training at 10
  args.eval_strategy = "epoch";
  args.save_strategy = "no";
  std::int64_t step = 0;
  auto callbacks = run.callbacks(&step);
  trainer_type trainer(model, args, callbacks);
  trainer.train(run.features);
  CHECK(run.evaluated_at == std::vector<std::int64_t>{4, 8, 10});
}

TEST_CASE("load_best_model_at_end ranks by the metric and ends with the best checkpoint's weights") {
  scripted_run run;
  model_type model(run.config, 7);
  run.model = &model;
  run.scores = {0.5, 0.9, 0.7, 0.6};  // the best at the second evaluation: step 4
  auto args = run.args(8);
  args.eval_strategy = "steps";
  args.eval_steps = 2;
  args.save_steps = 2;
  args.save_total_limit = 1;
  args.load_best_model_at_end = true;
  args.metric_for_best_model = "f1";
  std::int64_t step = 0;
  auto callbacks = run.callbacks(&step);
  trainer_type trainer(model, args, callbacks);
  trainer.train(run.features);
  const auto& state = trainer.state();
  REQUIRE(state.best_metric.has_value());
  CHECK(*state.best_metric == 0.9);
  CHECK(state.best_global_step == 4);
  CHECK(state.best_model_checkpoint == (fs::path(args.output_dir) / "checkpoint-4").string());
  // A limit of one keeps the best beside the latest, as the Trainer does.
  CHECK(checkpoint_names(args.output_dir) == std::vector<std::string>{"checkpoint-4", "checkpoint-8"});
  // The weights are those evaluated at step 4, not the last step's.
  REQUIRE(run.weights_at_evaluation.size() == 4);
  CHECK(std::vector<float>(model.params().begin(), model.params().end()) == run.weights_at_evaluation[1]);
  CHECK(std::vector<float>(model.params().begin(), model.params().end()) != run.weights_at_evaluation[3]);
  // The checkpoint written at step 8 names the best one too.
  const auto saved = ct::train::trainer_state::read(fs::path(args.output_dir) / "checkpoint-8" / "trainer_state.json");
  CHECK(saved.best_model_checkpoint == state.best_model_checkpoint);
  CHECK(saved.best_metric == 0.9);
}

TEST_CASE("a loss ranks lower-is-better by default and a missing metric is named") {
  scripted_run run;
  model_type model(run.config, 7);
  run.model = &model;
  auto args = run.args(4);
  args.eval_strategy = "steps";
  args.eval_steps = 2;
  args.save_steps = 2;
  args.load_best_model_at_end = true;  // eval_loss falls 1, 1/2: the last is best
  std::int64_t step = 0;
  auto callbacks = run.callbacks(&step);
  {
    trainer_type trainer(model, args, callbacks);
    trainer.train(run.features);
    CHECK(trainer.state().best_global_step == 4);
    CHECK(*trainer.state().best_metric == 0.5);
  }
  // A metric the evaluation does not report stops training at the first evaluation, naming what there is.
  fs::remove_all(args.output_dir);
  args.metric_for_best_model = "accuracy";
  trainer_type trainer(model, args, callbacks);
  CHECK_THROWS_MATCHES(trainer.train(run.features), ct::usage_error,
                       Catch::Matchers::Predicate<std::exception>([](const std::exception& e) {
                         return std::string(e.what()).find("no number \"eval_accuracy\"; it reports eval_f1, eval_loss") !=
                                std::string::npos;
                       }));
}

TEST_CASE("early stopping ends training after patience evaluations without an improvement above the threshold") {
  struct plan {
    std::vector<double> scores;
    double threshold;
    std::vector<std::int64_t> evaluated_at;
    double best;
  };
  const plan p = GENERATE(plan{{0.5, 0.6, 0.6, 0.55, 0.9}, 0.0, {2, 4, 6, 8}, 0.6},
                          // 0.52 beats 0.5 (it becomes the best) but not by more than 0.05: patience 2 runs out at 6
                          plan{{0.5, 0.52, 0.51, 0.9}, 0.05, {2, 4, 6}, 0.52});
  scripted_run run;
  model_type model(run.config, 7);
  run.model = &model;
  run.scores = p.scores;
  auto args = run.args(20);
  args.eval_strategy = "steps";
  args.eval_steps = 2;
  args.save_steps = 2;
  args.load_best_model_at_end = true;
  args.metric_for_best_model = "f1";
  args.early_stopping_patience = 2;
  args.early_stopping_threshold = p.threshold;
  std::int64_t step = 0;
  auto callbacks = run.callbacks(&step);
  trainer_type trainer(model, args, callbacks);
  const auto result = trainer.train(run.features);
  CHECK(run.evaluated_at == p.evaluated_at);
  CHECK(result.global_step == p.evaluated_at.back());
  CHECK(*trainer.state().best_metric == p.best);
  const auto json = trainer.state().to_json();
  CHECK(json["stateful_callbacks"]["EarlyStoppingCallback"]["attributes"]["early_stopping_patience_counter"] == 2);
  CHECK(json["stateful_callbacks"]["EarlyStoppingCallback"]["args"]["early_stopping_patience"] == 2);
}

TEST_CASE("a resumed run keeps the best evaluation of the run it continues") {
  scripted_run run;
  model_type model(run.config, 7);
  run.model = &model;
  auto args = run.args(4);
  args.eval_strategy = "steps";
  args.eval_steps = 2;
  args.save_steps = 2;
  args.load_best_model_at_end = true;
  args.metric_for_best_model = "f1";
  std::int64_t step = 0;
  auto callbacks = run.callbacks(&step);
  run.scores = {0.9, 0.5};
  {
    trainer_type first(model, args, callbacks);
    first.train(run.features);
  }
  const std::vector<float> best_weights = run.weights_at_evaluation[0];
  run.scores = {0.9, 0.5, 0.6, 0.7};  // the evaluations after resuming are the 3rd and 4th
  args.max_steps = 8;
  model_type resumed(run.config, 8);
  run.model = &resumed;
  trainer_type second(resumed, args, callbacks);
  second.train(run.features, fs::path(args.output_dir) / "checkpoint-4");
  CHECK(run.evaluated_at == std::vector<std::int64_t>{2, 4, 6, 8});
  CHECK(*second.state().best_metric == 0.9);
  CHECK(second.state().best_model_checkpoint == (fs::path(args.output_dir) / "checkpoint-2").string());
  CHECK(std::vector<float>(resumed.params().begin(), resumed.params().end()) == best_weights);
}

TEST_CASE("checkpoints_to_delete moves the best checkpoint out of the way as the Trainer orders them") {
  std::vector<fs::path> all = {"o/checkpoint-2", "o/checkpoint-4", "o/checkpoint-6", "o/checkpoint-8"};
  auto order = all;
  CHECK(ct::train::checkpoints_to_delete(order, 2, fs::path("o/checkpoint-2")) == 2);
  CHECK(order == std::vector<fs::path>{"o/checkpoint-4", "o/checkpoint-6", "o/checkpoint-2", "o/checkpoint-8"});
  order = all;
  CHECK(ct::train::checkpoints_to_delete(order, 1, fs::path("o/checkpoint-4")) == 2);  // best and latest kept
  CHECK(order[2] == "o/checkpoint-4");
  order = all;
  CHECK(ct::train::checkpoints_to_delete(order, 1, fs::path("o/checkpoint-8")) == 3);  // the latest is the best
  order = all;
  CHECK(ct::train::checkpoints_to_delete(order, 3, std::nullopt) == 1);
  CHECK(order == all);
}

}  // namespace trainer_evaluation_test
