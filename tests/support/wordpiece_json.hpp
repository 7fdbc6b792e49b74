// bert-base-uncased's tokenizer.json for a token list, as scripts/bert_tokenizer_json.cjs builds it for the
// reference: tests write it next to a vocabulary to load WordPiece the way current Hub repositories ship it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cputrain::test {

inline nlohmann::json wordpiece_tokenizer_json(const std::vector<std::string>& tokens) {
  using nlohmann::json;
  json vocab = json::object();
  for (std::size_t id = 0; id < tokens.size(); ++id) vocab[tokens[id]] = id;
  json added = json::array();
  for (const char* name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    if (vocab.contains(name))
      added.push_back({{"id", vocab[name]}, {"content", name}, {"single_word", false}, {"lstrip", false},
                       {"rstrip", false}, {"normalized", false}, {"special", true}});
  const auto special = [](const char* name) { return json{{"SpecialToken", {{"id", name}, {"type_id", 0}}}}; };
  const auto sequence = [](const char* id, int type) { return json{{"Sequence", {{"id", id}, {"type_id", type}}}}; };
  json sep1 = special("[SEP]");
  sep1["SpecialToken"]["type_id"] = 1;
  const auto entry = [&](const char* name) {
    return json{{"id", name}, {"ids", json::array({vocab[name]})}, {"tokens", json::array({name})}};
  };
  return json{
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer",
       {{"type", "BertNormalizer"}, {"clean_text", true}, {"handle_chinese_chars", true}, {"strip_accents", nullptr},
        {"lowercase", true}}},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", json::array({special("[CLS]"), sequence("A", 0), special("[SEP]")})},
        {"pair", json::array({special("[CLS]"), sequence("A", 0), special("[SEP]"), sequence("B", 1), sep1})},
        {"special_tokens", {{"[CLS]", entry("[CLS]")}, {"[SEP]", entry("[SEP]")}}}}},
      {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
      {"model",
       {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"},
        {"max_input_chars_per_word", 100}, {"vocab", vocab}}}};
}

/// The lines of a vocab.txt.
inline std::vector<std::string> read_lines(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

inline void write_json(const std::filesystem::path& file, const nlohmann::json& value) {
  std::ofstream out(file, std::ios::binary);
  out << value.dump();
}

}  // namespace cputrain::test
