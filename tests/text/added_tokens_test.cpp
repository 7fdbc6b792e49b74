// Tests for include/cputrain/text/added_tokens.hpp. Hugging Face's own behaviour on real tokenizers is checked by
// byte_level_bpe_test and unigram_tokenizer_test against its outputs; here the matcher's rules, one at a time, and
// many tokens against a plain search.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cputrain/text/added_tokens.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace added_tokens_test {

using namespace cputrain::text;

added_token plain(std::string content, std::int32_t id) {
  added_token t;
  t.content = std::move(content);
  t.id = id;
  return t;
}

// Segments as "text" or "[index]" pieces, for readable comparisons.
std::string render(std::string_view text, const std::vector<text_segment>& segments) {
  std::string out;
  for (const auto& s : segments) {
    if (s.token < 0)
      out += "'" + std::string(text.substr(s.begin, s.end - s.begin)) + "' ";
    else
      out += "[" + std::to_string(s.token) + "] ";
  }
  return out;
}

std::string split(const added_token_matcher& m, std::string_view text) {
  std::vector<text_segment> out;
  m.split(text, out);
  return render(text, out);
}

TEST_CASE("the leftmost match wins, then the longest token there, then the first token of equal text") {
  const added_token_matcher m({plain("<s", 10), plain("<s>", 11), plain("s>x", 12), plain("<s>", 13)});
  CHECK(split(m, "a<s>xb") == "'a' [1] 'xb' ");
  CHECK(split(m, "<s<s>") == "[0] [1] ");
  CHECK(split(m, "s>x") == "[2] ");
  CHECK(split(m, "no tokens") == "'no tokens' ");
  CHECK(split(m, "") == "");
}

TEST_CASE("single_word matches only between non-word characters, and a refused match is not searched again") {
  added_token word = plain("ab", 1);
  word.single_word = true;
  const added_token_matcher m({word, plain("b", 2)});
  CHECK(split(m, "ab ab") == "[0] ' ' [0] ");
  CHECK(split(m, "xab-ab") == "'xab-' [0] ");         // "ab" inside a word is skipped whole: its "b" is not taken
  CHECK(split(m, "\xC3\xA9" "ab") == "'\xC3\xA9" "ab' ");  // é is a letter
  CHECK(split(m, "_ab") == "'_ab' ");                  // so is '_' for the reference
}

TEST_CASE("lstrip and rstrip take the whitespace beside the token, which belongs to no segment") {
  added_token mask = plain("<mask>", 5);
  mask.lstrip = true;
  mask.rstrip = true;
  const added_token_matcher m({mask});
  std::vector<text_segment> out;
  const std::string text = "a \xE3\x80\x80<mask>  b";  // an ideographic space before it
  m.split(text, out);
  REQUIRE(out.size() == 3);
  CHECK(out[0].begin == 0);
  CHECK(out[0].end == 1);
  CHECK(out[1].token == 0);
  CHECK(out[1].begin == 5);
  CHECK(out[1].end == 11);
  CHECK(out[1].outer_begin == 1);
  CHECK(out[1].outer_end == 13);
  CHECK(out[2].begin == 13);
}

// The rule the matcher follows, by trying every token at every position.
std::vector<text_segment> plain_search(const std::vector<added_token>& tokens, std::string_view text) {
  std::vector<text_segment> out;
  std::size_t plain_start = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    int best = -1;
    for (std::size_t i = 0; i < tokens.size(); ++i)
      if (text.substr(pos).starts_with(tokens[i].content) &&
          (best < 0 || tokens[i].content.size() > tokens[static_cast<std::size_t>(best)].content.size()))
        best = static_cast<int>(i);
    if (best < 0) {
      ++pos;
      continue;
    }
    const auto end = pos + tokens[static_cast<std::size_t>(best)].content.size();
    if (pos > plain_start)
      out.push_back({static_cast<std::uint32_t>(plain_start), static_cast<std::uint32_t>(pos), -1});
    out.push_back({static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(end), best});
    pos = plain_start = end;
  }
  if (text.size() > plain_start)
    out.push_back({static_cast<std::uint32_t>(plain_start), static_cast<std::uint32_t>(text.size()), -1});
  return out;
}

TEST_CASE("with thousands of tokens sharing prefixes, the segments are those of a search of every token") {
  std::vector<added_token> tokens;
  for (int i = 0; i < 4000; ++i) tokens.push_back(plain("<extra_id_" + std::to_string(i) + ">", 1000 + i));
  for (const char* extra : {"<extra_id_", "<extra", "<", "id", "_1", "99>"})
    tokens.push_back(plain(extra, static_cast<std::int32_t>(tokens.size())));
  const added_token_matcher m(tokens);
  std::mt19937 random(7);
  const std::vector<std::string> pieces{"<extra_id_", "1", "2", "9", ">", "<", "id", "_", " ", "x", "<extra"};
  std::size_t tokens_found = 0;
  for (int round = 0; round < 60; ++round) {
    std::string text;
    for (int k = 0; k < 40; ++k) text += pieces[random() % pieces.size()];
    std::vector<text_segment> got;
    m.split(text, got);
    const auto expected = plain_search(tokens, text);
    REQUIRE(render(text, got) == render(text, expected));
    for (const auto& s : got) tokens_found += s.token >= 0;
  }
  CHECK(tokens_found > 600);  // the texts do hit the tokens, long and short
}

}  // namespace added_tokens_test
