// Tests for include/cputrain/cli/validate_args.hpp: every validation rule is a usage_error naming its flag, the
// value and the rule; what to do, the model and the files are checked; the loop's part alone for code.
#include <catch2/catch.hpp>

#include "support/checks.hpp"
#include "support/temp_dir.hpp"
#include "cli/args_workspace.hpp"

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/cli/validate_args.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace validate_args_test {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cputrain::usage_error;
using cputrain::test::says;
using cputrain::test::temp_dir;
using namespace cputrain::test::cli;
using cputrain::cli::validate;

TEST_CASE("training_args: each value out of range is a usage error naming the flag, the value and the rule",
          "[cli][training_args][errors]") {
  const workspace ws;
  struct bad_case {
    std::vector<std::string> extra;
    std::string message;
  };
  const std::vector<bad_case> cases = {
      {{"--per_device_train_batch_size", "0"}, "--per_device_train_batch_size 0: must be >= 1"},
      {{"--per_device_eval_batch_size", "-4"}, "--per_device_eval_batch_size -4: must be >= 1"},
      {{"--gradient_accumulation_steps", "0"}, "--gradient_accumulation_steps 0: must be >= 1"},
      {{"--learning_rate", "-1e-5"}, "--learning_rate -1e-05: must be >= 0 and finite"},
      {{"--learning_rate", "nan"}, "--learning_rate nan: must be >= 0 and finite"},
      {{"--learning_rate", "inf"}, "--learning_rate inf: must be >= 0 and finite"},
      {{"--weight_decay", "-0.01"}, "--weight_decay -0.01: must be >= 0"},
      {{"--adam_beta1", "1"}, "--adam_beta1 1: must lie in [0, 1)"},
      {{"--adam_beta1", "-0.1"}, "--adam_beta1 -0.1: must lie in [0, 1)"},
      {{"--adam_beta2", "1.5"}, "--adam_beta2 1.5: must lie in [0, 1)"},
      {{"--adam_epsilon", "-1e-8"}, "--adam_epsilon -1e-08: must be >= 0"},
      {{"--max_grad_norm", "-1"}, "--max_grad_norm -1: must be >= 0"},
      {{"--num_train_epochs", "0"}, "--num_train_epochs 0: must be > 0 unless --max_steps is set"},
      {{"--num_train_epochs", "-2"}, "--num_train_epochs -2: must be >= 0"},
      {{"--max_steps", "0"}, "--max_steps 0: must be a positive number of optimizer steps, or -1"},
      {{"--max_steps", "-5"}, "--max_steps -5: must be a positive number"},
      {{"--lr_scheduler_type", "polynomial"}, "--lr_scheduler_type polynomial: unknown schedule; valid names: linear"},
      {{"--warmup_ratio", "1.5"}, "--warmup_ratio 1.5: must lie in [0, 1]"},
      {{"--warmup_ratio", "-0.1"}, "--warmup_ratio -0.1: must lie in [0, 1]"},
      {{"--warmup_steps", "-1"}, "--warmup_steps -1: must be >= 0"},
      {{"--logging_steps", "0"}, "--logging_steps 0: must be >= 1"},
      {{"--save_steps", "0"}, "--save_steps 0: must be >= 1"},
      {{"--save_total_limit", "0"}, "--save_total_limit 0: must be >= 1"},
      {{"--save_strategy", "best"}, "--save_strategy best: cputrain saves every --save_steps"},
      {{"--eval_strategy", "best"}, "--eval_strategy best: cputrain evaluates never during training (no)"},
      {{"--evaluation_strategy", "always"}, "--eval_strategy always: cputrain evaluates"},
      {{"--eval_steps", "0"}, "--eval_steps 0: must be >= 1"},
      {{"--load_best_model_at_end"}, "--load_best_model_at_end true: needs evaluations to rank"},
      {{"--load_best_model_at_end", "--eval_strategy", "epoch"},
       "--load_best_model_at_end true: needs --save_strategy to match --eval_strategy (steps vs epoch)"},
      {{"--load_best_model_at_end", "--eval_strategy", "steps", "--eval_steps", "300"},
       "--save_steps 500: must be a multiple of --eval_steps 300 with --load_best_model_at_end"},
      {{"--early_stopping_patience", "2", "--eval_strategy", "steps"},
       "--early_stopping_patience 2: needs --load_best_model_at_end"},
      {{"--early_stopping_patience", "0", "--eval_strategy", "steps", "--load_best_model_at_end"},
       "--early_stopping_patience 0: must be >= 1"},
      {{"--early_stopping_threshold", "-1"}, "--early_stopping_threshold -1: must be >= 0 and finite"},
      {{"--metric_for_best_model", ""}, "--metric_for_best_model \"\": names a metric"},
      {{"--greater_is_better", "maybe"}, "--greater_is_better maybe: expected a truth value"},
      {{"--seed", "-1"}, "--seed -1: must be >= 0"},
      {{"--ddp_communication_dtype", "fp16"}, "--ddp_communication_dtype fp16: gradients travel between processes as fp32"},
      {{"--ddp_bucket_cap_mb", "-1"}, "--ddp_bucket_cap_mb -1: must lie in [0, 1048576] MiB"},
      {{"--ddp_bucket_cap_mb", "2000000"}, "--ddp_bucket_cap_mb 2000000: must lie in [0, 1048576] MiB"},
      {{"--max_seq_length", "7"}, "--max_seq_length 7: must lie in [8, 4096]"},
      {{"--max_seq_length", "4097"}, "--max_seq_length 4097: must lie in [8, 4096]"},
      {{"--doc_stride", "-1"}, "--doc_stride -1: must be >= 0"},
      {{"--max_seq_length", "200", "--doc_stride", "300"},
       "--doc_stride 300: must be less than --max_seq_length 200"},
      {{"--doc_stride", "384"}, "--doc_stride 384: must be less than --max_seq_length 384"},
      {{"--n_best_size", "0"}, "--n_best_size 0: must be >= 1"},
      {{"--max_answer_length", "0"}, "--max_answer_length 0: must be >= 1"},
      {{"--max_train_samples", "0"}, "--max_train_samples 0: must be >= 1"},
      {{"--max_eval_samples", "-1"}, "--max_eval_samples -1: must be >= 1"},
      {{"--max_predict_samples", "0"}, "--max_predict_samples 0: must be >= 1"},
      {{"--threads", "0"}, "--threads 0: must be >= 1"},
      {{"--preprocessing_num_workers", "0"}, "--preprocessing_num_workers 0: must be >= 1"},
      {{"--null_score_diff_threshold", "inf"}, "--null_score_diff_threshold inf: must be finite"},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.extra, c.message);
    CHECK_THROWS_MATCHES(parse(ws.guide() + c.extra), usage_error, says(c.message));
  }
  // The same values are fine where the rule allows them: max_steps makes num_train_epochs irrelevant, 0 disables
  // clipping, a stride of max_seq_length - 1 still moves the window.
  CHECK(parse(ws.guide() + std::vector<std::string>{"--num_train_epochs", "0", "--max_steps", "10"}).max_steps == 10);
  CHECK(parse(ws.guide() + std::vector<std::string>{"--doc_stride", "383"}).doc_stride == 383);
  CHECK(parse(ws.guide() + std::vector<std::string>{"--max_seq_length", "8", "--doc_stride", "0"}).max_seq_length ==
        8);
  CHECK(parse(ws.guide() + std::vector<std::string>{"--warmup_ratio", "1"}).warmup_ratio == 1.0);
}

