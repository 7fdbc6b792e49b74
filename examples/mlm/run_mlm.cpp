// run_mlm: Hugging Face's examples/pytorch/language-modeling/run_mlm.py in C++, on the CPU. The same flags and files:
//
//   run_mlm --model_name_or_path ./bert-base-uncased --train_file train.txt --validation_file dev.txt --do_train
//     --do_eval --per_device_train_batch_size 32 --num_train_epochs 3 --output_dir /tmp/mlm/ --bf16 --use_cpu
//
// Domain adaptation from --model_name_or_path, or a new model from --config_name. The files are text (one row a
// line, as datasets' text loader reads them), CSV, JSON or JSON Lines (the "text" column, else the first). Without
// --validation_file the first --validation_split_percentage % of the training rows evaluate and the rest train. The
// texts become blocks of max_seq_length tokens (or one sequence per non-blank line with --line_by_line), each masked
// from its epoch and its index: a resumed run draws the same masks, every evaluation draws the same ones, and so do
// any batch size and number of ranks.
// Reported: eval_loss and perplexity = exp(eval_loss), as run_mlm.py names them. Exit status as run_glue's.
#include "common/program.hpp"

#include <cputrain/train/masked_lm_task.hpp>  // not (yet) in the cputrain/train.hpp umbrella

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ct = cputrain;
namespace fs = std::filesystem;

