// cputrain-make-demo-data: writes a demo's data and model directory, so that training a model from scratch needs
// nothing downloaded (the generators: examples/demo/):
//
//   cputrain-make-demo-data --output_dir demo --version_2_with_negative            (--task qa, the default)
//   -> demo/train.json, demo/dev.json            SQuAD files of made-up facts; dev.json's people, towns, companies
//                                                and rivers never occur in train.json
//   cputrain-make-demo-data --task glue --output_dir demo
//   -> demo/{train,dev,test}.csv                 GLUE MRPC's columns sentence1,sentence2,label,idx: a fact and its
//                                                rewording (1) or a near miss (0)
//   cputrain-make-demo-data --task ner --output_dir demo
//   -> demo/{train,dev,test}.json                JSON Lines {"id","tokens","ner_tags"}, IOB2 tags of PER, LOC, ORG
//                                                and MISC
//   cputrain-make-demo-data --task mlm --output_dir demo
//   -> demo/{train,dev}.txt                      one paragraph a line
//
//   and each: demo/model/{config.json,vocab.txt,tokenizer_config.json}, a small BERT to train from scratch.
//
// Dev and test files name people, towns, companies and rivers that train files never do. Without
// --version_2_with_negative every question has an answer and the files say version "1.1". The same flags give the
// same files, byte for byte. Exit status: 0, 1 when a file cannot be written, 2 for a bad command line.
#include <cputrain/core/error.hpp>
#include <cputrain/data/squad_writer.hpp>

#include "demo/demo_glue.hpp"
#include "demo/demo_mlm.hpp"
#include "demo/demo_model.hpp"
#include "demo/demo_ner.hpp"
#include "demo/demo_squad.hpp"

#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>

#include <boost/program_options.hpp>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

using cputrain::usage_error;
using cputrain::demo::demo_split;

/// The sizes of one task's files, by default and as the flags set them.
struct demo_sizes {
  std::size_t train, eval, test;
};

demo_sizes default_sizes(const std::string& task) {
  if (task == "qa") return {cputrain::demo::demo_squad_options().paragraphs, 200, 0};
  if (task == "glue") return {20000, 1000, 500};
  if (task == "ner") return {10000, 1000, 500};
  if (task == "mlm") return {30000, 1000, 0};
  throw usage_error("unknown --task '" + task + "' (qa, glue, ner or mlm)");
}

/// The flag's value, or `fallback` when not given; usage_error when it is 0.
std::size_t count_flag(const po::variables_map& args, const char* name, std::size_t fallback) {
  if (args.count(name) == 0 || args[name].defaulted()) return fallback;
  const auto n = args[name].as<std::size_t>();
  if (n == 0) throw usage_error(std::string("--") + name + " must be at least 1");
  return n;
}

/// The sizes the flags ask for; usage_error for a flag the task has no use for. QA's own flags --train_paragraphs
/// and --eval_paragraphs stay, and --train_examples and --eval_examples count paragraphs there too.
demo_sizes sizes(const std::string& task, const po::variables_map& args) {
  demo_sizes s = default_sizes(task);
  const bool qa = task == "qa";
  for (const char* flag : {"train_paragraphs", "eval_paragraphs", "version_2_with_negative"}) {
    if (!qa && args.count(flag) != 0 && !args[flag].defaulted()) {
      throw usage_error(std::string("--") + flag + " is for --task qa");
    }
  }
  if (s.test == 0 && args.count("test_examples") != 0) throw usage_error("--task " + task + " writes no test file");
  if (qa && args.count("train_examples") != 0 && !args["train_paragraphs"].defaulted()) {
    throw usage_error("--train_examples and --train_paragraphs say the same: give one");
  }
  if (qa && args.count("eval_examples") != 0 && !args["eval_paragraphs"].defaulted()) {
    throw usage_error("--eval_examples and --eval_paragraphs say the same: give one");
  }
  if (qa) {
    s.train = count_flag(args, "train_paragraphs", s.train);
    s.eval = count_flag(args, "eval_paragraphs", s.eval);
  }
  s.train = count_flag(args, "train_examples", s.train);
  s.eval = count_flag(args, "eval_examples", s.eval);
  s.test = count_flag(args, "test_examples", s.test);
  return s;
}

/// The split and seed of each file: dev and test draw from the eval names, with seeds of their own.
template <class Options>
Options file_options(std::uint64_t seed, int file) {
  Options options;
  options.seed = seed + static_cast<std::uint64_t>(file);
  options.split = file == 0 ? demo_split::train : demo_split::eval;
  return options;
}

std::string write_qa(const fs::path& dir, const demo_sizes& s, std::uint64_t seed, bool with_negative) {
  using cputrain::demo::demo_squad_options;
  demo_squad_options train = file_options<demo_squad_options>(seed, 0);
  train.paragraphs = s.train;
  train.unanswerable_fraction = with_negative ? demo_squad_options().unanswerable_fraction : 0.0;
  demo_squad_options eval = file_options<demo_squad_options>(seed, 1);
  eval.paragraphs = s.eval;
  eval.unanswerable_fraction = train.unanswerable_fraction;
  const auto train_set = cputrain::demo::make_demo_squad(train);
  const auto eval_set = cputrain::demo::make_demo_squad(eval);
  cputrain::data::write_squad_json(train_set, dir / "train.json");
  cputrain::data::write_squad_json(eval_set, dir / "dev.json");
  return (dir / "train.json").string() + " (" + std::to_string(train_set.examples.size()) + " questions), " +
         (dir / "dev.json").string() + " (" + std::to_string(eval_set.examples.size()) + " questions)";
}

