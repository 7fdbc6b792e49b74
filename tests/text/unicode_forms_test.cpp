// Tests for include/cputrain/text/unicode_forms.hpp: the characters and changes of each form on cases worked out
// by hand from the reference crate's rules (decomposition pieces after the first are insertions; a composite takes
// its starter's change plus the mark's, minus one). unigram_tokenizer_test compares whole encodings with Hugging
// Face's.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/text/normalizer_steps.hpp"
#include "cputrain/text/unicode_forms.hpp"
#include "support/token_hash.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace unicode_forms_test {

using namespace cputrain::text;
using changes = std::vector<std::pair<char32_t, int>>;

changes of(const std::string& text, unicode_form form) {
  std::vector<char_change> out;
  unicode_form_changes(text, form, out);
  changes pairs;
  for (const auto& c : out) pairs.emplace_back(c.c, c.change);
  return pairs;
}

TEST_CASE("decomposition inserts every piece after the first and orders the marks by combining class") {
  CHECK(of("\xC3\xA9", unicode_form::nfd) == changes{{U'e', 0}, {0x301, 1}});                   // é
  CHECK(of("\xEF\xAC\x81", unicode_form::nfkd) == changes{{U'f', 0}, {U'i', 1}});              // ﬁ
  CHECK(of("\xEF\xAC\x81", unicode_form::nfd) == changes{{0xFB01, 0}});                        // no canonical one
  // a, acute (class 230), dot below (220): the dot goes first, each mark keeping its own change.
  CHECK(of("a\xCC\x81\xCC\xA3", unicode_form::nfd) == changes{{U'a', 0}, {0x323, 0}, {0x301, 0}});
  CHECK(of("\xEA\xB0\x81", unicode_form::nfd) == changes{{0x1100, 0}, {0x1161, 1}, {0x11A8, 1}});  // 각
}

TEST_CASE("composition folds each mark into the starter before it, unless blocked or excluded") {
  CHECK(of("e\xCC\x81", unicode_form::nfc) == changes{{0xE9, -1}});
  CHECK(of("\xC3\xA9", unicode_form::nfc) == changes{{0xE9, 0}});
  // After the dot below composes (ạ), no composite takes the acute, which follows.
  CHECK(of("a\xCC\x81\xCC\xA3", unicode_form::nfc) == changes{{0x1EA1, -1}, {0x301, 0}});
  // Hangul jamo compose algorithmically: L + V + T, two removals.
  CHECK(of("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", unicode_form::nfc) == changes{{0xAC01, -2}});
  // KA + NUKTA stays two characters: U+0958 is excluded from composition.
  CHECK(of("\xE0\xA4\x95\xE0\xA4\xBC", unicode_form::nfc) == changes{{0x915, 0}, {0x93C, 0}});
  // NFKC: ﬁ's pieces are starters that compose with nothing; the acute after it composes with the i.
  CHECK(of("\xEF\xAC\x81\xCC\x81", unicode_form::nfkc) == changes{{U'f', 0}, {0xED, 0}});
  // A mark with no starter before it is passed on as it is.
  CHECK(of("\xCC\x81" "a", unicode_form::nfc) == changes{{0x301, 0}, {U'a', 0}});
}

TEST_CASE("lower case is Rust's char::to_lowercase: one character each, but for the dotted capital I") {
  std::vector<char_change> out;
  lowercase_changes("A\xC4\xB0\xC3\x89\xCE\xA3z", out);  // A İ É Σ z
  changes pairs;
  for (const auto& c : out) pairs.emplace_back(c.c, c.change);
  CHECK(pairs == changes{{U'a', 0}, {U'i', 0}, {0x307, 1}, {0xE9, 0}, {0x3C3, 0}, {U'z', 0}});
}

TEST_CASE("every code point is decomposed, ordered, composed and lower-cased as by Hugging Face's normalizers") {
  // The hashes of scripts/make_unigram_reference.cjs forms: each block of 4096 code points, each code point c as
  // "a" + c + U+0301 + c + " ", through each normalizer alone.
  std::ifstream in(std::string(CPUTRAIN_TEXT_TEST_DATA) + "/unicode_forms_sweep.json");
  REQUIRE(in);
  const auto sweep = nlohmann::json::parse(in);
  const auto block = sweep["block"].get<char32_t>();
  const std::vector<std::pair<const char*, normalizer_chain::step>> forms{
      {"NFC", unicode_form::nfc},        {"NFD", unicode_form::nfd},          {"NFKC", unicode_form::nfkc},
      {"NFKD", unicode_form::nfkd},      {"Lowercase", lowercase_step{}},     {"StripAccents", strip_accents_step{}}};
  for (const auto& [name, step] : forms) {
    const normalizer_chain chain({step});
    const auto& hashes = sweep["forms"][name];
    REQUIRE(hashes.size() == 0x110000 / block);
    for (std::size_t b = 0; b < hashes.size(); ++b) {
      std::string text;
      for (char32_t c = static_cast<char32_t>(b) * block; c < (static_cast<char32_t>(b) + 1) * block; ++c) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        text += 'a';
        append_utf8(text, c);
        append_utf8(text, 0x301);
        append_utf8(text, c);
        text += ' ';
      }
      normalized_text normalized(text);
      chain.apply(normalized);
      INFO(name << ", code points from U+" << std::hex << b * block);
      CHECK(cputrain::test::bytes_hash(normalized.str()) == hashes[b].get<std::uint32_t>());
    }
  }
}

}  // namespace unicode_forms_test
