// Tests for include/cputrain/cli/parse_args.hpp: the command of Hugging Face's CPU-training guide parses to its
// values and Hugging Face's defaults, HfArgumentParser's boolean forms and --no_ flags, the refused and the
// accepted-with-a-notice flags, the help groups, and a single args.json argument equal to the flag form.
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

#include "cputrain/cli/parse_args.hpp"
#include "cputrain/cli/trainer_options.hpp"
#include "cputrain/optim/lr_schedule.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace parse_args_test {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cputrain::usage_error;
using cputrain::test::says;
using cputrain::test::temp_dir;
using namespace cputrain::test::cli;
using cputrain::cli::read_training_args_json;

TEST_CASE("training_args: the CPU guide's command parses to its values and Hugging Face's defaults",
          "[cli][training_args]") {
  const workspace ws;
  const training_args a = parse(ws.guide());
  CHECK(a.model_name_or_path == ws.model);
  CHECK(a.train_file == ws.train);
  CHECK(a.validation_file == ws.dev);
  CHECK(a.do_train);
  CHECK(a.do_eval);
  CHECK_FALSE(a.do_predict);
  CHECK(a.per_device_train_batch_size == 12);
  CHECK(a.learning_rate == 3e-5);
  CHECK(a.num_train_epochs == 2.0);
  CHECK(a.max_seq_length == 384);
  CHECK(a.doc_stride == 128);
  CHECK(a.output_dir == ws.out);
  CHECK(a.bf16);
  CHECK(a.use_cpu);
  CHECK(a.notices.empty());

  // Defaults of TrainingArguments and run_qa.py's dataclasses.
  CHECK(a.per_device_eval_batch_size == 8);
  CHECK(a.gradient_accumulation_steps == 1);
  CHECK(a.max_grad_norm == 1.0);
  CHECK(a.weight_decay == 0.0);
  CHECK(a.adam_beta1 == 0.9);
  CHECK(a.adam_beta2 == 0.999);
  CHECK(a.adam_epsilon == 1e-8);
  CHECK(a.max_steps == -1);
  CHECK(a.logging_steps == 500);
  CHECK(a.save_steps == 500);
  CHECK(a.save_strategy == "steps");
  CHECK(a.eval_strategy == "no");
  CHECK_FALSE(a.save_total_limit.has_value());
  CHECK(a.seed == 42);
  CHECK(a.warmup_ratio == 0.0);
  CHECK(a.warmup_steps == 0);
  CHECK(a.n_best_size == 20);
  CHECK(a.max_answer_length == 30);
  CHECK(a.null_score_diff_threshold == 0.0);
  CHECK(a.pad_to_max_length);
  CHECK_FALSE(a.version_2_with_negative);
  CHECK(a.lr_scheduler_type == "linear");
  CHECK(cputrain::cli::to_training_options(a).lr_schedule_kind() == cputrain::optim::schedule_kind::linear);
  CHECK_FALSE(a.overwrite_output_dir);
  CHECK_FALSE(a.dataloader_drop_last);
  CHECK_FALSE(a.disable_tqdm);
  CHECK_FALSE(a.threads.has_value());
  CHECK_FALSE(a.max_train_samples.has_value());
  CHECK_FALSE(a.test_file.has_value());
  CHECK_FALSE(a.resume_from_checkpoint.has_value());
  CHECK_FALSE(a.config_name.has_value());
}

