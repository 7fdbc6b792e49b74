// cputrain-tokenize: reads lines of text and prints, for each, the BERT WordPiece ids and the offsets of every
// token as one JSON line, so a user can compare cputrain's tokenizer with their own:
//
//   echo "Hello, world!" | cputrain-tokenize --vocab bert-base-uncased/vocab.txt
//   {"ids":[7592,1010,2088,999],"offsets":[[0,5],[5,6],[7,12],[12,13]]}
//
// Offsets are [begin, end) in code points of the line (what Python's str and Hugging Face's offset_mapping
// count); --byte-offsets adds them in bytes too. --model DIR reads vocab.txt and tokenizer_config.json from a
// Hugging Face model directory. Exit status: 0, 1 for unreadable input (invalid UTF-8 names the line), 2 for a
// bad command line.
#include <cputrain/text/load_bert_tokenizer.hpp>

#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

namespace po = boost::program_options;

int main(int argc, char** argv) {
  po::options_description options("cputrain-tokenize: BERT WordPiece ids and offsets of each input line, as JSON");
  std::string vocab, model, input;
  options.add_options()("help,h", "show this help")                                                       //
      ("vocab", po::value(&vocab), "a BERT vocab.txt")                                                     //
      ("model", po::value(&model), "a Hugging Face model directory (vocab.txt, tokenizer_config.json)")  //
      ("input", po::value(&input), "read this file instead of standard input")                            //
      ("cased", "keep case and accents (do_lower_case false)")                                            //
      ("add-special-tokens", "put [CLS] before and [SEP] after each line, with offsets [0, 0]")           //
      ("byte-offsets", "also print the offsets in bytes");
  po::variables_map args;
  try {
    po::store(po::parse_command_line(argc, argv, options), args);
    po::notify(args);
  } catch (const po::error& e) {
    std::cerr << "cputrain-tokenize: " << e.what() << "\n" << options;
    return 2;
  }
  if (args.count("help")) {
    std::cout << options;
    return 0;
  }
  if (vocab.empty() == model.empty()) {
    std::cerr << "cputrain-tokenize: give exactly one of --vocab FILE or --model DIR\n" << options;
    return 2;
  }

  std::optional<cputrain::text::bert_tokenizer> tokenizer;
  try {
    cputrain::text::bert_tokenizer_options defaults;
    if (args.count("cased")) defaults.lower_case = false;
    tokenizer.emplace(cputrain::text::load_bert_tokenizer(vocab.empty() ? model : vocab, defaults));
    if (args.count("cased")) {  // the flag wins over tokenizer_config.json
      auto forced = tokenizer->options();
      forced.lower_case = false;
      tokenizer.emplace(tokenizer->vocab(), forced);
    }
  } catch (const cputrain::error& e) {
    std::cerr << "cputrain-tokenize: " << e.what() << "\n";
    return 2;
  }

  std::ifstream file;
  if (!input.empty()) {
    file.open(input, std::ios::binary);
    if (!file) {
      std::cerr << "cputrain-tokenize: --input " << input << ": cannot open\n";
      return 2;
    }
  }
  std::istream& in = input.empty() ? std::cin : file;
  const std::string source = input.empty() ? "standard input" : input;
  const bool specials = args.count("add-special-tokens") > 0;
  const bool bytes = args.count("byte-offsets") > 0;

  cputrain::text::token_sequence tokens;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    tokens.clear();
    if (specials) tokens.push_back(tokenizer->vocab().cls_id(), {}, {});
    try {
      tokenizer->encode(line, tokens);
    } catch (const cputrain::error& e) {
      std::cout.flush();
      std::cerr << "cputrain-tokenize: " << source << ": line " << number << ": " << e.what() << "\n";
      return 1;
    }
    if (specials) tokens.push_back(tokenizer->vocab().sep_id(), {}, {});
    nlohmann::ordered_json out;
    out["ids"] = tokens.ids;
    auto& offsets = out["offsets"] = nlohmann::ordered_json::array();
    for (const auto& s : tokens.offsets) offsets.push_back({s.begin, s.end});
    if (bytes) {
      auto& byte_offsets = out["byte_offsets"] = nlohmann::ordered_json::array();
      for (const auto& s : tokens.byte_offsets) byte_offsets.push_back({s.begin, s.end});
    }
    std::cout << out.dump() << "\n";
  }
  if (in.bad()) {
    std::cerr << "cputrain-tokenize: " << source << ": read error\n";
    return 1;
  }
  return 0;
}
