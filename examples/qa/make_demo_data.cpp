// cputrain-make-demo-data: writes the demo's data and model directory, so that training a QA model from scratch
// needs nothing downloaded:
//
//   cputrain-make-demo-data --output_dir demo --version_2_with_negative
//   -> demo/train.json, demo/dev.json            SQuAD files of made-up facts (examples/demo/); dev.json's
//                                                people, towns, companies and rivers never occur in train.json
//      demo/model/{config.json,vocab.txt,tokenizer_config.json}
//                                                a small BERT to train from scratch (no weights)
//
// Without --version_2_with_negative every question has an answer and the files say version "1.1". The same flags
// give the same files, byte for byte. Exit status: 0, 1 when a file cannot be written, 2 for a bad command line.
#include <cputrain/core/error.hpp>
#include <cputrain/data/squad_writer.hpp>

#include "demo/demo_model.hpp"
#include "demo/demo_squad.hpp"

#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>

#include <boost/program_options.hpp>

namespace po = boost::program_options;

int main(int argc, char** argv) {
  const cputrain::demo::demo_squad_options defaults;
  po::options_description options("cputrain-make-demo-data: SQuAD files of made-up facts and a small BERT to train");
  std::string output_dir;
  std::size_t train_paragraphs = defaults.paragraphs;
  std::size_t eval_paragraphs = 200;
  std::uint64_t seed = defaults.seed;
  options.add_options()("help,h", "show this help")                                                              //
      ("output_dir", po::value(&output_dir), "where train.json, dev.json and model/ go (required)")               //
      ("train_paragraphs", po::value(&train_paragraphs)->default_value(train_paragraphs), "paragraphs in train.json")  //
      ("eval_paragraphs", po::value(&eval_paragraphs)->default_value(eval_paragraphs), "paragraphs in dev.json")       //
      ("seed", po::value(&seed)->default_value(seed), "the data's seed (dev.json uses the next one)")              //
      ("version_2_with_negative", "add unanswerable questions (SQuAD v2.0)");
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
  if (output_dir.empty()) {
    std::cerr << "cputrain-make-demo-data: --output_dir is required\n" << options;
    return 2;
  }
  if (train_paragraphs == 0 || eval_paragraphs == 0) {
    std::cerr << "cputrain-make-demo-data: --" << (train_paragraphs == 0 ? "train_paragraphs" : "eval_paragraphs")
              << " must be at least 1\n";
    return 2;
  }

  try {
    namespace fs = std::filesystem;
    const fs::path dir(output_dir);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw cputrain::error("--output_dir " + output_dir + ": cannot create it: " + ec.message());

    cputrain::demo::demo_squad_options train;
    train.seed = seed;
    train.paragraphs = train_paragraphs;
    train.unanswerable_fraction = args.count("version_2_with_negative") ? defaults.unanswerable_fraction : 0.0;
    cputrain::demo::demo_squad_options eval = train;
    eval.seed = seed + 1;
    eval.split = cputrain::demo::demo_split::eval;
    eval.paragraphs = eval_paragraphs;

    const auto train_set = cputrain::demo::make_demo_squad(train);
    const auto eval_set = cputrain::demo::make_demo_squad(eval);
    cputrain::data::write_squad_json(train_set, dir / "train.json");
    cputrain::data::write_squad_json(eval_set, dir / "dev.json");
    cputrain::demo::write_demo_model_dir(dir / "model");
    std::cout << "cputrain-make-demo-data: " << (dir / "train.json").string() << " (" << train_set.examples.size()
              << " questions), " << (dir / "dev.json").string() << " (" << eval_set.examples.size()
              << " questions), " << (dir / "model").string() << "/ (config.json, vocab.txt, tokenizer_config.json)\n";
  } catch (const cputrain::usage_error& e) {
    std::cerr << "cputrain-make-demo-data: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cputrain-make-demo-data: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