TEST_CASE("training_args: every flag reaches its field", "[cli][training_args]") {
  const workspace ws;
  const std::string checkpoint = (ws.dir.path() / "checkpoint-500").string();
  fs::create_directory(checkpoint);
  const training_args a = parse(ws.guide() + std::vector<std::string>{
      "--config_name", ws.model, "--tokenizer_name", ws.model, "--test_file", ws.test, "--do_predict",
      "--no_pad_to_max_length", "--max_train_samples", "100", "--max_eval_samples", "50",
      "--max_predict_samples", "25", "--version_2_with_negative", "--null_score_diff_threshold", "1.5",
      "--n_best_size", "10", "--max_answer_length", "50", "--overwrite_output_dir", "--eval_strategy", "epoch",
      "--per_device_eval_batch_size", "64", "--gradient_accumulation_steps", "4", "--weight_decay", "0.01",
      "--adam_beta1", "0.8", "--adam_beta2", "0.98", "--adam_epsilon", "1e-6", "--max_grad_norm", "0",
      "--max_steps", "1000", "--lr_scheduler_type", "cosine", "--warmup_ratio", "0.1", "--warmup_steps", "30",
      "--logging_steps", "10", "--save_strategy", "epoch", "--save_steps", "200", "--save_total_limit", "2",
      "--seed", "7", "--dataloader_drop_last", "--resume_from_checkpoint", checkpoint, "--disable_tqdm",
      "--threads", "3"});
  CHECK(a.config_name == ws.model);
  CHECK(a.tokenizer_name == ws.model);
  CHECK(a.test_file == ws.test);
  CHECK(a.do_predict);
  CHECK_FALSE(a.pad_to_max_length);
  CHECK(a.max_train_samples == 100);
  CHECK(a.max_eval_samples == 50);
  CHECK(a.max_predict_samples == 25);
  CHECK(a.version_2_with_negative);
  CHECK(a.null_score_diff_threshold == 1.5);
  CHECK(a.n_best_size == 10);
  CHECK(a.max_answer_length == 50);
  CHECK(a.overwrite_output_dir);
  CHECK(a.eval_strategy == "epoch");
  CHECK(a.per_device_eval_batch_size == 64);
  CHECK(a.gradient_accumulation_steps == 4);
  CHECK(a.weight_decay == 0.01);
  CHECK(a.adam_beta1 == 0.8);
  CHECK(a.adam_beta2 == 0.98);
  CHECK(a.adam_epsilon == 1e-6);
  CHECK(a.max_grad_norm == 0.0);
  CHECK(a.max_steps == 1000);
  CHECK(a.lr_scheduler_type == "cosine");
  CHECK(cputrain::cli::to_training_options(a).lr_schedule_kind() == cputrain::optim::schedule_kind::cosine);
  CHECK(a.warmup_ratio == 0.1);
  CHECK(a.warmup_steps == 30);
  CHECK(a.logging_steps == 10);
  CHECK(a.save_strategy == "epoch");
  CHECK(a.save_steps == 200);
  CHECK(a.save_total_limit == 2);
  CHECK(a.seed == 7);
  CHECK(a.dataloader_drop_last);
  CHECK(a.resume_from_checkpoint == checkpoint);
  CHECK(a.disable_tqdm);
  CHECK(a.threads == 3);
}

TEST_CASE("training_args: booleans take HfArgumentParser's forms", "[cli][training_args]") {
  const workspace ws;
  for (const char* yes : {"true", "True", "TRUE", "yes", "Y", "t", "1"}) {
    CAPTURE(yes);
    CHECK(parse(ws.guide() + std::vector<std::string>{"--overwrite_output_dir", yes}).overwrite_output_dir);
    CHECK(parse(ws.guide() + std::vector<std::string>{std::string("--overwrite_output_dir=") + yes})
              .overwrite_output_dir);
  }
  for (const char* no : {"false", "False", "no", "NO", "n", "F", "0"}) {
    CAPTURE(no);
    CHECK_FALSE(parse(ws.guide() + std::vector<std::string>{"--bf16", no}).bf16);
    CHECK_FALSE(parse(ws.guide() + std::vector<std::string>{std::string("--bf16=") + no}).bf16);
  }
  // A truth value between two flags belongs to the first; the second is still read.
  const training_args a = parse(ws.guide() + std::vector<std::string>{"--bf16", "false", "--seed", "3"});
  CHECK_FALSE(a.bf16);
  CHECK(a.seed == 3);
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--bf16", "maybe"}), usage_error,
                       says("--bf16 maybe: expected a truth value"));
}

