// cputrain-tokenize: reads lines of text and prints, for each, the token ids and offsets as one JSON line, with the
// tokenizer of any model family cputrain reads (WordPiece, byte-level BPE, Unigram), so a user can compare it with
// their own:
//
//   echo "Hello, world!" | cputrain-tokenize --vocab bert-base-uncased/vocab.txt
//   {"ids":[7592,1010,2088,999],"offsets":[[0,5],[5,6],[7,12],[12,13]]}
//
// Offsets are [begin, end) in code points of the line (what Python's str and Hugging Face's offset_mapping
// count); --byte-offsets adds them in bytes too. --model DIR reads a Hugging Face model directory as AutoTokenizer
// does (tokenizer.json, else vocab.txt, vocab.json + merges.txt or sentencepiece.bpe.model, with
// tokenizer_config.json). --pair reads "first<TAB>second" lines, --words takes each line as words split at
// whitespace (is_split_into_words); --max-length truncates (--truncation, --truncation-side as Hugging Face's),
// --pad-to pads; --all adds type ids, the special-tokens mask, sequence ids, word ids and the attention mask. Exit
// status: 0, 1 for unreadable input (invalid
// UTF-8 or a line without a tab under --pair names the line), 2 for a bad command line or tokenizer files.
#include <cputrain/text/load_bert_tokenizer.hpp>
#include <cputrain/text/load_tokenizer.hpp>
#include <cputrain/text/tokenizer.hpp>

#include <fstream>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

namespace po = boost::program_options;
namespace text = cputrain::text;

namespace {

struct line_options {
  bool specials = false, pair = false, words = false, all = false, bytes = false;
  std::optional<text::truncation_options> truncation;
  std::size_t pad_to = 0;
};

nlohmann::ordered_json spans(const std::vector<text::text_span>& spans) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& s : spans) out.push_back({s.begin, s.end});
  return out;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

/// One line as the options ask; throws cputrain::error for input the tokenizer refuses.
text::encoding encode_line(const text::tokenizer& tokenizer, const std::string& line, const line_options& o) {
  const auto one = [&](const std::string& text) {
    if (o.words && o.truncation) return tokenizer.encode_words(split_words(text), *o.truncation, o.specials);
    if (o.words) return tokenizer.encode_words(split_words(text), o.specials);
    if (o.truncation) return tokenizer.encode(text, *o.truncation, o.specials);
    return tokenizer.encode(text, o.specials);
  };
  const auto two = [&](const std::string& first, const std::string& second) {
    if (o.words && o.truncation)
      return tokenizer.encode_words_pair(split_words(first), split_words(second), *o.truncation, o.specials);
    if (o.words) return tokenizer.encode_words_pair(split_words(first), split_words(second), o.specials);
    if (o.truncation) return tokenizer.encode_pair(first, second, *o.truncation, o.specials);
    return tokenizer.encode_pair(first, second, o.specials);
  };
  text::encoding e;
  if (!o.pair) {
    e = one(line);
  } else {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) throw cputrain::usage_error("--pair: no tab between the two texts");
    e = two(line.substr(0, tab), line.substr(tab + 1));
  }
  if (o.pad_to > 0) {
    text::padding_options padding;
    padding.length = o.pad_to;
    tokenizer.pad(std::span(&e, 1), padding);
  }
  return e;
}

nlohmann::ordered_json to_json(const text::encoding& e, const line_options& o) {
  nlohmann::ordered_json out;
  out["ids"] = e.ids;
  out["offsets"] = spans(e.offsets);
  if (o.bytes) out["byte_offsets"] = spans(e.byte_offsets);
  if (o.all) {
    out["type_ids"] = e.type_ids;
    out["special_tokens_mask"] = e.special_tokens_mask;
    out["sequence_ids"] = e.sequence_ids;
    out["word_ids"] = e.word_ids;
    out["attention_mask"] = e.attention_mask;
  }
  return out;
}

