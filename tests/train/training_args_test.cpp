// Tests for include/cputrain/train/training_args.hpp: the command of Hugging Face's CPU-training guide parses to
// its values and Hugging Face's defaults, HfArgumentParser's boolean forms and --no_ flags, the args.json form
// equals the flag form, every validation rule is a usage_error naming its flag, the help groups, the refused and
// the accepted-with-a-notice flags, and the to_json/from_json round trip.
#include <catch2/catch.hpp>

#include "support/checks.hpp"
#include "support/temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/optim/lr_schedule.hpp"
#include "cputrain/train/training_args.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using cputrain::usage_error;
using cputrain::test::says;
using cputrain::test::temp_dir;
using cputrain::train::from_json;
using cputrain::train::parse_training_args;
using cputrain::train::parsed_command_line;
using cputrain::train::read_training_args_json;
using cputrain::train::to_json;
using cputrain::train::training_args;

namespace {

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary | std::ios::trunc) << text; }

/// The files a valid command names: a model directory and three SQuAD files (their content is the trainer's job).
struct workspace {
  temp_dir dir{"cputrain-args"};
  std::string model = (dir.path() / "bert-base-uncased").string();
  std::string train = (dir.path() / "train.json").string();
  std::string dev = (dir.path() / "dev.json").string();
  std::string test = (dir.path() / "test.json").string();
  std::string out = (dir.path() / "debug_squad").string();

  workspace() {
    fs::create_directory(model);
    put(fs::path(model) / "config.json", "{}");
    for (const std::string& f : {train, dev, test}) put(f, R"({"data": []})");
  }

  /// The command of Hugging Face's CPU-training guide, with local files instead of --dataset_name squad.
  [[nodiscard]] std::vector<std::string> guide() const {
    return {"--model_name_or_path", model, "--train_file", train, "--validation_file", dev,
            "--do_train", "--do_eval", "--per_device_train_batch_size", "12", "--learning_rate", "3e-5",
            "--num_train_epochs", "2", "--max_seq_length", "384", "--doc_stride", "128",
            "--output_dir", out, "--bf16", "--use_cpu"};
  }
};

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

parsed_command_line parse_all(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"/usr/local/bin/run_qa"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_training_args(static_cast<int>(argv.size()), argv.data());
}

training_args parse(const std::vector<std::string>& args) {
  parsed_command_line parsed = parse_all(args);
  REQUIRE_FALSE(parsed.help);
  return parsed.args;
}

}  // namespace

TEST_CASE("training_args: the CPU guide's command parses to its values and Hugging Face's defaults",
          "[train][training_args]") {
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
  CHECK(a.lr_schedule_kind() == cputrain::optim::schedule_kind::linear);
  CHECK_FALSE(a.overwrite_output_dir);
  CHECK_FALSE(a.dataloader_drop_last);
  CHECK_FALSE(a.disable_tqdm);
  CHECK_FALSE(a.threads.has_value());
  CHECK_FALSE(a.max_train_samples.has_value());
  CHECK_FALSE(a.test_file.has_value());
  CHECK_FALSE(a.resume_from_checkpoint.has_value());
  CHECK_FALSE(a.config_name.has_value());
}