TEST_CASE("training_args: --no_pad_to_max_length, and the last of repeated flags wins", "[cli][training_args]") {
  const workspace ws;
  CHECK_FALSE(parse(ws.guide() + std::vector<std::string>{"--no_pad_to_max_length"}).pad_to_max_length);
  CHECK_FALSE(parse(ws.guide() + std::vector<std::string>{"--pad_to_max_length", "false"}).pad_to_max_length);
  CHECK(parse(ws.guide() + std::vector<std::string>{"--no_pad_to_max_length", "--pad_to_max_length"})
            .pad_to_max_length);
  CHECK_FALSE(parse(ws.guide() + std::vector<std::string>{"--pad_to_max_length", "--no_pad_to_max_length"})
                  .pad_to_max_length);
  // store_false takes no value.
  CHECK_THROWS_AS(parse(ws.guide() + std::vector<std::string>{"--no_pad_to_max_length=true"}), usage_error);
  // A flag given again overrides the first, as argparse does (scripts append overrides to a common command).
  CHECK(parse(ws.guide() + std::vector<std::string>{"--learning_rate", "1e-4"}).learning_rate == 1e-4);
  // Hugging Face registers --do-train as well as --do_train.
  const training_args dashed = parse(std::vector<std::string>{"--model-name-or-path", ws.model, "--do-eval",
                                                              "--validation-file", ws.dev, "--output-dir", ws.out,
                                                              "--per-device-eval-batch-size=16"});
  CHECK(dashed.do_eval);
  CHECK(dashed.per_device_eval_batch_size == 16);
  CHECK(dashed.validation_file == ws.dev);
}

TEST_CASE("training_args: negative numbers parse as values", "[cli][training_args]") {
  const workspace ws;
  CHECK(parse(ws.guide() + std::vector<std::string>{"--max_steps", "-1"}).max_steps == -1);
  CHECK(parse(ws.guide() + std::vector<std::string>{"--max_steps=-1"}).max_steps == -1);
  CHECK(parse(ws.guide() + std::vector<std::string>{"--null_score_diff_threshold", "-2.5"})
            .null_score_diff_threshold == -2.5);
  CHECK(parse(ws.guide() + std::vector<std::string>{"--learning_rate", "+2e-5"}).learning_rate == 2e-5);
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--warmup_steps", "-3"}), usage_error,
                       says("--warmup_steps -3: must be >= 0"));
}

