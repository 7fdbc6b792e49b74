// run_glue: Hugging Face's examples/pytorch/text-classification/run_glue.py (with run_classification.py's text
// columns and multi-label lists), in C++, on the CPU. The same flags and files:
//
//   run_glue --model_name_or_path ./bert-base-cased --task_name mrpc --train_file train.csv
//     --validation_file dev.csv --do_train --do_eval --max_seq_length 128 --per_device_train_batch_size 32
//     --learning_rate 2e-5 --num_train_epochs 3 --output_dir /tmp/mrpc/ --bf16 --use_cpu
//
// The data files are CSV, JSON or JSON Lines (data/dataset_table.hpp). With --task_name they have GLUE's columns and
// labels (names or GLUE's ids) and the task's metric is reported; without it the columns and labels are chosen as
// run_glue.py chooses them (data/text_classification.hpp). This file and common/program.hpp are the whole program.
// Exit status: 0; 2 for a usage error, before any work; 1 for anything else, with a message naming the file, the
// line and the column, or the step.
#include "common/program.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace ct = cputrain;
namespace fs = std::filesystem;

namespace {

using ct::examples::communicator;
using ct::examples::parallel;
using ct::examples::say;

/// How the examples are read: the columns, the labels, and whether integer labels are GLUE ids.
struct glue_setup {
  ct::data::text_columns columns;
  ct::data::label_scheme labels;
  bool integers_are_ids = false;
  std::string task;  // the --task_name, or "None" as run_glue.py names the prediction file without one
};

// The columns and labels, from the task or the training file (else the validation file), as run_glue.py decides.
glue_setup choose_setup(const ct::cli::training_args& args, const ct::data::dataset_table& reference,
                        const ct::nn::bert_config& config) {
  glue_setup s;
  const std::string label = args.label_column_name.value_or("label");
  if (args.task_name) {
    s.task = *args.task_name;
    s.columns = ct::data::glue_columns(*args.task_name);
    s.labels = ct::data::glue_labels(*args.task_name);
    s.integers_are_ids = true;
  } else {
    s.task = "None";
    s.columns = ct::data::default_text_columns(reference, label);
    if (args.text_column_names) {
      s.columns.first.clear();
      std::string names = *args.text_column_names;
      for (std::size_t at = 0; at <= names.size();) {
        const std::size_t comma = std::min(names.find(',', at), names.size());
        s.columns.first.push_back(names.substr(at, comma - at));
        at = comma + 1;
      }
      s.columns.second.reset();
      s.columns.delimiter = args.text_column_delimiter;
    }
    s.labels = ct::data::infer_labels(reference, label);
    // Evaluating a fine-tuned model without its training file: the labels in the model's order.
    if (!args.do_train && !config.label_names.empty() && s.labels.type != ct::data::label_scheme::kind::regression)
      s.labels.names = config.label_names;
  }
  s.columns.label = label;
  if (s.labels.type != ct::data::label_scheme::kind::regression && s.labels.names.size() < 2)
    throw ct::data::data_error(reference.source + ": one label (" + s.labels.names.front() +
                               "): classification needs at least two");
  return s;
}

ct::data::classification_features featurize(const ct::data::dataset_table& table, const glue_setup& setup,
                                            const ct::text::tokenizer& tokenizer, std::size_t max_seq_length,
                                            bool labels) {
  const auto examples = ct::data::read_classification_examples(table, setup.columns, setup.labels, labels, setup.integers_are_ids);
  return ct::data::make_classification_features(examples, tokenizer, max_seq_length, table.source);
}

// run_classification.py's multi-label score: micro-averaged F1 of the labels whose logit is above 0.
double multi_label_f1(const ct::train::logit_rows& rows, std::span<const float> targets) {
  double tp = 0, fp = 0, fn = 0;
  for (std::size_t i = 0; i < rows.values.size(); ++i) {
    const bool predicted = rows.values[i] > 0.0f, wanted = targets[i] > 0.5f;
    tp += predicted && wanted;
    fp += predicted && !wanted;
    fn += !predicted && wanted;
  }
  return tp == 0 ? 0.0 : 2 * tp / (2 * tp + fp + fn);
}

// run_glue.py's compute_metrics: the task's metric, else accuracy (or mse for regression).
nlohmann::json task_metrics(const ct::train::logit_rows& rows, const ct::data::classification_features& features,
                            const glue_setup& setup) {
  nlohmann::json out;
  using kind = ct::data::label_scheme::kind;
  if (setup.labels.type == kind::multi_label) {
    out["f1"] = multi_label_f1(rows, features.values());
    return out;
  }
  if (setup.labels.type == kind::regression) {
    const std::vector<double> scores(rows.values.begin(), rows.values.end());
    const std::vector<double> targets(features.values().begin(), features.values().end());
    if (setup.task != "None") {
      for (const auto& [name, value] : ct::data::glue_metrics(setup.task, {}, {}, scores, targets)) out[name] = value;
      return out;
    }
    double sum = 0;
    for (std::size_t i = 0; i < scores.size(); ++i) sum += (scores[i] - targets[i]) * (scores[i] - targets[i]);
    out["mse"] = sum / static_cast<double>(scores.size());
    return out;
  }
  const auto predictions = ct::train::predicted_classes(rows);
  if (setup.task == "None") {
    out["accuracy"] = ct::data::accuracy(predictions, features.class_ids());
    return out;
  }
  for (const auto& [name, value] : ct::data::glue_metrics(setup.task, predictions, features.class_ids())) out[name] = value;
  return out;
}

// trainer.evaluate(): the loss and the metrics of `features`, under `split` ("eval"), with the Trainer's speeds.
template <class Trainer>
nlohmann::json evaluate(Trainer& trainer, const ct::data::classification_features& features, const glue_setup& setup,
                        const ct::cli::training_args& args, const std::string& split) {
  const auto started = std::chrono::steady_clock::now();
  const auto rows = trainer.predict(features);  // collective: rank 0 gets every example's logits
  if (!trainer.is_main_process()) return {};
  nlohmann::json metrics;
  metrics[split + "_loss"] = ct::train::classification_loss(rows, features);
  const nlohmann::json scores = task_metrics(rows, features, setup);  // items() refers to it: it must outlive the loop
  for (const auto& [name, value] : scores.items()) metrics[split + "_" + name] = value;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ct::examples::add_speed_metrics(metrics, split, seconds, features.size(),
                                  static_cast<std::size_t>(args.per_device_eval_batch_size));
  return metrics;
}

// --do_predict: predict_results_<task>.txt as run_glue.py writes it ("index\tprediction", a label name, a value
// with three decimals, or run_classification's list of label names).
template <class Trainer>
void write_predictions(Trainer& trainer, const ct::data::classification_features& features, const glue_setup& setup,
                       const ct::cli::training_args& args, const std::string& name) {
  const auto rows = trainer.predict(features);
  if (!trainer.is_main_process()) return;
  std::string text = "index\tprediction\n";
  using kind = ct::data::label_scheme::kind;
  const auto classes = ct::train::predicted_classes(rows);
  for (std::size_t i = 0; i < features.size(); ++i) {
    text += std::to_string(i) + "\t";
    if (setup.labels.type == kind::regression) {
      char value[64];
      std::snprintf(value, sizeof value, "%3.3f", static_cast<double>(rows.values[i]));
      text += value;
    } else if (setup.labels.type == kind::multi_label) {
      std::string list;
      for (std::size_t l = 0; l < rows.row_length; ++l) {
        if (rows.values[i * rows.row_length + l] > 0.0f) list += (list.empty() ? "'" : ", '") + setup.labels.names[l] + "'";
      }
      text += "[" + list + "]";
    } else {
      text += setup.labels.names[static_cast<std::size_t>(classes[i])];
    }
    text += "\n";
  }
  ct::io::write_file_atomically(fs::path(args.output_dir) / ("predict_results_" + name + ".txt"), text);
  say("predictions: " + (fs::path(args.output_dir) / ("predict_results_" + name + ".txt")).string());
}

// What the run will allocate, required before any of it is (examples/common/program.hpp).
ct::memory_bill run_memory(const ct::cli::training_args& args, const ct::nn::bert_config& config,
                           std::size_t max_seq_length) {
  return ct::examples::run_memory<ct::nn::sequence_classification_head>(args, config, max_seq_length,
                                                  args.do_eval || args.do_predict);
}

/// The splits a run reads, featurized before the model is built (they are part of what the process holds).
struct glue_splits {
  std::optional<ct::data::classification_features> train, eval, eval_mm, predict;
};

glue_splits read_splits(const ct::cli::training_args& args, const glue_setup& setup, const ct::text::tokenizer& tokenizer,
                        std::size_t max_seq_length, std::optional<ct::data::dataset_table>& train_table) {
  glue_splits s;
  const auto read = [&](const std::optional<std::string>& file, std::optional<int> max, const char* flag, bool labels) {
    return featurize(ct::examples::read_data_table(*file, max, flag), setup, tokenizer, max_seq_length, labels);
  };
  if (args.do_train) {
    s.train = featurize(*train_table, setup, tokenizer, max_seq_length, true);
    train_table.reset();
  }
  if (args.do_eval) s.eval = read(args.validation_file, args.max_eval_samples, "--validation_file", true);
  if (args.do_eval && args.validation_mismatched_file)
    s.eval_mm = read(args.validation_mismatched_file, args.max_eval_samples, "--validation_mismatched_file", true);
  if (args.do_predict) s.predict = read(args.test_file, args.max_predict_samples, "--test_file", false);
  return s;
}

// The final evaluations (MNLI: matched, then mismatched with _mm names), logged and saved as run_glue.py does.
template <class Trainer>
void final_evaluation(Trainer& trainer, const glue_splits& splits, const glue_setup& setup,
                      const ct::cli::training_args& args, std::optional<double> epoch) {
  nlohmann::json combined;
  for (const auto* features : {&splits.eval, &splits.eval_mm}) {
    if (!*features) continue;
    say("***** Running evaluation *****  " + std::to_string((*features)->size()) + " examples");
    auto metrics = evaluate(trainer, **features, setup, args, "eval");
    if (!trainer.is_main_process()) continue;
    if (epoch) metrics["epoch"] = *epoch;
    metrics["eval_samples"] = (*features)->size();
    if (features == &splits.eval_mm) {
      nlohmann::json renamed;
      for (const auto& [key, value] : metrics.items()) renamed[key + "_mm"] = value;
      metrics = renamed;
    }
    combined.update(metrics);
    ct::train::log_metrics("eval", metrics);
  }
  if (trainer.is_main_process()) ct::train::save_metrics(args.output_dir, "eval", combined);
}

template <class Policy>
int run(const ct::cli::training_args& args, const ct::train::model_files& files, const ct::nn::bert_config& config,
        const ct::text::tokenizer& tokenizer, std::size_t max_seq_length, const glue_setup& setup,
        std::optional<ct::data::dataset_table> train_table, const std::optional<fs::path>& resume, communicator& comm,
        std::size_t ranks_here) {
  const glue_splits splits = read_splits(args, setup, tokenizer, max_seq_length, train_table);
  const double estimate = ct::examples::require_run_memory(run_memory(args, config, max_seq_length), files.config,
                                                           ranks_here, true, splits.train ? splits.train->memory_bytes() : 0);
  ct::train::sequence_classifier<Policy> model(config, static_cast<std::uint64_t>(args.seed));
  ct::examples::load_pretrained(model, files);
  ct::train::trainer_callbacks callbacks;
  callbacks.save_tokenizer = [&](const fs::path& dir) { ct::train::save_tokenizer(tokenizer, config.max_sequence_length(), dir); };
  ct::train::classification_trainer<Policy>* trainer_ptr = nullptr;
  callbacks.evaluate = [&] { return ct::examples::as_ordered(evaluate(*trainer_ptr, *splits.eval, setup, args, "eval")); };
  ct::train::classification_trainer<Policy> trainer(model, ct::cli::to_training_options(args), comm, callbacks);
  trainer_ptr = &trainer;
  std::optional<double> epoch;
  if (args.do_train) {
    ct::examples::say_training_header(trainer.plan_for(splits.train->size()), args,
                                      std::to_string(splits.train->size()) + " examples", comm.size(), resume);
    const auto result = trainer.train(*splits.train, resume);
    ct::examples::save_training_outputs(trainer, model, tokenizer, args, result, splits.train->size());
    epoch = result.epoch;
  }
  if (args.do_eval) final_evaluation(trainer, splits, setup, args, epoch);
  if (args.do_predict) write_predictions(trainer, *splits.predict, setup, args, setup.task);
  say("peak resident memory: " + ct::format_bytes(ct::examples::peak_resident_bytes()) + " (estimated " +
      ct::format_bytes(estimate) + ")");
  comm.barrier();  // the others wait while rank 0 writes
  return 0;
}

// The model's config with the run's labels: their number and names (config.json's id2label), and the problem type.
ct::nn::bert_config labelled(ct::nn::bert_config config, const glue_setup& setup) {
  using kind = ct::data::label_scheme::kind;
  config.num_labels = setup.labels.num_labels();
  config.label_names = setup.labels.type == kind::regression ? std::vector<std::string>{} : setup.labels.names;
  if (setup.labels.type == kind::multi_label) config.problem_type = "multi_label_classification";
  if (setup.labels.type == kind::regression) config.problem_type = "regression";
  config.validate();
  return config;
}

int run_glue(const ct::cli::training_args& args, communicator& comm, std::size_t ranks_here) {
  const auto files = ct::train::find_model_files(ct::cli::to_model_sources(args));
  const auto tokenizer = ct::text::load_tokenizer(files.tokenizer, {.check_config_vocab_size = false});
  const auto pretrained = ct::io::read_bert_config(files.config);
  ct::train::check_model_fits_tokenizer(files, pretrained, tokenizer, /*pairs=*/false);  // the vocabulary, at once
  // The labels come from the training file, as run_glue.py takes them (else from the validation file).
  std::optional<ct::data::dataset_table> train_table;
  if (args.do_train) train_table = ct::examples::read_data_table(*args.train_file, args.max_train_samples, "--train_file");
  const auto reference = train_table ? std::optional<ct::data::dataset_table>{}
                                     : std::optional(ct::data::read_dataset_table(args.do_eval ? *args.validation_file : *args.test_file));
  const glue_setup setup = choose_setup(args, train_table ? *train_table : *reference, pretrained);
  // Only a second text column makes sentence pairs, whose second part needs a token type of its own: a single-sentence
  // task (SST-2, CoLA, one text column) runs on a model with one token type.
  if (setup.columns.second) ct::train::check_model_fits_tokenizer(files, pretrained, tokenizer, /*pairs=*/true);
  const auto config = labelled(pretrained, setup);
  say("labels: " + (setup.labels.type == ct::data::label_scheme::kind::regression
                        ? std::string("regression (one value)")
                        : std::to_string(setup.labels.names.size()) + (setup.labels.type == ct::data::label_scheme::kind::multi_label ? " (multi-label)" : "")));
  const std::size_t max_seq_length = ct::examples::sequence_length(args, config);
  (void)ct::examples::require_run_memory(run_memory(args, config, max_seq_length), files.config, ranks_here, false);
  const auto claim = ct::examples::claim_output_dir(args, comm);
  return ct::examples::run_in_precision(args, [&]<class Policy>() {
    return run<Policy>(args, files, config, tokenizer, max_seq_length, setup, std::move(train_table), claim.resume, comm,
                       ranks_here);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return ct::examples::program_main(argc, argv, ct::cli::program::glue, run_glue);
}