TEST_CASE("training_args: every flag reaches its field", "[train][training_args]") {
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
  CHECK(a.lr_schedule_kind() == cputrain::optim::schedule_kind::cosine);
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

TEST_CASE("training_args: booleans take HfArgumentParser's forms", "[train][training_args]") {
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

TEST_CASE("training_args: --no_pad_to_max_length, and the last of repeated flags wins", "[train][training_args]") {
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

TEST_CASE("training_args: negative numbers parse as values", "[train][training_args]") {
  const workspace ws;
  CHECK(parse(ws.guide() + std::vector<std::string>{"--max_steps", "-1"}).max_steps == -1);
  CHECK(parse(ws.guide() + std::vector<std::string>{"--max_steps=-1"}).max_steps == -1);
  CHECK(parse(ws.guide() + std::vector<std::string>{"--null_score_diff_threshold", "-2.5"})
            .null_score_diff_threshold == -2.5);
  CHECK(parse(ws.guide() + std::vector<std::string>{"--learning_rate", "+2e-5"}).learning_rate == 2e-5);
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--warmup_steps", "-3"}), usage_error,
                       says("--warmup_steps -3: must be >= 0"));
}

TEST_CASE("training_args: a non-number for a numeric flag names the flag", "[train][training_args]") {
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

TEST_CASE("training_args: each value out of range is a usage error naming the flag, the value and the rule",
          "[train][training_args][errors]") {
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
      {{"--eval_strategy", "steps"}, "--eval_strategy steps: cputrain evaluates after training (no)"},
      {{"--evaluation_strategy", "steps"}, "--eval_strategy steps: cputrain evaluates"},
      {{"--seed", "-1"}, "--seed -1: must be >= 0"},
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

TEST_CASE("training_args: what to do, the model and the files are checked", "[train][training_args][errors]") {
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

TEST_CASE("training_args: unknown flags and stray values are usage errors naming them", "[train][training_args]") {
  const workspace ws;
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--learning_rat", "3e-5"}), usage_error,
                       says("--learning_rat"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--fp16"}), usage_error, says("--fp16"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--fp16"}), usage_error,
                       says("run_qa --help lists the flags"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--seed", "1", "2"}), usage_error,
                       says("unexpected argument \"2\""));
}

TEST_CASE("training_args: --dataset_name is refused, pointing to --train_file", "[train][training_args]") {
  const workspace ws;
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--dataset_name", "squad"}), usage_error,
                       says("--dataset_name squad: cputrain downloads nothing"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--dataset_name", "squad"}), usage_error,
                       says("--train_file and --validation_file"));
  CHECK_THROWS_MATCHES(parse(ws.guide() + std::vector<std::string>{"--dataset_config_name", "plain_text"}),
                       usage_error, says("--dataset_config_name plain_text"));
}

TEST_CASE("training_args: the CPU guide's other flags are accepted with a notice", "[train][training_args]") {
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

TEST_CASE("training_args: --help shows the groups and skips validation", "[train][training_args]") {
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

TEST_CASE("training_args: a single args.json argument equals the same flags", "[train][training_args]") {
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

TEST_CASE("training_args: args.json mistakes name the file and the key", "[train][training_args][errors]") {
  const workspace ws;
  const fs::path file = ws.dir.path() / "args.json";
  const std::string name = file.string();
  const nlohmann::ordered_json good = {{"model_name_or_path", ws.model}, {"do_eval", true},
                                       {"validation_file", ws.dev}, {"output_dir", ws.out}};
  const auto with = [&](const std::string& key, const nlohmann::ordered_json& value) {
    nlohmann::ordered_json j = good;
    j[key] = value;
    put(file, j.dump());
    return file.string();
  };
  CHECK(read_training_args_json(with("seed", 3)).seed == 3);
  CHECK_THROWS_MATCHES(read_training_args_json(with("learning_rat", 3e-5)), usage_error,
                       says(name + ": unknown key \"learning_rat\""));
  CHECK_THROWS_MATCHES(read_training_args_json(with("learning_rate", "3e-5")), usage_error,
                       says(name + ": \"learning_rate\" is \"3e-5\", but must be a number"));
  CHECK_THROWS_MATCHES(read_training_args_json(with("per_device_train_batch_size", 8.0)), usage_error,
                       says(name + ": \"per_device_train_batch_size\" is 8.0, but must be an integer"));
  CHECK_THROWS_MATCHES(read_training_args_json(with("seed", 5000000000LL)), usage_error,
                       says("\"seed\" is 5000000000, but must be a 32-bit integer"));
  CHECK_THROWS_MATCHES(read_training_args_json(with("do_train", "true")), usage_error,
                       says(name + ": \"do_train\" is \"true\", but must be true or false"));
  CHECK_THROWS_MATCHES(read_training_args_json(with("output_dir", nullptr)), usage_error,
                       says(name + ": \"output_dir\" is null, but must be a string"));
  CHECK_THROWS_MATCHES(read_training_args_json(with("dataset_name", "squad")), usage_error,
                       says(name + ": --dataset_name squad: cputrain downloads nothing"));
  // Validation errors carry the file too.
  CHECK_THROWS_MATCHES(read_training_args_json(with("doc_stride", 500)), usage_error,
                       says(name + ": --doc_stride 500: must be less than --max_seq_length 384"));
  put(file, "[1, 2]");
  CHECK_THROWS_MATCHES(read_training_args_json(file), usage_error, says(name + ": the top level is array"));
  put(file, "{\"seed\": ");
  CHECK_THROWS_MATCHES(read_training_args_json(file), usage_error, says(name + ": not valid JSON"));
  CHECK_THROWS_MATCHES(read_training_args_json(ws.dir.path() / "none.json"), usage_error,
                       says("none.json: no such file"));
  // Through the command line, as run_qa.py reads `run_qa args.json`.
  CHECK_THROWS_MATCHES(parse({with("seed", "7")}), usage_error, says(name + ": \"seed\" is \"7\""));
}

TEST_CASE("training_args: to_json writes every field and from_json reads them back", "[train][training_args]") {
  const workspace ws;
  const training_args a = parse(ws.guide() + std::vector<std::string>{
      "--save_total_limit", "3", "--threads", "5", "--weight_decay", "0.01", "--no_pad_to_max_length",
      "--lr_scheduler_type", "constant_with_warmup", "--warmup_steps", "10", "--max_train_samples", "7"});
  const nlohmann::ordered_json json = to_json(a);
  CHECK(json.size() == std::size(cputrain::train::detail::args_fields));
  CHECK(json.begin().key() == "model_name_or_path");  // run_qa.py's order: the model's arguments first
  CHECK(json["per_device_train_batch_size"] == 12);
  CHECK(json["learning_rate"] == 3e-5);
  CHECK(json["num_train_epochs"] == 2.0);
  CHECK(json["save_total_limit"] == 3);
  CHECK(json["pad_to_max_length"] == false);
  CHECK(json["lr_scheduler_type"] == "constant_with_warmup");
  CHECK(json["resume_from_checkpoint"].is_null());
  CHECK(json["config_name"].is_null());
  CHECK(json["max_eval_samples"].is_null());
  CHECK_FALSE(json.contains("notices"));

  const training_args back = from_json(json);
  CHECK(back == a);
  CHECK(from_json(nlohmann::ordered_json::parse(json.dump(2))) == a);  // through text, as a checkpoint holds it
  // Defaults round trip too, and from_json checks no files: a checkpoint's arguments read elsewhere.
  const training_args defaults;
  CHECK(from_json(to_json(defaults)) == defaults);
  training_args changed = back;
  changed.seed = 43;
  CHECK_FALSE(changed == a);
  // Notices are not arguments.
  training_args noisy = parse(ws.guide() + std::vector<std::string>{"--use_ipex"});
  CHECK(to_json(noisy) == to_json(parse(ws.guide())));
}

TEST_CASE("training_args: validate_training checks the loop's values alone, for arguments filled in code",
          "[train][training_args]") {
  cputrain::train::training_args args;  // no output_dir, no task, no files: only the loop's values matter here
  CHECK_NOTHROW(args.validate_training());
  CHECK_THROWS_AS(args.validate(), usage_error);  // the whole check wants --output_dir and the rest

  auto refused = [](auto change, const char* field) {
    cputrain::train::training_args a;
    change(a);
    INFO(field);
    CHECK_THROWS_WITH(a.validate_training(), Contains(field));
  };
  refused([](auto& a) { a.logging_steps = 0; }, "logging_steps");
  refused([](auto& a) { a.save_steps = 0; }, "save_steps");
  refused([](auto& a) { a.per_device_train_batch_size = 0; }, "per_device_train_batch_size");
  refused([](auto& a) { a.gradient_accumulation_steps = -2; }, "gradient_accumulation_steps");
  refused([](auto& a) { a.max_steps = 0; }, "max_steps");
  refused([](auto& a) { a.learning_rate = -1e-3; }, "learning_rate");
  refused([](auto& a) { a.save_strategy = "sometimes"; }, "save_strategy");
}

TEST_CASE("training_args: JSON nested a million levels deep is refused naming the file or key, not a stack overflow",
          "[train][training_args][errors]") {
  // Found by the fuzz target tests/fuzz/training_args_fuzz.cpp (reproducer tests/fuzz/regressions/training_args/
  // deep_nesting.json): the message for a value of the wrong type printed it, recursing once per level until the
  // stack ran out.
  temp_dir dir{"cputrain-args"};
  const fs::path file = dir.path() / "args.json";
  const std::size_t depth = 1'000'000;
  put(file, R"({"output_dir": )" + std::string(depth, '[') + std::string(depth, ']') + "}");
  CHECK_THROWS_MATCHES(read_training_args_json(file), usage_error,
                       says(file.string() + ": not an arguments file: the JSON nests deeper than 100 levels"));
  // from_json takes JSON its caller parsed, so its messages must not print a deep value either.
  nlohmann::ordered_json deep = 1;
  for (std::size_t i = 0; i < depth; ++i) deep = nlohmann::ordered_json::array({std::move(deep)});
  const nlohmann::ordered_json args = {{"seed", std::move(deep)}};
  CHECK_THROWS_MATCHES(from_json(args), usage_error,
                       says("\"seed\" is a list nested more than 20 levels deep, but must be an integer"));
  CHECK_THROWS_MATCHES(from_json(nlohmann::ordered_json::parse(R"({"seed": [[1]]})")), usage_error,
                       says("\"seed\" is [[1]], but must be an integer"));
}
