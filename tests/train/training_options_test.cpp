// Tests for include/cputrain/train/training_options.hpp: the training loop's values are checked alone, each a
// usage_error naming its field's flag, a checkpoint's training_args.json records the program's arguments when it
// gives them, else the options, and training_option_fields names every field once.
#include <catch2/catch.hpp>

#include "support/field_count.hpp"

#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/train/training_options.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace training_options_test {

using Catch::Matchers::Contains;
using cputrain::train::option_field;
using cputrain::train::training_option_fields;
using cputrain::train::training_options;

/// A value other than `value`, valid or not: to_json writes anything.
template <class F>
F other_value(const F& value) {
  if constexpr (std::is_same_v<F, bool>) {
    return !value;
  } else if constexpr (std::is_same_v<F, std::string>) {
    return value + "-other";
  } else if constexpr (std::is_same_v<F, std::optional<int>>) {
    return value ? *value + 1 : 1;
  } else if constexpr (std::is_same_v<F, std::optional<bool>>) {
    return !value.value_or(false);
  } else if constexpr (std::is_same_v<F, std::optional<std::string>>) {
    return value.value_or("") + "-other";
  } else {
    return value + 1;
  }
}

/// The keys whose values differ between two objects with the same keys.
std::vector<std::string> changed_keys(const nlohmann::ordered_json& before, const nlohmann::ordered_json& after) {
  std::vector<std::string> keys;
  for (auto it = before.begin(); it != before.end(); ++it) {
    if (after.at(it.key()) != it.value()) keys.push_back(it.key());
  }
  return keys;
}

TEST_CASE("training_options: validate checks the loop's values alone, for options filled in code", "[train]") {
  const training_options options;  // no output_dir, no task, no files: only the loop's values matter here
  CHECK_NOTHROW(options.validate());
  CHECK(options.lr_schedule_kind() == cputrain::optim::schedule_kind::linear);

  auto refused = [](auto change, const char* field) {
    training_options o;
    change(o);
    INFO(field);
    CHECK_THROWS_WITH(o.validate(), Contains(field));
  };
  refused([](auto& o) { o.logging_steps = 0; }, "logging_steps");
  refused([](auto& o) { o.save_steps = 0; }, "save_steps");
  refused([](auto& o) { o.per_device_train_batch_size = 0; }, "per_device_train_batch_size");
  refused([](auto& o) { o.per_device_eval_batch_size = 0; }, "per_device_eval_batch_size");
  refused([](auto& o) { o.gradient_accumulation_steps = -2; }, "gradient_accumulation_steps");
  refused([](auto& o) { o.max_steps = 0; }, "max_steps");
  refused([](auto& o) { o.learning_rate = -1e-3; }, "learning_rate");
  refused([](auto& o) { o.save_strategy = "sometimes"; }, "save_strategy");
  refused([](auto& o) { o.lr_scheduler_type = "sometimes"; }, "lr_scheduler_type");
  refused([](auto& o) { o.termination_grace_period = -1; }, "termination_grace_period");
  refused([](auto& o) { o.eval_strategy = "sometimes"; }, "eval_strategy");
  refused([](auto& o) { o.load_best_model_at_end = true; }, "load_best_model_at_end");
  refused([](auto& o) { o.early_stopping_patience = 1; }, "early_stopping_patience");
  CHECK_THROWS_WITH([] {
    training_options o;
    o.logging_steps = 0;
    o.validate();
  }(), "--logging_steps 0: must be >= 1");
}

TEST_CASE("training_options: training_args.json records the program's arguments, else the options", "[train]") {
  training_options options;
  options.output_dir = "out";
  options.save_total_limit = 2;
  const nlohmann::ordered_json own = to_json(options);
  CHECK(own["output_dir"] == "out");
  CHECK(own["save_total_limit"] == 2);
  CHECK(own["lr_scheduler_type"] == "linear");
  CHECK(arguments_json(options) == own);
  options.recorded_arguments = nlohmann::ordered_json{{"model_name_or_path", nullptr}, {"bf16", true}};
  CHECK(arguments_json(options) == *options.recorded_arguments);
}

TEST_CASE("training_options: training_option_fields names every field once, in to_json's order", "[train]") {
  // recorded_arguments is the one field that is not an option. With the rows' members all different (below), the
  // rows name every other field: a field added to the struct alone fails here.
  CHECK(cputrain::test::field_count<training_options>() == std::size(training_option_fields) + 1);
  const training_options defaults;
  const nlohmann::ordered_json default_json = to_json(defaults);
  REQUIRE(default_json.size() == std::size(training_option_fields));
  auto key = default_json.begin();
  for (const option_field& field : training_option_fields) {
    INFO("field " << field.name);
    CHECK(key.key() == field.name);
    ++key;
    // Changed alone, the row's member changes the options and the row's key only.
    training_options changed = defaults;
    std::visit([&]<class F>(F training_options::*member) { changed.*member = other_value(defaults.*member); },
               field.member);
    CHECK_FALSE(changed == defaults);
    CHECK(changed_keys(default_json, to_json(changed)) == std::vector<std::string>{field.name});
    CHECK(arguments_json(changed) == to_json(changed));
  }
}

}  // namespace training_options_test