TEST_CASE("training_args: what to do, the model and the files are checked", "[cli][training_args][errors]") {
  const workspace ws;
  const std::string missing = (ws.dir.path() / "missing.json").string();

  CHECK_THROWS_MATCHES(parse({"--model_name_or_path", ws.model, "--do_train", "--train_file", ws.train}), usage_error,
                       says("--output_dir is required"));
  // One argument ending in .json is a file of arguments only when it is not a flag.
  CHECK_THROWS_MATCHES(parse({"--train_file=" + ws.train}), usage_error, says("--output_dir is required"));
  CHECK_THROWS_MATCHES(parse({"--model_name_or_path", ws.model, "--output_dir", ws.out}), usage_error,
                       says("give --do_train, --do_eval or --do_predict"));
  CHECK_THROWS_MATCHES(parse({"--do_eval", "--validation_file", ws.dev, "--output_dir", ws.out}), usage_error,
                       says("--model_name_or_path is required"));
  CHECK_THROWS_MATCHES(parse({"--config_name", ws.model, "--do_eval", "--validation_file", ws.dev, "--output_dir",
                              ws.out}),
                       usage_error, says("needs --tokenizer_name"));
  // From a config alone, with a vocabulary: a model from random weights.
  const training_args scratch = parse({"--config_name", ws.model, "--tokenizer_name", ws.model, "--do_eval",
                                       "--validation_file", ws.dev, "--output_dir", ws.out});
  CHECK_FALSE(scratch.model_name_or_path.has_value());
  CHECK(scratch.config_name == ws.model);

  CHECK_THROWS_MATCHES(parse({"--model_name_or_path", ws.model, "--do_train", "--output_dir", ws.out}), usage_error,
                       says("--do_train needs --train_file"));
  CHECK_THROWS_MATCHES(parse({"--model_name_or_path", ws.model, "--do_eval", "--output_dir", ws.out}), usage_error,
                       says("--do_eval needs --validation_file"));
  CHECK_THROWS_MATCHES(parse({"--model_name_or_path", ws.model, "--do_predict", "--output_dir", ws.out}), usage_error,
                       says("--do_predict needs --test_file"));
  // eval_strategy epoch turns --do_eval on, as TrainingArguments.__post_init__ does, and so needs its file.
  CHECK_THROWS_MATCHES(parse({"--model_name_or_path", ws.model, "--do_train", "--train_file", ws.train,
                              "--eval_strategy", "epoch", "--output_dir", ws.out}),
                       usage_error, says("--eval_strategy epoch needs --validation_file"));
  const training_args epoch = parse({"--model_name_or_path", ws.model, "--do_train", "--train_file", ws.train,
                                     "--evaluation_strategy", "epoch", "--validation_file", ws.dev, "--output_dir",
                                     ws.out});
  CHECK(epoch.do_eval);
  CHECK(epoch.eval_strategy == "epoch");

  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--train_file", missing}), usage_error,
                       says("--train_file " + missing + ": no such file"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--validation_file", missing}), usage_error,
                       says("--validation_file " + missing + ": no such file"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--test_file", missing}), usage_error,
                       says("--test_file " + missing + ": no such file"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--train_file", ws.model}), usage_error,
                       says("--train_file " + ws.model + ": not a regular file"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--model_name_or_path", "bert-base-uncased"}),
                       usage_error,
                       says("--model_name_or_path bert-base-uncased: no such directory (cputrain downloads nothing"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--model_name_or_path", ws.train}), usage_error,
                       says("--model_name_or_path " + ws.train + ": not a directory"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--config_name", missing}), usage_error,
                       says("--config_name " + missing + ": no such file or directory"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--tokenizer_name", missing}), usage_error,
                       says("--tokenizer_name " + missing + ": no such file or directory"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--resume_from_checkpoint", missing}), usage_error,
                       says("--resume_from_checkpoint " + missing + ": no such directory"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--output_dir", ws.train}), usage_error,
                       says("--output_dir " + ws.train + ": exists and is not a directory"));
}

TEST_CASE("training_args: validate_training checks the loop's values alone, for arguments filled in code",
          "[cli][training_args]") {
  cputrain::cli::training_args args;  // no output_dir, no task, no files: only the loop's values matter here
  CHECK_NOTHROW(cputrain::cli::detail::validate_training(args));
  CHECK_THROWS_AS(validate(args), usage_error);  // the whole check wants --output_dir and the rest

  auto refused = [](auto change, const char* field) {
    cputrain::cli::training_args a;
    change(a);
    INFO(field);
    CHECK_THROWS_WITH(cputrain::cli::detail::validate_training(a), Contains(field));
  };
  refused([](auto& a) { a.logging_steps = 0; }, "logging_steps");
  refused([](auto& a) { a.save_steps = 0; }, "save_steps");
  refused([](auto& a) { a.per_device_train_batch_size = 0; }, "per_device_train_batch_size");
  refused([](auto& a) { a.gradient_accumulation_steps = -2; }, "gradient_accumulation_steps");
  refused([](auto& a) { a.max_steps = 0; }, "max_steps");
  refused([](auto& a) { a.learning_rate = -1e-3; }, "learning_rate");
  refused([](auto& a) { a.save_strategy = "sometimes"; }, "save_strategy");
}

}  // namespace validate_args_test