namespace {

using ct::examples::communicator;
using ct::examples::parallel;
using ct::examples::say;

/// One split's texts as run_mlm.py's tokenize_function reads them, and the line of its file each starts on.
struct split_texts {
  std::string source;  // "--train_file path", for messages
  std::vector<std::string> texts;
  std::vector<std::size_t> lines;
};

// Python's universal newlines, as datasets' text loader opens the file: "\r\n" and "\r" end a line like "\n". Every
// line is a row (a blank one too); a last line break ends the last row and starts none. Decoded as strict UTF-8.
split_texts read_text_lines(const std::string& file, const std::string& flag) {
  const std::string bytes = ct::io::read_whole_file<ct::data::data_error>(file);
  split_texts s;
  s.source = flag + " " + file;
  std::size_t line = 1;
  for (std::size_t at = 0; at < bytes.size(); ++line) {
    const std::size_t end = std::min(bytes.find_first_of("\r\n", at), bytes.size());
    const std::string_view text(bytes.data() + at, end - at);
    if (const std::size_t bad = ct::text::find_invalid_utf8(text); bad != std::string_view::npos)
      throw ct::data::data_error(file + ": line " + std::to_string(line) + ", byte " + std::to_string(bad + 1) +
                                 ": invalid UTF-8 (datasets' text loader decodes the file as UTF-8)");
    s.texts.emplace_back(text);
    s.lines.push_back(line);
    const bool crlf = end + 1 < bytes.size() && bytes[end] == '\r' && bytes[end + 1] == '\n';
    at = end + (crlf ? 2 : 1);
  }
  return s;
}

// run_mlm.py's text_column_name: "text" if the file has it, else its first column. The first file read (the
// training file when training) chooses; the other must have the same column.
split_texts read_table_texts(const std::string& file, const std::string& flag, std::optional<std::string>& column) {
  const auto table = ct::data::read_dataset_table(file);
  if (!column) column = table.has_column("text") ? std::string("text") : table.column_names.front();
  split_texts s;
  s.source = flag + " " + file;
  s.texts.reserve(table.size());
  for (std::size_t row = 0; row < table.size(); ++row) {
    s.texts.emplace_back(table.string(row, *column));  // data_error naming the line: null, or not a string column
    s.lines.push_back(table.row_lines[row]);
  }
  return s;
}

split_texts read_split(const std::string& file, const std::string& flag, std::optional<std::string>& column) {
  if (fs::path(file).extension() == ".txt") {
    if (!column) column = "text";  // the text loader's one column
    return read_text_lines(file, flag);
  }
  return read_table_texts(file, flag, column);
}

// run_mlm.py takes .txt, .csv and .json (datasets' json loader reads JSON Lines too, hence .jsonl): others are
// refused before any work.
void check_extension(const std::optional<std::string>& file, const char* flag) {
  if (!file) return;
  const std::string extension = fs::path(*file).extension().string();
  if (extension != ".txt" && extension != ".csv" && extension != ".json" && extension != ".jsonl")
    throw ct::usage_error(std::string(flag) + " " + *file + ": " +
                          (extension.empty() ? "no extension" : "extension '" + extension + "'") +
                          "; run_mlm reads a .txt, .csv, .json or .jsonl file");
}

/// The texts a run trains and evaluates on, before tokenization.
struct raw_splits {
  std::optional<split_texts> train, eval;
};

// The rows [first, end) of `all`, as datasets' train[a%:b%] selects them, moved out of it (a corpus is not copied).
split_texts take_rows(split_texts& all, std::size_t first, std::size_t end, const std::string& what) {
  const auto from = static_cast<std::ptrdiff_t>(first), to = static_cast<std::ptrdiff_t>(end);
  split_texts s;
  s.source = all.source + " (" + what + ")";
  s.texts.assign(std::make_move_iterator(all.texts.begin() + from), std::make_move_iterator(all.texts.begin() + to));
  s.lines.assign(all.lines.begin() + from, all.lines.begin() + to);
  return s;
}

// The splits as run_mlm.py loads them: without --validation_file, train[:N%] evaluates and train[N%:] trains (N% of
// the rows rounded to the nearest, half to even, as datasets' "closest" rounding), whether or not --do_eval asks.
raw_splits read_raw_splits(const ct::cli::training_args& args) {
  raw_splits s;
  std::optional<std::string> column;
  const bool eval_file = args.do_eval && args.validation_file;
  if (eval_file && !args.do_train) s.eval = read_split(*args.validation_file, "--validation_file", column);
  if (args.do_train || (args.do_eval && !args.validation_file))
    s.train = read_split(*args.train_file, "--train_file", column);
  if (eval_file && !s.eval) s.eval = read_split(*args.validation_file, "--validation_file", column);
  if (!args.validation_file && s.train) {
    const std::size_t n = s.train->texts.size();
    const auto cut = static_cast<std::size_t>(
        std::nearbyint(args.validation_split_percentage * static_cast<double>(n) / 100.0));
    const std::string percent = std::to_string(args.validation_split_percentage) + "%";
    if (args.do_eval) s.eval = take_rows(*s.train, 0, cut, "train[:" + percent + "], no --validation_file");
    s.train = take_rows(*s.train, cut, n, "train[" + percent + ":], no --validation_file");
    if (!args.do_train) s.train.reset();
  }
  for (const auto* split : {&s.train, &s.eval}) {
    if (*split && (*split)->texts.empty()) throw ct::data::data_error((*split)->source + ": holds no text");
  }
  return s;
}

// make_mlm_features names a text it cannot tokenize by its index ("text 3: ..."): the message names its file and
// line instead.
[[noreturn]] void rethrow_at_line(const ct::data::data_error& e, const split_texts& split) {
  const std::string_view what = e.what();
  std::size_t index = 0, digits = 5;
  if (what.starts_with("text ")) {
    while (digits < what.size() && what[digits] >= '0' && what[digits] <= '9')
      index = index * 10 + static_cast<std::size_t>(what[digits++] - '0');
  }
  if (digits == 5 || digits >= what.size() || what[digits] != ':' || index >= split.lines.size())
    throw ct::data::data_error(split.source + ": " + std::string(what));
  throw ct::data::data_error(split.source + ": line " + std::to_string(split.lines[index]) +
                             std::string(what.substr(digits)));
}

// Tokenized and cut as run_mlm.py's map() calls do, then --max_*_samples features kept; refused when none is left.
ct::data::mlm_features featurize(const split_texts& split, const ct::text::tokenizer& tokenizer,
                                 const ct::data::mlm_feature_options& options, std::optional<int> max_samples) {
  std::optional<ct::data::mlm_features> features;
  try {
    features = ct::data::make_mlm_features(split.texts, tokenizer, options);
  } catch (const ct::data::data_error& e) {
    rethrow_at_line(e, split);
  }
  const std::string texts = std::to_string(split.texts.size()) + (split.texts.size() == 1 ? " text" : " texts");
  const std::string length = std::to_string(options.max_seq_length);
  if (features->empty())
    throw ct::data::data_error(split.source + ": " + texts +
                               (options.line_by_line ? ", every one blank: no sequence"
                                                     : ", no block of " + length + " tokens (each group of up to 1000 "
                                                       "texts drops its tokens past its last whole block; a smaller "
                                                       "--max_seq_length makes some)"));
  if (max_samples) features->truncate(static_cast<std::size_t>(*max_samples));
  say(split.source + ": " + texts + ", " + std::to_string(features->size()) +
      (options.line_by_line ? " sequences of up to " : " blocks of ") + length + " tokens");
  return std::move(*features);
}

/// The features a run trains and evaluates on (they are part of what the process holds when the model is built).
struct mlm_splits {
  std::optional<ct::data::mlm_features> train, eval;

