// cputrain-bench-tokenizer: how fast one of cputrain's tokenizers encodes a file of texts on one thread, in MB/s of
// UTF-8 input (MB = 10^6 bytes), for side-by-side comparison with Hugging Face's Rust tokenizer on the same texts
// (benchmarks/tokenizer_speed.cjs; benchmarks/compare_tokenizers.py runs both and prints the table).
//   cputrain-bench-tokenizer --family wordpiece|byte_level_bpe|unigram --tokenizer PATH --texts FILE [--repeats N]
//       [--json]
// wordpiece: PATH is a BERT vocab.txt or a model directory (load_bert_tokenizer); byte_level_bpe: PATH is a
// tokenizer.json (load_byte_level_bpe); unigram: PATH is a SentencePiece Unigram tokenizer.json, XLM-RoBERTa's
// family (load_unigram). Each family is loaded through its own reader, not load_tokenizer, so that a file of
// another family is refused rather than measured under the wrong name. FILE holds one text per line; empty lines
// are skipped. Every text is encoded once per repeat (no special tokens added), the token_sequence cleared between
// texts; the best repeat's time is kept. Prints one human line and, with --json, one JSON object as the last line
// (the same keys as the node side): family, side, texts, bytes, tokens, repeats, seconds, mb_s, tokens_per_s.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/text/load_bert_tokenizer.hpp"
#include "cputrain/text/byte_level_bpe_json.hpp"
#include "cputrain/text/unigram_json.hpp"

namespace po = boost::program_options;
namespace ct = cputrain;

namespace {

struct settings {
  std::string family, tokenizer, texts;
  int repeats = 5;
  bool json = false;
};

struct measurement {
  std::size_t texts = 0;
  std::size_t bytes = 0;
  std::size_t tokens = 0;  // of one pass over the texts
  double seconds = std::numeric_limits<double>::infinity();  // best pass
};

/// The lines of `path`, empty ones left out.
std::vector<std::string> read_texts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ct::usage_error("--texts " + path + ": cannot open");
  std::vector<std::string> texts;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) texts.push_back(std::move(line));
  if (texts.empty()) throw ct::usage_error("--texts " + path + ": no texts (every line is empty)");
  return texts;
}

/// Encodes every text once per repeat with `encode(text, tokens)` on this thread; keeps the best pass.
template <class Encode>
measurement measure(const std::vector<std::string>& texts, int repeats, Encode&& encode) {
  using clock_type = std::chrono::steady_clock;
  measurement m;
  m.texts = texts.size();
  for (const auto& t : texts) m.bytes += t.size();
  ct::text::token_sequence tokens;
  for (int r = 0; r < repeats; ++r) {
    std::size_t count = 0;
    const auto start = clock_type::now();
    for (const auto& t : texts) {
      tokens.clear();
      encode(std::string_view(t), tokens);
      count += tokens.size();
    }
    m.seconds = std::min(m.seconds, std::chrono::duration<double>(clock_type::now() - start).count());
    m.tokens = count;
  }
  return m;
}

measurement run_family(const settings& s, const std::vector<std::string>& texts) {
  if (s.family == "wordpiece") {
    const auto tokenizer = ct::text::load_bert_tokenizer(s.tokenizer);
    return measure(texts, s.repeats, [&](std::string_view t, auto& out) { tokenizer.encode(t, out); });
  }
  if (s.family == "unigram") {
    const auto file = ct::text::load_unigram(s.tokenizer);
    return measure(texts, s.repeats, [&](std::string_view t, auto& out) { file.tokenizer.encode(t, out); });
  }
  const auto file = ct::text::load_byte_level_bpe(s.tokenizer);
  return measure(texts, s.repeats, [&](std::string_view t, auto& out) { file.tokenizer.encode(t, out); });
}

void report(const settings& s, const measurement& m) {
  const double mb = static_cast<double>(m.bytes) / 1e6;
  std::printf("cputrain %s: %zu texts, %.3f MB, %zu tokens; best of %d: %.4f s, %.2f MB/s, %.0f tokens/s\n",
              s.family.c_str(), m.texts, mb, m.tokens, s.repeats, m.seconds, mb / m.seconds,
              static_cast<double>(m.tokens) / m.seconds);
  if (!s.json) return;
  nlohmann::json out;
  out["family"] = s.family;
  out["side"] = "cputrain";
  out["texts"] = m.texts;
  out["bytes"] = m.bytes;
  out["tokens"] = m.tokens;
  out["repeats"] = s.repeats;
  out["seconds"] = m.seconds;
  out["mb_s"] = mb / m.seconds;
  out["tokens_per_s"] = static_cast<double>(m.tokens) / m.seconds;
  std::cout << out.dump() << std::endl;
}

po::options_description describe(settings& s) {
  po::options_description options("cputrain-bench-tokenizer options");
  options.add_options()("help,h", "show this help")(
      "family", po::value(&s.family), "wordpiece, byte_level_bpe or unigram (required)")(
      "tokenizer", po::value(&s.tokenizer),
      "wordpiece: vocab.txt or model directory; byte_level_bpe, unigram: tokenizer.json (required)")(
      "texts", po::value(&s.texts), "file with one text per line (required)")(
      "repeats", po::value(&s.repeats)->default_value(s.repeats), "passes over the texts; the best is kept")(
      "json", po::bool_switch(&s.json), "print one JSON line at the end");
  return options;
}

void check(const settings& s) {
  if (s.family != "wordpiece" && s.family != "byte_level_bpe" && s.family != "unigram")
    throw ct::usage_error("--family must be wordpiece, byte_level_bpe or unigram");
  if (s.tokenizer.empty()) throw ct::usage_error("--tokenizer PATH is required");
  if (s.texts.empty()) throw ct::usage_error("--texts PATH is required");
  if (s.repeats < 1) throw ct::usage_error("--repeats must be a positive integer");
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  const auto options = describe(s);
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return 0;
    }
    check(s);
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-tokenizer: " << e.what() << "\n" << options << "\n";
    return 2;
  }
  try {
    report(s, run_family(s, read_texts(s.texts)));
    return 0;
  } catch (const ct::usage_error& e) {
    std::cerr << "cputrain-bench-tokenizer: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-tokenizer: " << e.what() << "\n";
    return 1;
  }
}
