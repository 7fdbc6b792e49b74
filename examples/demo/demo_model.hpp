// The demo's model files: demo_vocabulary() (vocab.txt's lines: every word the generator writes is one token or
// a few), demo_bert_config() (the small BERT that learns the demo), and write_demo_model_dir(dir, config)
// (config.json, vocab.txt and tokenizer_config.json: a model directory to train from scratch).
#pragma once

#include <cstddef>
#include <filesystem>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/io/atomic_file.hpp"
#include "cputrain/io/bert_config_json.hpp"
#include "cputrain/io/io_error.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "demo/demo_names.hpp"
#include "demo/demo_task_words.hpp"
#include "demo/demo_words.hpp"

namespace cputrain::demo {

namespace detail {

/// Tokens in the order first added, each once.
class demo_token_list {
 public:
  void add(std::string token) {
    if (seen_.insert(token).second) tokens_.push_back(std::move(token));
  }
  /// The words of `text`, lower-cased, its {X} placeholders left out.
  void add_words(std::string_view text) {
    std::string word;
    for (std::size_t i = 0; i <= text.size(); ++i) {
      const char c = i < text.size() ? text[i] : ' ';
      if (c == '{' && i + 2 < text.size() && text[i + 2] == '}') {
        i += 2;
        continue;
      }
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        word += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      } else if (!word.empty()) {
        add(std::move(word));
        word.clear();
      }
    }
  }
  std::vector<std::string> take() { return std::move(tokens_); }

 private:
  std::vector<std::string> tokens_;
  std::set<std::string> seen_;
};

/// Every word of the sentences, products, kin, company kinds and questions, then of the GLUE and NER wordings (no
/// word of theirs is new so far: they leave vocab.txt as the QA demo had it).
inline void demo_add_wording_words(demo_token_list& tokens) {
  const std::span<const std::string_view> wordings[] = {
      demo_birth_sentences,     demo_death_sentences,     demo_sibling_sentences,
      demo_founding_sentences,  demo_move_sentences,      demo_employees_sentences,
      demo_river_sentences,     demo_population_sentences, demo_filler_sentences,
      demo_products,            demo_kin,                 demo_company_kinds,
      demo_q_born_when,         demo_q_born_where,        demo_q_died_when,
      demo_q_died_where,        demo_q_sibling_who,
      demo_q_founder_who,       demo_q_company_which,     demo_q_founded_when,
      demo_q_made_what,         demo_q_moved_where,       demo_q_moved_when,
      demo_q_employees,         demo_q_river_length,      demo_q_river_town,
      demo_q_river_which,       demo_q_population,
      demo_glue_birth,          demo_glue_death,          demo_glue_move,
      demo_glue_sibling,        demo_glue_founding,       demo_glue_employees,
      demo_glue_river,          demo_glue_population,     demo_ner_sentences};
  for (const auto list : wordings) {
    for (const std::string_view text : list) tokens.add_words(text);
  }
}

/// Every first and last name whole (lower-cased), then the start pieces and "##" endings of the other names.
inline void demo_add_names(demo_token_list& tokens) {
  const auto lower = [](std::string s) {
    s[0] = static_cast<char>(s[0] - 'A' + 'a');
    return s;
  };
  for (std::size_t k = 0; k < demo_names::first_count; ++k) tokens.add(lower(demo_names::first_name(k)));
  for (std::size_t k = 0; k < demo_names::last_count; ++k) tokens.add(lower(demo_names::last_name(k)));
  const std::span<const std::string_view> starts[] = {demo_town_starts, demo_company_starts, demo_river_starts};
  for (const auto list : starts) {
    for (const std::string_view piece : list) tokens.add(std::string(piece));
  }
  const std::span<const std::string_view> ends[] = {demo_town_ends, demo_company_ends, demo_river_ends};
  for (const auto list : ends) {
    for (const std::string_view piece : list) tokens.add("##" + std::string(piece));
  }
}

/// The years whole, 10-99, and "##" digits and digit pairs.
inline void demo_add_numbers(demo_token_list& tokens) {
  for (int year = demo_first_year; year <= demo_last_year; ++year) tokens.add(std::to_string(year));
  for (int n = 10; n <= 99; ++n) tokens.add(std::to_string(n));
  for (char c = '0'; c <= '9'; ++c) tokens.add("##" + std::string(1, c));
  for (int n = 0; n <= 99; ++n) {
    std::string pair = "##";
    pair += static_cast<char>('0' + n / 10);
    pair += static_cast<char>('0' + n % 10);
    tokens.add(std::move(pair));
  }
}

}  // namespace detail