  [[nodiscard]] std::size_t memory_bytes() const {
    return (train ? train->memory_bytes() : 0) + (eval ? eval->memory_bytes() : 0);
  }
};

mlm_splits make_splits(const ct::cli::training_args& args, const ct::text::tokenizer& tokenizer,
                       std::size_t max_seq_length) {
  raw_splits raw = read_raw_splits(args);
  ct::data::mlm_feature_options options;
  options.max_seq_length = max_seq_length;
  options.line_by_line = args.line_by_line;
  options.masking.mlm_probability = args.mlm_probability;
  options.masking.seed = static_cast<std::uint64_t>(args.seed);  // set_seed(seed) seeds the collator's draws too
  mlm_splits s;
  if (raw.train) s.train = featurize(*raw.train, tokenizer, options, args.max_train_samples);
  raw.train.reset();
  if (raw.eval) s.eval = featurize(*raw.eval, tokenizer, options, args.max_eval_samples);
  return s;
}

// trainer.evaluate(): eval_loss over `features` with the masks of their evaluation keys (the same at every
// evaluation), and the Trainer's speeds. Collective; rank 0's metrics.
template <class Trainer>
nlohmann::json evaluate(Trainer& trainer, const ct::data::mlm_features& features, const ct::cli::training_args& args) {
  const auto started = std::chrono::steady_clock::now();
  const double loss = trainer.evaluation_loss(features);
  if (!trainer.is_main_process()) return {};
  nlohmann::json metrics;
  metrics["eval_loss"] = loss;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ct::examples::add_speed_metrics(metrics, "eval", seconds, features.size(),
                                  static_cast<std::size_t>(args.per_device_eval_batch_size));
  return metrics;
}

// run_mlm.py's last evaluation: eval_samples and perplexity (its own key, without "eval_") added, logged and saved.
template <class Trainer>
void final_evaluation(Trainer& trainer, const ct::data::mlm_features& features, const ct::cli::training_args& args,
                      std::optional<double> epoch) {
  say("***** Running evaluation *****  " + std::to_string(features.size()) + " sequences");
  nlohmann::json metrics = evaluate(trainer, features, args);
  if (!trainer.is_main_process()) return;
  if (epoch) metrics["epoch"] = *epoch;
  metrics["eval_samples"] = features.size();
  metrics["perplexity"] = std::exp(metrics["eval_loss"].get<double>());  // inf past exp's range, as run_mlm.py says
  ct::train::log_metrics("eval", metrics);
  ct::train::save_metrics(args.output_dir, "eval", metrics);
}

// What the run will allocate, required before any of it is (examples/common/program.hpp).
ct::memory_bill run_memory(const ct::cli::training_args& args, const ct::nn::bert_config& config,
                           std::size_t max_seq_length) {
  return ct::examples::run_memory<ct::nn::masked_lm_head>(args, config, max_seq_length,
                                                  !args.do_train || args.do_eval);
}

template <class Policy>
int run(const ct::cli::training_args& args, const ct::train::model_files& files, const ct::nn::bert_config& config,
        const ct::text::tokenizer& tokenizer, std::size_t max_seq_length, const std::optional<fs::path>& resume,
        communicator& comm, std::size_t ranks_here) {
  const mlm_splits splits = make_splits(args, tokenizer, max_seq_length);
  const double estimate = ct::examples::require_run_memory(run_memory(args, config, max_seq_length), files.config,
                                                           ranks_here, true, splits.memory_bytes());
  ct::train::masked_lm_model<Policy> model(config, static_cast<std::uint64_t>(args.seed));
  ct::examples::load_pretrained(model, files);
  ct::train::trainer_callbacks callbacks;
  callbacks.save_tokenizer = [&](const fs::path& dir) { ct::train::save_tokenizer(tokenizer, config.max_sequence_length(), dir); };
  ct::train::masked_lm_trainer<Policy>* trainer_ptr = nullptr;
  callbacks.evaluate = [&] { return ct::examples::as_ordered(evaluate(*trainer_ptr, *splits.eval, args)); };
  ct::train::masked_lm_trainer<Policy> trainer(model, ct::cli::to_training_options(args), comm, callbacks);
  trainer_ptr = &trainer;
  std::optional<double> epoch;
  if (args.do_train) {
    ct::examples::say_training_header(trainer.plan_for(splits.train->size()), args,
                                      std::to_string(splits.train->size()) + " sequences", comm.size(), resume);
    const auto result = trainer.train(*splits.train, resume);
    ct::examples::save_training_outputs(trainer, model, tokenizer, args, result, splits.train->size());
    epoch = result.epoch;
  }
  if (args.do_eval) final_evaluation(trainer, *splits.eval, args, epoch);
  say("peak resident memory: " + ct::format_bytes(ct::examples::peak_resident_bytes()) + " (estimated " +
      ct::format_bytes(estimate) + ")");
  comm.barrier();  // the others wait while rank 0 writes
  return 0;
}

int run_mlm(const ct::cli::training_args& args, communicator& comm, std::size_t ranks_here) {
  check_extension(args.train_file, "--train_file");
  check_extension(args.validation_file, "--validation_file");
  if (args.do_predict) say("notice: --do_predict: run_mlm.py predicts nothing; --test_file is not read");
  const auto files = ct::train::find_model_files(ct::cli::to_model_sources(args));
  const auto tokenizer = ct::text::load_tokenizer(files.tokenizer, {.check_config_vocab_size = false});
  const auto config = ct::io::read_bert_config(files.config);
  ct::train::check_model_fits_tokenizer(files, config, tokenizer, /*pairs=*/false);  // one text per sequence
  const std::size_t max_seq_length = ct::examples::sequence_length(args, config, 1024);  // run_mlm.py: min(1024, model_max_length)
  (void)ct::examples::require_run_memory(run_memory(args, config, max_seq_length), files.config, ranks_here, false);
  const auto claim = ct::examples::claim_output_dir(args, comm);
  return ct::examples::run_in_precision(args, [&]<class Policy>() {
    return run<Policy>(args, files, config, tokenizer, max_seq_length, claim.resume, comm, ranks_here);
  });
}

}  // namespace

int main(int argc, char** argv) {
  return ct::examples::program_main(argc, argv, ct::cli::program::mlm, run_mlm);
}