/// The tokenizer the command line names; nullopt after a message when it cannot be loaded.
std::optional<text::tokenizer> load(const std::string& vocab, const std::string& model, bool cased) {
  try {
    if (!vocab.empty()) {
      text::bert_tokenizer_options defaults;
      defaults.lower_case = !cased;
      return text::tokenizer(text::load_bert_tokenizer(vocab, defaults));
    }
    text::tokenizer t = text::load_tokenizer(model);
    if (!cased) return t;
    const auto* wordpiece = std::get_if<text::bert_tokenizer>(&t.get());
    if (wordpiece == nullptr) {
      std::cerr << "cputrain-tokenize: --cased applies to BERT's WordPiece setup (BertNormalizer); " << model
                << " has a " << t.family() << " tokenizer whose tokenizer.json sets how it treats case\n";
      return std::nullopt;
    }
    auto forced = wordpiece->options();  // the flag wins over tokenizer_config.json
    forced.lower_case = false;
    return text::tokenizer(text::tokenizer::pipeline(text::bert_tokenizer(wordpiece->vocab(), forced)), t.specials());
  } catch (const cputrain::error& e) {
    std::cerr << "cputrain-tokenize: " << e.what() << "\n";
    return std::nullopt;
  }
}

}  // namespace

/// --max-length with --truncation and --truncation-side; false after a message for a value it does not take.
bool truncation_from(const po::variables_map& args, line_options& o) {
  const std::string strategy = args["truncation"].as<std::string>(), side = args["truncation-side"].as<std::string>();
  text::truncation_options t;
  if (strategy == "only_first") t.strategy = text::truncation_strategy::only_first;
  else if (strategy == "only_second") t.strategy = text::truncation_strategy::only_second;
  else if (strategy != "longest_first") {
    std::cerr << "cputrain-tokenize: --truncation " << strategy << ": expected longest_first, only_first or only_second\n";
    return false;
  }
  if (side == "left") t.side = text::text_side::left;
  else if (side != "right") {
    std::cerr << "cputrain-tokenize: --truncation-side " << side << ": expected right or left\n";
    return false;
  }
  if (!args.count("max-length")) return true;
  t.max_length = args["max-length"].as<std::size_t>();
  o.truncation = t;
  return true;
}

int main(int argc, char** argv) {
  po::options_description options("cputrain-tokenize: token ids and offsets of each input line, as JSON");
  std::string vocab, model, input;
  options.add_options()("help,h", "show this help")                                                                //
      ("vocab", po::value(&vocab), "a BERT vocab.txt")                                                              //
      ("model", po::value(&model), "a Hugging Face model directory, or its tokenizer.json")                         //
      ("input", po::value(&input), "read this file instead of standard input")                                     //
      ("cased", "keep case and accents (WordPiece: do_lower_case false)")                                          //
      ("add-special-tokens", "add the model's special tokens ([CLS] ... [SEP], <s> ... </s>), offsets [0, 0]")      //
      ("pair", "each line is two texts separated by a tab, encoded as a pair")                                     //
      ("words", "each line is words split at whitespace (is_split_into_words)")                                    //
      ("max-length", po::value<std::size_t>(), "truncate to this many tokens, special tokens included")          //
      ("truncation", po::value<std::string>()->default_value("longest_first"),
       "with --max-length: longest_first, only_first or only_second")                                              //
      ("truncation-side", po::value<std::string>()->default_value("right"), "with --max-length: right or left")   //
      ("pad-to", po::value<std::size_t>(), "pad each line to this many tokens (attention mask 0)")                //
      ("all", "also print type_ids, special_tokens_mask, sequence_ids, word_ids and attention_mask")              //
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
  line_options o;
  if (!truncation_from(args, o)) return 2;
  if (args.count("pad-to")) o.pad_to = args["pad-to"].as<std::size_t>();
  const auto tokenizer = load(vocab, model, args.count("cased") > 0);
  if (!tokenizer) return 2;

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
  o.specials = args.count("add-special-tokens") > 0;
  o.pair = args.count("pair") > 0;
  o.words = args.count("words") > 0;
  o.all = args.count("all") > 0;
  o.bytes = args.count("byte-offsets") > 0;

  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    try {
      std::cout << to_json(encode_line(*tokenizer, line, o), o).dump() << "\n";
    } catch (const cputrain::error& e) {
      std::cout.flush();
      std::cerr << "cputrain-tokenize: " << source << ": line " << number << ": " << e.what() << "\n";
      return 1;
    }
  }
  if (in.bad()) {
    std::cerr << "cputrain-tokenize: " << source << ": read error\n";
    return 1;
  }
  return 0;
}