TEST_CASE("training_args: a non-number for a numeric flag names the flag", "[cli][training_args]") {
  const workspace ws;
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--learning_rate", "abc"}), usage_error,
                       says("--learning_rate abc: not a number"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--learning_rate", "3e-5x"}), usage_error,
                       says("--learning_rate 3e-5x: not a number"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--per_device_train_batch_size", "12.5"}),
                       usage_error, says("--per_device_train_batch_size 12.5: not an integer"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--seed", "99999999999"}), usage_error,
                       says("--seed 99999999999: out of the range"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--save_total_limit", ""}), usage_error,
                       says("--save_total_limit : not an integer"));
  // A flag at the end with its value missing.
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--learning_rate"}), usage_error,
                       says("--learning_rate"));
}

TEST_CASE("training_args: unknown flags and stray values are usage errors naming them", "[cli][training_args]") {
  const workspace ws;
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--learning_rat", "3e-5"}), usage_error,
                       says("--learning_rat"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--fp16"}), usage_error, says("--fp16"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--fp16"}), usage_error,
                       says("run_qa --help lists the flags"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--seed", "1", "2"}), usage_error,
                       says("unexpected argument \"2\""));
}

TEST_CASE("training_args: --dataset_name is refused, pointing to --train_file", "[cli][training_args]") {
  const workspace ws;
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--dataset_name", "squad"}), usage_error,
                       says("--dataset_name squad: cputrain downloads nothing"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--dataset_name", "squad"}), usage_error,
                       says("--train_file and --validation_file"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--dataset_config_name", "plain_text"}),
                       usage_error, says("--dataset_config_name plain_text"));
}

TEST_CASE("training_args: the CPU guide's other flags are accepted with a notice", "[cli][training_args]") {
  const workspace ws;
  const training_args a = parse(ws.guide() + std::vector<std::string>{"--use_ipex", "--ddp_backend", "ccl",
                                                                      "--no_cuda", "--report_to", "tensorboard",
                                                                      "--logging_dir", "/tmp/logs", "--report_to",
                                                                      "none", "--ddp_backend", "mpi"});
  REQUIRE(a.notices.size() == 5);
  CHECK_THAT(a.notices[0], Contains("--use_ipex") && Contains("no effect"));
  CHECK_THAT(a.notices[1], Contains("--ddp_backend ccl") && Contains("MPI"));
  CHECK_THAT(a.notices[2], Contains("--no_cuda") && Contains("--use_cpu"));
  CHECK_THAT(a.notices[3], Contains("--report_to tensorboard"));
  CHECK_THAT(a.notices[4], Contains("--logging_dir /tmp/logs"));
  CHECK(a.use_cpu);
  // Off, they say nothing.
  CHECK(parse(ws.guide() + std::vector<std::string>{"--use_ipex", "false"}).notices.empty());
  // Values that would mean something cputrain does not do are refused.
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--ddp_backend", "nccl"}), usage_error,
                       says("--ddp_backend nccl: cputrain reduces gradients over MPI"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--report_to", "wandb"}), usage_error,
                       says("--report_to wandb"));
  // overwrite_cache and preprocessing_num_workers are fields, kept but changing nothing.
  const training_args b =
      parse(ws.guide() + std::vector<std::string>{"--overwrite_cache", "--preprocessing_num_workers", "4"});
  CHECK(b.overwrite_cache);
  CHECK(b.preprocessing_num_workers == 4);
}

TEST_CASE("training_args: --help shows the groups and skips validation", "[cli][training_args]") {
  for (const char* h : {"--help", "-h"}) {
    CAPTURE(h);
    // Nothing else on the line is valid, yet help wins, as with argparse.
    const parsed_command_line p = parse_all({"--learning_rate", "abc", h});
    CHECK(p.help);
    CHECK_THAT(p.help_text, Contains("Usage: run_qa [options]"));
    CHECK_THAT(p.help_text, Contains("run_qa args.json"));
    CHECK_THAT(p.help_text, Contains("Options:"));
    for (const char* group : {"Model:", "Data:", "Training:", "Compatibility (accepted, no effect):"}) {
      CHECK_THAT(p.help_text, Contains(group));
    }
    CHECK_THAT(p.help_text, Contains("--model_name_or_path"));
    CHECK_THAT(p.help_text, Contains("--no_pad_to_max_length"));
    CHECK_THAT(p.help_text, Contains("--use_ipex"));
    CHECK_THAT(p.help_text, Contains("AdamW's beta1 (default: 0.9)"));
    CHECK_THAT(p.help_text, Contains("(default: 42)"));
  }
  // Each flag sits in its group: the model's before "Data:", --use_ipex after "Compatibility".
  const std::string text = parse_all({"--help"}).help_text;
  CHECK(text.find("--model_name_or_path") < text.find("Data:"));
  CHECK(text.find("--doc_stride") > text.find("Data:"));
  CHECK(text.find("--doc_stride") < text.find("Training:"));
  CHECK(text.find("--learning_rate") > text.find("Training:"));
  CHECK(text.find("--use_ipex") > text.find("Compatibility"));
  CHECK(text.find("--overwrite_cache") > text.find("Compatibility"));
}

TEST_CASE("training_args: a single args.json argument equals the same flags", "[cli][training_args]") {
  const workspace ws;
  const fs::path file = ws.dir.path() / "args.json";
  nlohmann::ordered_json json = {
      {"model_name_or_path", ws.model},
      {"train_file", ws.train},
      {"validation_file", ws.dev},
      {"do_train", true},
      {"do_eval", true},
      {"per_device_train_batch_size", 12},
      {"learning_rate", 3e-5},
      {"num_train_epochs", 2},  // an integer for a float field, as Python accepts
      {"max_seq_length", 384},
      {"doc_stride", 128},
      {"output_dir", ws.out},
      {"bf16", true},
      {"use_cpu", true},
      {"save_total_limit", nullptr},
  };
  put(file, json.dump(2));
  const training_args from_file = parse({file.string()});
  const training_args from_flags = parse(ws.guide());
  CHECK(from_file == from_flags);
  CHECK(from_file.per_device_train_batch_size == 12);
  CHECK(read_training_args_json(file) == from_flags);

  // Compatibility keys give the same notices; Hugging Face writes report_to as a list.
  json["use_ipex"] = true;
  json["report_to"] = {"tensorboard"};
  json["ddp_backend"] = nullptr;
  put(file, json.dump());
  const training_args compat = parse({file.string()});
  REQUIRE(compat.notices.size() == 2);
  CHECK_THAT(compat.notices[0], Contains("--use_ipex"));
  CHECK_THAT(compat.notices[1], Contains("--report_to tensorboard"));
}

/// `args` parsed as program `p` parses them, named by its binary.
parsed_command_line parse_as(cputrain::cli::program p, const std::vector<std::string>& args) {
  const std::string binary = std::string("/usr/bin/") + cputrain::cli::program_name(p);
  std::vector<const char*> argv{binary.c_str()};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_training_args(static_cast<int>(argv.size()), argv.data(), p);
}

TEST_CASE("parse_training_args: each program takes its own data flags and defaults", "[cli]") {
  using cputrain::cli::program;
  const workspace ws;
  const std::vector<std::string> common = {"--model_name_or_path", ws.model, "--train_file", ws.train,
                                           "--do_train", "--output_dir", ws.out};
  const auto glue = parse_as(program::glue, common + std::vector<std::string>{"--task_name", "mrpc"}).args;
  CHECK(glue.which == program::glue);
  CHECK(glue.task_name == "mrpc");
  CHECK(glue.max_seq_length == 128);  // run_glue.py's default; run_qa.py's is 384
  CHECK(parse_as(program::qa, common).args.max_seq_length == 384);
  CHECK_THROWS_MATCHES(parse_as(program::qa, common + std::vector<std::string>{"--task_name", "mrpc"}), usage_error,
                       says("--task_name is run_glue's flag; run_qa does not take it (run_qa --help lists its flags)"));
  CHECK_THROWS_MATCHES(parse_as(program::glue, common + std::vector<std::string>{"--doc_stride", "64"}), usage_error,
                       says("--doc_stride is run_qa's flag; run_glue does not take it"));
  CHECK_THROWS_MATCHES(parse_as(program::ner, common + std::vector<std::string>{"--label_column_name"}), usage_error,
                       says("label_column_name"));
  CHECK_THROWS_MATCHES(parse_as(program::glue, common + std::vector<std::string>{"--task_name", "squad"}), usage_error,
                       says("--task_name squad: GLUE's tasks are cola, sst2"));
  CHECK_THROWS_MATCHES(parse_as(program::glue, common + std::vector<std::string>{"--no_such_flag"}), usage_error,
                       says("run_glue --help lists the flags cputrain accepts"));
  CHECK(parse_as(program::ner, common + std::vector<std::string>{"--label_all_tokens"}).args.label_all_tokens);
  // --help lists what the program takes.
  const std::string glue_help = parse_as(program::glue, {"--help"}).help_text;
  CHECK_THAT(glue_help, Contains("--task_name") && Contains("(default: 128)") && !Contains("--doc_stride"));
  CHECK_THAT(parse_as(program::qa, {"--help"}).help_text, Contains("--doc_stride") && !Contains("--task_name"));
  // training_args.json holds the program's own fields and reads back under the same program only.
  const auto json = cputrain::cli::to_json(glue);
  CHECK(json["task_name"] == "mrpc");
  CHECK_FALSE(json.contains("doc_stride"));
  CHECK(cputrain::cli::from_json(json, program::glue) == glue);
  CHECK_THROWS_MATCHES(cputrain::cli::from_json(json, program::qa), usage_error,
                       says("\"task_name\" is run_glue's, not run_qa's"));
}

TEST_CASE("parse_training_args: the evaluation and best-model flags", "[cli]") {
  const workspace ws;
  const auto a = parse(ws.guide() + std::vector<std::string>{
      "--eval_strategy", "steps", "--eval_steps", "100", "--save_steps", "200", "--load_best_model_at_end",
      "--metric_for_best_model", "f1", "--early_stopping_patience", "3", "--early_stopping_threshold", "0.01"});
  CHECK(a.eval_strategy == "steps");
  CHECK(a.eval_steps == 100);
  CHECK(a.load_best_model_at_end);
  CHECK(a.best_metric_key() == "eval_f1");
  CHECK(a.best_metric_greater());  // not a loss
  CHECK(a.early_stopping_patience == 3);
  CHECK(a.early_stopping_threshold == 0.01);
  CHECK_FALSE(a.greater_is_better.has_value());
  const auto loss = parse(ws.guide() + std::vector<std::string>{"--eval_strategy", "steps", "--load_best_model_at_end"});
  CHECK(loss.best_metric_key() == "eval_loss");
  CHECK_FALSE(loss.best_metric_greater());
  CHECK(loss.evaluation_interval() == 500);  // --logging_steps, as Hugging Face
  // --greater_is_better alone means true, as HfArgumentParser's Optional[bool].
  const auto greater = parse(ws.guide() + std::vector<std::string>{"--metric_for_best_model", "eval_loss", "--greater_is_better"});
  CHECK(greater.best_metric_key() == "eval_loss");
  CHECK(greater.best_metric_greater());
}

}  // namespace parse_args_test
