// run_ner: Hugging Face's examples/pytorch/token-classification/run_ner.py, in C++, on the CPU. The same flags and
// files:
//
//   run_ner --model_name_or_path ./bert-base-cased --train_file train.json --validation_file dev.json
//     --test_file test.json --do_train --do_eval --do_predict --per_device_train_batch_size 32
//     --learning_rate 5e-5 --num_train_epochs 3 --output_dir /tmp/ner/ --bf16 --use_cpu
//
// The data files are JSON, JSON Lines or CSV (data/dataset_table.hpp), one sentence a row: a list of words and a
// list of tags, one per word (tokens and ner_tags, else the first two columns). String tags name the labels (the
// sorted distinct tags of the training file, as run_ner.py's get_label_list); integer tags are label ids, named by
// the model's id2label when it has one, else "0", "1", ... Metrics are seqeval's over each word's first token, as
// run_ner.py computes them. This file and common/program.hpp are the whole program.
// Exit status: 0; 2 for a usage error, before any work; 1 for anything else, with a message naming the file, the
// line and the column, or the step.
#include "common/program.hpp"

#include <cputrain/train/token_classification_task.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace ct = cputrain;
namespace fs = std::filesystem;

namespace {

using ct::examples::communicator;
using ct::examples::parallel;
using ct::examples::say;

/// How the examples are read: the columns, and the labels' names by id.
struct ner_setup {
  std::string words;  // the text column (a list of words per row)
  std::string tags;   // the label column (a list of tags per row, one per word)
  bool tags_are_ids = false;  // integer tags: label ids; else tag names
  std::vector<std::string> label_list;  // names by id, config.json's id2label
};

[[noreturn]] void fail_at(const ct::data::dataset_table& t, std::size_t row, const std::string& column,
                          const std::string& problem) {
  throw ct::data::data_error(t.source + ": line " + std::to_string(t.row_lines[row]) + ": column '" + column +
                             "': " + problem);
}

std::string shown(const nlohmann::json& value) { return ct::json_text_for_message(value, 40); }

// Row `row`'s cell in `column`, refused unless it is a list with something in it (or, `may_be_empty`, a list):
// `what` names its elements. The labels are read before the examples, where an empty row is refused by its words.
const nlohmann::json& list_cell(const ct::data::dataset_table& t, std::size_t row, const std::string& column,
                                const char* what, bool may_be_empty = false) {
  const nlohmann::json& cell = t.cell(row, column);
  if (cell.is_null()) fail_at(t, row, column, std::string("missing (null), not a list of ") + what);
  if (!cell.is_array()) {
    fail_at(t, row, column, shown(cell) + " is not a list of " + what +
                                " (run_ner reads lists: a JSON or JSON Lines file, not one value per CSV cell)");
  }
  if (cell.empty() && !may_be_empty) fail_at(t, row, column, std::string("an empty list: no ") + what);
  return cell;
}

// run_ner.py's columns: the flags, else "tokens" and "ner_tags" when there, else the first and the second column.
void choose_columns(const ct::cli::training_args& args, const ct::data::dataset_table& reference, ner_setup& s) {
  const auto& names = reference.column_names;
  s.words = args.text_column_name.value_or(reference.has_column("tokens") ? "tokens" : names.front());
  if (args.label_column_name) {
    s.tags = *args.label_column_name;
  } else if (reference.has_column("ner_tags") || names.size() < 2) {
    s.tags = "ner_tags";  // a file of words alone (--do_predict) has no second column: the tags are optional there
  } else {
    s.tags = names[1];
  }
}

// Whether the tags are integers (label ids), from the column's type, or the first row that is neither kind.
bool tags_are_integers(const ct::data::dataset_table& t, const std::string& column) {
  using type = ct::data::column_type;
  const type kind = t.type(column);
  if (kind == type::list_of_strings) return false;
  if (kind == type::list_of_integers) return true;
  for (std::size_t r = 0; r < t.size(); ++r) {
    const nlohmann::json& tags = list_cell(t, r, column, "tags", true);
    for (std::size_t w = 0; w < tags.size(); ++w)
      if (!tags[w].is_string() && !tags[w].is_number_integer())
        fail_at(t, r, column, "tag " + std::to_string(w) + " is " + shown(tags[w]) +
                                  "; tags are strings, or integer label ids");
  }
  throw ct::data::data_error(t.source + ": column '" + column + "' holds no tags");
}

// run_ner.py's get_label_list: the distinct tags, sorted (Python sorts str by code point, as UTF-8 bytes sort).
std::vector<std::string> distinct_tags(const ct::data::dataset_table& t, const std::string& column) {
  std::set<std::string> tags;
  for (std::size_t r = 0; r < t.size(); ++r) {
    const nlohmann::json& row = list_cell(t, r, column, "tags", true);
    for (std::size_t w = 0; w < row.size(); ++w) {
      if (!row[w].is_string()) fail_at(t, r, column, "tag " + std::to_string(w) + " is " + shown(row[w]) + ", not a string");
      tags.insert(row[w].get<std::string>());
    }
  }
  return {tags.begin(), tags.end()};
}

// The largest label id in the column; a negative one is refused where it is.
std::int64_t largest_id(const ct::data::dataset_table& t, const std::string& column) {
  std::int64_t largest = 0;
  for (std::size_t r = 0; r < t.size(); ++r) {
    const nlohmann::json& row = list_cell(t, r, column, "tags", true);
    for (std::size_t w = 0; w < row.size(); ++w) {
      if (!row[w].is_number_integer())
        fail_at(t, r, column, "tag " + std::to_string(w) + " is " + shown(row[w]) + ", not an integer label id");
      const auto id = row[w].get<std::int64_t>();
      if (id < 0) fail_at(t, r, column, "tag " + std::to_string(w) + " is label id " + std::to_string(id) + ": negative");
      largest = std::max(largest, id);
    }
  }
  return largest;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// String tags: the training file's, in the model's order when the model was trained with the same labels (run_ner
// reorders them so); evaluating a fine-tuned model without a training file, the model's.
std::vector<std::string> named_labels(const ct::cli::training_args& args, const ct::data::dataset_table& reference,
                                      const std::string& column, const ct::nn::bert_config& config) {
  const auto& model = config.label_names;
  if (!args.do_train && !model.empty()) return model;
  std::vector<std::string> labels = distinct_tags(reference, column);
  if (model.empty()) return labels;
  std::vector<std::string> sorted = model;
  std::sort(sorted.begin(), sorted.end());
  if (sorted == labels) return model;
  say("notice: the model was trained with other labels (" + joined(sorted) + ") than the dataset's (" +
      joined(labels) + "); the model's labels are ignored, as run_ner.py ignores them");
  return labels;
}

// Integer tags are ids (a ClassLabel's, in run_ner.py): named by the model's id2label when it names them all, else
// by their number.
std::vector<std::string> id_labels(const ct::cli::training_args& args, const ct::data::dataset_table& reference,
                                   const std::string& column, const ct::nn::bert_config& config) {
  const auto needed = static_cast<std::size_t>(largest_id(reference, column)) + 1;
  if (config.label_names.size() >= needed) return config.label_names;
  std::size_t n = needed;
  if (!args.do_train) n = std::max(n, static_cast<std::size_t>(config.num_labels));  // the fine-tuned head's size
  say("notice: integer tags without names (the model's config.json has no id2label of " + std::to_string(n) +
      " labels): they are named 0 to " + std::to_string(n - 1) + ", and seqeval reads such names as tags of no "
      "entity type; give the model an id2label, or the data string tags (B-PER, ...), for entity metrics");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.push_back(std::to_string(i));
  return names;
}

ner_setup choose_setup(const ct::cli::training_args& args, const ct::data::dataset_table& reference,
                       const ct::nn::bert_config& config) {
  ner_setup s;
  choose_columns(args, reference, s);
  // The words first: a row without them (or a file of CSV cells) is refused by its words, not by its tags.
  for (std::size_t r = 0; r < reference.size(); ++r) (void)list_cell(reference, r, s.words, "words");
  if (!reference.has_column(s.tags)) {
    if (args.do_train || args.do_eval) (void)reference.column_index(s.tags);
    if (config.label_names.empty())
      throw ct::data::data_error(reference.source + ": no column '" + s.tags + "' and no id2label in the model's "
                                 "config.json: nothing says what the labels are");
    s.label_list = config.label_names;
    return s;
  }
  s.tags_are_ids = tags_are_integers(reference, s.tags);
  s.label_list = s.tags_are_ids ? id_labels(args, reference, s.tags, config)
                                : named_labels(args, reference, s.tags, config);
  return s;
}

// Row r's label ids, one per word; a count other than the words', or a tag that is not a label, refused.
std::vector<std::int32_t> row_labels(const ct::data::dataset_table& t, std::size_t r, const ner_setup& s,
                                     const std::unordered_map<std::string, std::int32_t>& ids,
                                     const std::vector<std::string>& words) {
  const nlohmann::json& tags = list_cell(t, r, s.tags, "tags", true);  // none: refused as a count below
  if (tags.size() != words.size())
    fail_at(t, r, s.tags, std::to_string(tags.size()) + " tags for the " + std::to_string(words.size()) +
                              " words of column '" + s.words + "'");
  std::vector<std::int32_t> out;
  out.reserve(tags.size());
  for (std::size_t w = 0; w < tags.size(); ++w) {
    const std::string where = "word " + std::to_string(w) + " (" + shown(nlohmann::json(words[w])) + ")";
    if (s.tags_are_ids != tags[w].is_number_integer())
      fail_at(t, r, s.tags, where + " has the tag " + shown(tags[w]) + ", but the labels are " +
                                (s.tags_are_ids ? "integer ids" : "strings"));
    if (s.tags_are_ids) {
      const auto id = tags[w].get<std::int64_t>();
      if (id < 0 || static_cast<std::size_t>(id) >= s.label_list.size())
        fail_at(t, r, s.tags, where + " has label id " + std::to_string(id) + ", outside the " +
                                  std::to_string(s.label_list.size()) + " labels");
      out.push_back(static_cast<std::int32_t>(id));
      continue;
    }
    const auto it = ids.find(tags[w].get<std::string>());
    if (it == ids.end())
      fail_at(t, r, s.tags, where + " has the tag " + shown(tags[w]) + ", which is not among the labels (" +
                                joined(s.label_list) + ")");
    out.push_back(it->second);
  }
  return out;
}

// Every row as an example (words, and label ids when `labels`), each bad row refused by file, line and column.
std::vector<ct::data::token_classification_example> read_examples(const ct::data::dataset_table& t,
                                                                   const ner_setup& s, bool labels) {
  std::unordered_map<std::string, std::int32_t> ids;
  for (std::size_t i = 0; i < s.label_list.size(); ++i) ids.emplace(s.label_list[i], static_cast<std::int32_t>(i));
  std::vector<ct::data::token_classification_example> examples(t.size());
  for (std::size_t r = 0; r < t.size(); ++r) {
    const nlohmann::json& words = list_cell(t, r, s.words, "words");
    for (std::size_t w = 0; w < words.size(); ++w) {
      if (!words[w].is_string())
        fail_at(t, r, s.words, "word " + std::to_string(w) + " is " + shown(words[w]) + ", not a string");
      examples[r].words.push_back(words[w].get<std::string>());
    }
    if (labels) examples[r].labels = row_labels(t, r, s, ids, examples[r].words);
  }
  return examples;
}

ct::data::token_classification_features featurize(const ct::data::dataset_table& table, const ner_setup& setup,
                                                  const ct::text::tokenizer& tokenizer, std::size_t max_seq_length,
                                                  bool label_all_tokens, bool labels) {
  const auto examples = read_examples(table, setup, labels);
  ct::data::token_classification_options options;
  options.max_seq_length = max_seq_length;
  options.label_all_tokens = label_all_tokens;
  options.b_to_i_label = ct::data::b_to_i_labels(setup.label_list);
  options.labels = labels;
  return ct::data::make_token_classification_features(examples, tokenizer, options);
}

std::vector<std::vector<std::string>> named(const std::vector<std::vector<std::int32_t>>& ids, const ner_setup& s) {
  std::vector<std::vector<std::string>> out(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (const std::int32_t id : ids[i]) out[i].push_back(s.label_list[static_cast<std::size_t>(id)]);
  return out;
}

// run_ner.py's compute_metrics: seqeval's overall scores, or with --return_entity_level_metrics everything seqeval
// returns, each type's dictionary flattened into <type>_precision, ..._number beside the overall_* keys.
nlohmann::json ner_metrics(const std::vector<std::vector<std::string>>& predicted,
                           const ct::data::token_classification_features& features, const ner_setup& setup,
                           bool entity_level) {
  std::vector<std::vector<std::int32_t>> references(features.size());
  for (std::size_t i = 0; i < features.size(); ++i) references[i] = features.word_labels(i);
  const auto scores = ct::data::seqeval(predicted, named(references, setup));
  nlohmann::json out;
  if (!entity_level) {
    out["precision"] = scores.overall_precision;
    out["recall"] = scores.overall_recall;
    out["f1"] = scores.overall_f1;
    out["accuracy"] = scores.overall_accuracy;
    return out;
  }
  for (const auto& [type, s] : scores.by_type) {
    out[type + "_precision"] = s.precision;
    out[type + "_recall"] = s.recall;
    out[type + "_f1"] = s.f1;
    out[type + "_number"] = s.number;
  }
  out["overall_precision"] = scores.overall_precision;
  out["overall_recall"] = scores.overall_recall;
  out["overall_f1"] = scores.overall_f1;
  out["overall_accuracy"] = scores.overall_accuracy;
  return out;
}

/// An evaluation: the metrics under `split`'s prefix (rank 0's), and every example's predicted tags.
struct ner_evaluation {
  nlohmann::json metrics;
  std::vector<std::vector<std::string>> predicted;
};

// trainer.evaluate() / predict(): the loss and the metrics of `features` (when they have labels) under `split`
// ("eval", "predict"), with the Trainer's speeds.
template <class Trainer>
ner_evaluation evaluate(Trainer& trainer, const ct::data::token_classification_features& features,
                        const ner_setup& setup, const ct::cli::training_args& args, const std::string& split) {
  const auto started = std::chrono::steady_clock::now();
  const auto rows = trainer.predict(features);  // collective: rank 0 gets every example's logits
  ner_evaluation e;
  if (!trainer.is_main_process()) return e;
  e.predicted = named(ct::train::predicted_word_labels(rows, features), setup);
  if (features.has_labels()) {
    // From the logits, in the Trainer's evaluation batches: trainer.evaluation_loss() gives the same value (on one
    // process) by running every batch through the model again, which made an evaluation 2.5 times as long.
    const auto batch = static_cast<std::size_t>(args.per_device_eval_batch_size);
    e.metrics[split + "_loss"] = ct::train::token_classification_loss(rows, features, batch);
    const nlohmann::json scores = ner_metrics(e.predicted, features, setup, args.return_entity_level_metrics);
    for (const auto& [name, value] : scores.items()) e.metrics[split + "_" + name] = value;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ct::examples::add_speed_metrics(e.metrics, split, seconds, features.size(),
                                  static_cast<std::size_t>(args.per_device_eval_batch_size));
  return e;
}

// --do_predict: predictions.txt as run_ner.py writes it (each example's predicted tags joined by spaces, a line
// each), and the predict metrics when the test file has tags.
template <class Trainer>
void predict(Trainer& trainer, const ct::data::token_classification_features& features, const ner_setup& setup,
             const ct::cli::training_args& args) {
  say("***** Running prediction *****  " + std::to_string(features.size()) + " examples");
  const ner_evaluation e = evaluate(trainer, features, setup, args, "predict");
  if (!trainer.is_main_process()) return;
  ct::train::log_metrics("predict", e.metrics);
  ct::train::save_metrics(args.output_dir, "predict", e.metrics);
  std::string text;
  for (const auto& tags : e.predicted) {
    for (std::size_t t = 0; t < tags.size(); ++t) text += (t == 0 ? "" : " ") + tags[t];
    text += "\n";
  }
  const fs::path file = fs::path(args.output_dir) / "predictions.txt";
  ct::io::write_file_atomically(file, text);
  say("predictions: " + file.string());
}

// What the run will allocate, required before any of it is (examples/common/program.hpp).
ct::memory_bill run_memory(const ct::cli::training_args& args, const ct::nn::bert_config& config,
                           std::size_t max_seq_length) {
  return ct::examples::run_memory<ct::nn::token_classification_head>(args, config, max_seq_length,
                                                  args.do_eval || args.do_predict);
}

/// The splits a run reads, featurized before the model is built (they are part of what the process holds).
struct ner_splits {
  std::optional<ct::data::token_classification_features> train, eval, predict;
};

ner_splits read_splits(const ct::cli::training_args& args, const ner_setup& setup, const ct::text::tokenizer& tokenizer,
                       std::size_t max_seq_length, std::optional<ct::data::dataset_table>& train_table) {
  ner_splits s;
  const auto make = [&](const ct::data::dataset_table& table, bool labels) {
    return featurize(table, setup, tokenizer, max_seq_length, args.label_all_tokens, labels);
  };
  if (args.do_train) {
    s.train = make(*train_table, true);
    train_table.reset();
  }
  if (args.do_eval) s.eval = make(ct::examples::read_data_table(*args.validation_file, args.max_eval_samples, "--validation_file"), true);
  if (args.do_predict) {
    // run_ner.py needs tags in the test file too; without them there is nothing to score, only predictions.
    const auto table = ct::examples::read_data_table(*args.test_file, args.max_predict_samples, "--test_file");
    s.predict = make(table, table.has_column(setup.tags));
  }
  return s;
}

// The final evaluation, logged and saved as run_ner.py does.
template <class Trainer>
void final_evaluation(Trainer& trainer, const ct::data::token_classification_features& features,
                      const ner_setup& setup, const ct::cli::training_args& args, std::optional<double> epoch) {
  say("***** Running evaluation *****  " + std::to_string(features.size()) + " examples");
  auto metrics = evaluate(trainer, features, setup, args, "eval").metrics;
  if (!trainer.is_main_process()) return;
  if (epoch) metrics["epoch"] = *epoch;
  metrics["eval_samples"] = features.size();
  ct::train::log_metrics("eval", metrics);
  ct::train::save_metrics(args.output_dir, "eval", metrics);
}

template <class Policy>
int run(const ct::cli::training_args& args, const ct::train::model_files& files, const ct::nn::bert_config& config,
        const ct::text::tokenizer& tokenizer, std::size_t max_seq_length, const ner_setup& setup,
        std::optional<ct::data::dataset_table> train_table, const std::optional<fs::path>& resume, communicator& comm,
        std::size_t ranks_here) {
  const ner_splits splits = read_splits(args, setup, tokenizer, max_seq_length, train_table);
  const double estimate = ct::examples::require_run_memory(run_memory(args, config, max_seq_length), files.config,
                                                           ranks_here, true, splits.train ? splits.train->memory_bytes() : 0);
  ct::train::token_classifier<Policy> model(config, static_cast<std::uint64_t>(args.seed));
  ct::examples::load_pretrained(model, files);
  ct::train::trainer_callbacks callbacks;
  callbacks.save_tokenizer = [&](const fs::path& dir) { ct::train::save_tokenizer(tokenizer, config.max_sequence_length(), dir); };
  ct::train::token_classification_trainer<Policy>* trainer_ptr = nullptr;
  callbacks.evaluate = [&] {
    return ct::examples::as_ordered(evaluate(*trainer_ptr, *splits.eval, setup, args, "eval").metrics);
  };
  ct::train::token_classification_trainer<Policy> trainer(model, ct::cli::to_training_options(args), comm, callbacks);
  trainer_ptr = &trainer;
  std::optional<double> epoch;
  if (args.do_train) {
    ct::examples::say_training_header(trainer.plan_for(splits.train->size()), args,
                                      std::to_string(splits.train->size()) + " examples", comm.size(), resume);
    const auto result = trainer.train(*splits.train, resume);
    ct::examples::save_training_outputs(trainer, model, tokenizer, args, result, splits.train->size());
    epoch = result.epoch;
  }
  if (args.do_eval) final_evaluation(trainer, *splits.eval, setup, args, epoch);
  if (args.do_predict) predict(trainer, *splits.predict, setup, args);
  say("peak resident memory: " + ct::format_bytes(ct::examples::peak_resident_bytes()) + " (estimated " +
      ct::format_bytes(estimate) + ")");
  comm.barrier();  // the others wait while rank 0 writes
  return 0;
}

// The model's config with the run's labels: their number and names (config.json's id2label and label2id).
ct::nn::bert_config labelled(ct::nn::bert_config config, const ner_setup& setup) {
  config.num_labels = static_cast<int>(setup.label_list.size());
  config.label_names = setup.label_list;
  config.validate();
  return config;
}

// The tokenizer, for text split into words. run_ner.py loads the byte-level tokenizers of these model
// types with add_prefix_space=True (their fast tokenizers refuse pre-tokenized input without it), whatever
// tokenizer_config.json says; so does run_ner.
ct::text::tokenizer load_word_tokenizer(const fs::path& path, const ct::nn::bert_config& config) {
  const auto tokenizer = ct::text::load_tokenizer(path, {.check_config_vocab_size = false});
  for (const char* type : {"bloom", "gpt2", "roberta", "deberta"})
    if (config.model_type == type) return tokenizer.with_add_prefix_space(true);
  return tokenizer;
}

int run_ner(const ct::cli::training_args& args, communicator& comm, std::size_t ranks_here) {
  const auto files = ct::train::find_model_files(ct::cli::to_model_sources(args));
  const auto pretrained = ct::io::read_bert_config(files.config);
  const auto tokenizer = load_word_tokenizer(files.tokenizer, pretrained);
  ct::train::check_model_fits_tokenizer(files, pretrained, tokenizer, /*pairs=*/false);  // one sentence per sequence
  // The columns and labels come from the training file, else the validation file, else the test file.
  std::optional<ct::data::dataset_table> train_table;
  if (args.do_train) train_table = ct::examples::read_data_table(*args.train_file, args.max_train_samples, "--train_file");
  const auto reference = train_table ? std::optional<ct::data::dataset_table>{}
                                     : std::optional(ct::data::read_dataset_table(args.do_eval ? *args.validation_file : *args.test_file));
  const ner_setup setup = choose_setup(args, train_table ? *train_table : *reference, pretrained);
  const auto config = labelled(pretrained, setup);
  say("labels: " + std::to_string(setup.label_list.size()) + " (" + joined(setup.label_list) + "), words from '" +
      setup.words + "', tags from '" + setup.tags + "'");
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
  return ct::examples::program_main(argc, argv, ct::cli::program::ner, run_ner);
}