std::string write_glue(const fs::path& dir, const demo_sizes& s, std::uint64_t seed) {
  using cputrain::demo::demo_glue_options;
  std::string summary;
  const char* names[] = {"train.csv", "dev.csv", "test.csv"};
  const std::size_t counts[] = {s.train, s.eval, s.test};
  for (int file = 0; file < 3; ++file) {
    demo_glue_options options = file_options<demo_glue_options>(seed, file);
    options.pairs = counts[file];
    cputrain::demo::write_demo_glue_csv(cputrain::demo::make_demo_glue(options), dir / names[file]);
    summary += (dir / names[file]).string() + " (" + std::to_string(counts[file]) + " pairs), ";
  }
  return summary.substr(0, summary.size() - 2);
}

std::string write_ner(const fs::path& dir, const demo_sizes& s, std::uint64_t seed) {
  using cputrain::demo::demo_ner_options;
  std::string summary;
  const char* names[] = {"train.json", "dev.json", "test.json"};
  const std::size_t counts[] = {s.train, s.eval, s.test};
  for (int file = 0; file < 3; ++file) {
    demo_ner_options options = file_options<demo_ner_options>(seed, file);
    options.sentences = counts[file];
    cputrain::demo::write_demo_ner_json_lines(cputrain::demo::make_demo_ner(options), dir / names[file]);
    summary += (dir / names[file]).string() + " (" + std::to_string(counts[file]) + " sentences), ";
  }
  return summary.substr(0, summary.size() - 2);
}

std::string write_mlm(const fs::path& dir, const demo_sizes& s, std::uint64_t seed) {
  using cputrain::demo::demo_mlm_options;
  std::string summary;
  const char* names[] = {"train.txt", "dev.txt"};
  const std::size_t counts[] = {s.train, s.eval};
  for (int file = 0; file < 2; ++file) {
    demo_mlm_options options = file_options<demo_mlm_options>(seed, file);
    options.paragraphs = counts[file];
    cputrain::demo::write_demo_mlm_text(cputrain::demo::make_demo_mlm(options), dir / names[file]);
    summary += (dir / names[file]).string() + " (" + std::to_string(counts[file]) + " paragraphs), ";
  }
  return summary.substr(0, summary.size() - 2);
}

/// Writes the task's files and the model directory; returns what it wrote, in words.
std::string write_task(const std::string& task, const po::variables_map& args, const std::string& output_dir,
                       std::uint64_t seed) {
  const demo_sizes s = sizes(task, args);
  const fs::path dir(output_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw cputrain::error("--output_dir " + output_dir + ": cannot create it: " + ec.message());
  std::string summary;
  if (task == "qa") summary = write_qa(dir, s, seed, args.count("version_2_with_negative") != 0);
  if (task == "glue") summary = write_glue(dir, s, seed);
  if (task == "ner") summary = write_ner(dir, s, seed);
  if (task == "mlm") summary = write_mlm(dir, s, seed);
  cputrain::demo::write_demo_model_dir(dir / "model");
  return summary + ", " + (dir / "model").string() + "/ (config.json, vocab.txt, tokenizer_config.json)";
}

po::options_description flags(std::string& task, std::string& output_dir, std::uint64_t& seed) {
  const cputrain::demo::demo_squad_options qa;
  po::options_description options(
      "cputrain-make-demo-data: made-up data for run_qa, run_glue, run_ner or run_mlm, and a small BERT to train");
  options.add_options()("help,h", "show this help")                                                              //
      ("task", po::value(&task)->default_value(task), "qa (SQuAD), glue (MRPC pairs), ner (CoNLL-style) or mlm")  //
      ("output_dir", po::value(&output_dir), "where the data files and model/ go (required)")                     //
      ("train_examples", po::value<std::size_t>(),
       "train file's size (default: qa 8000 paragraphs, glue 20000 pairs, ner 10000 sentences, mlm 30000 "
       "paragraphs)")  //
      ("eval_examples", po::value<std::size_t>(), "dev file's size (default: qa 200, glue 1000, ner 1000, mlm 1000)")  //
      ("test_examples", po::value<std::size_t>(), "test file's size, glue and ner (default 500)")                      //
      ("train_paragraphs", po::value<std::size_t>()->default_value(qa.paragraphs), "qa: paragraphs in train.json")    //
      ("eval_paragraphs", po::value<std::size_t>()->default_value(200), "qa: paragraphs in dev.json")                 //
      ("seed", po::value(&seed)->default_value(seed), "the train file's seed (dev uses the next one, test the one after)")  //
      ("version_2_with_negative", "qa: add unanswerable questions (SQuAD v2.0)");
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  std::string task = "qa", output_dir;
  std::uint64_t seed = cputrain::demo::demo_squad_options().seed;
  const po::options_description options = flags(task, output_dir, seed);
  po::variables_map args;
  try {
    po::store(po::parse_command_line(argc, argv, options), args);
    po::notify(args);
  } catch (const po::error& e) {
    std::cerr << "cputrain-make-demo-data: " << e.what() << "\n" << options;
    return 2;
  }
  if (args.count("help")) {
    std::cout << options;
    return 0;
  }
  try {
    default_sizes(task);  // an unknown task is told before a missing directory
    if (output_dir.empty()) throw usage_error("--output_dir is required");
    const std::string summary = write_task(task, args, output_dir, seed);
    std::cout << "cputrain-make-demo-data: " << summary << "\n";
  } catch (const usage_error& e) {
    std::cerr << "cputrain-make-demo-data: " << e.what() << "\n" << options;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cputrain-make-demo-data: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