/// The demo's vocab.txt, line by line: [PAD] [UNK] [CLS] [SEP] [MASK] at ids 0-4, then punctuation, digits and
/// letters (each also as a "##" continuation, so that any ASCII text tokenizes without [UNK]), every word of the
/// wordings, every first and last name whole, the pieces of town, company and river names, the years 1800-1999
/// whole, and pairs of digits ("48", "##00"), which halve the length of other numbers while each token stays common.
[[nodiscard]] inline std::vector<std::string> demo_vocabulary() {
  detail::demo_token_list tokens;
  for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) tokens.add(special);
  for (const char c : std::string_view(".,'?-&();:!\"/")) tokens.add(std::string(1, c));
  for (char c = '0'; c <= '9'; ++c) tokens.add(std::string(1, c));
  for (char c = 'a'; c <= 'z'; ++c) tokens.add(std::string(1, c));
  detail::demo_add_wording_words(tokens);
  detail::demo_add_names(tokens);
  detail::demo_add_numbers(tokens);
  for (char c = 'a'; c <= 'z'; ++c) tokens.add("##" + std::string(1, c));
  return tokens.take();
}

/// The demo model: a small BERT sized for demo_vocabulary(), without dropout and with initializer_range 0.05
/// (both measured on the demo data: docs/training.md ("The demo")).
[[nodiscard]] inline nn::bert_config demo_bert_config() {
  nn::bert_config config;
  config.vocab_size = static_cast<int>(demo_vocabulary().size());
  config.hidden_size = 128;
  config.num_hidden_layers = 2;
  config.num_attention_heads = 2;
  config.intermediate_size = 512;
  config.max_position_embeddings = 256;
  config.type_vocab_size = 2;
  config.hidden_dropout_prob = 0.0f;
  config.attention_probs_dropout_prob = 0.0f;
  config.initializer_range = 0.05f;
  return config;
}

/// Writes a model directory without weights — config.json (`config`), vocab.txt (demo_vocabulary()) and
/// tokenizer_config.json (lower case, model_max_length = max_position_embeddings) — for training from scratch.
/// Creates `dir` as needed; each file is written atomically. usage_error if `config` does not validate or its
/// vocab_size is smaller than the vocabulary; io_error on failure to write.
inline void write_demo_model_dir(const std::filesystem::path& dir, const nn::bert_config& config = demo_bert_config()) {
  const std::vector<std::string> vocab = demo_vocabulary();
  config.validate();
  if (static_cast<std::size_t>(config.vocab_size) < vocab.size()) {
    throw usage_error("write_demo_model_dir: vocab_size = " + std::to_string(config.vocab_size) +
                      " is smaller than the demo vocabulary (" + std::to_string(vocab.size()) + " tokens)");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw io::io_error(dir.string() + ": cannot create the model directory: " + ec.message());
  io::write_bert_config(config, dir / "config.json");
  std::string lines;
  for (const std::string& token : vocab) {
    lines += token;
    lines += '\n';
  }
  io::write_file_atomically(dir / "vocab.txt", lines);
  const nlohmann::ordered_json tokenizer{{"do_lower_case", true},
                                         {"model_max_length", config.max_position_embeddings},
                                         {"tokenizer_class", "BertTokenizer"}};
  io::write_file_atomically(dir / "tokenizer_config.json", tokenizer.dump(2) + "\n");
}

}  // namespace cputrain::demo

