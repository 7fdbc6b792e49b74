#include <catch2/catch.hpp>

#include "cputrain/text/char_classes.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace char_classes_test {

using namespace cputrain::text;

// The answers below are Hugging Face's tokenizer's (scripts/make_tokenizer_reference.cjs): where they differ from
// current Unicode, it is because the reference classifies with Unicode 8.0.

TEST_CASE("punctuation is ASCII punctuation and the P categories of the reference") {
  for (const char32_t c : {U'!', U'/', U':', U'@', U'[', U'`', U'{', U'~', U'$', U'+', U'^'}) CHECK(is_bert_punctuation(c));
  for (const char32_t c : {U'a', U'0', U' ', U'\t'}) CHECK_FALSE(is_bert_punctuation(c));
  CHECK(is_bert_punctuation(0x3002));   // 。 ideographic full stop
  CHECK(is_bert_punctuation(0x00BF));   // ¿
  CHECK(is_bert_punctuation(0x2E42));   // Unicode 7.0, punctuation in both
  CHECK_FALSE(is_bert_punctuation(0x2E53));  // Unicode 14.0 Po: unknown to the reference
  CHECK(is_bert_punctuation(0x166D));   // was Po until Unicode 12 made it So
  CHECK_FALSE(is_bert_punctuation(0x20AC));  // € is Sc
}

TEST_CASE("control characters are Cc Cf and Co but not tab newline return or unassigned code points") {
  for (const char32_t c : {char32_t{0x01}, char32_t{0x07}, char32_t{0x0B}, char32_t{0x1F}, char32_t{0x7F},
                           char32_t{0x85}, char32_t{0x200B}, char32_t{0xFEFF}, char32_t{0xE000}, char32_t{0xAD}})
    CHECK(is_bert_control(c));
  for (const char32_t c : {U'\t', U'\n', U'\r', U'a', U' ', char32_t{0x0378}}) CHECK_FALSE(is_bert_control(c));
  CHECK_FALSE(is_bert_control(0x0890));  // Cf since Unicode 14: unassigned for the reference
}

TEST_CASE("whitespace is the Unicode White_Space set") {
  for (const char32_t c : {U' ', U'\t', U'\n', U'\r', char32_t{0x0B}, char32_t{0xA0}, char32_t{0x2003},
                           char32_t{0x2028}, char32_t{0x3000}, char32_t{0x202F}})
    CHECK(is_bert_whitespace(c));
  for (const char32_t c : {U'a', char32_t{0x200B}, char32_t{0x180E}, char32_t{0xFEFF}}) CHECK_FALSE(is_bert_whitespace(c));
}

TEST_CASE("non-spacing marks follow the reference") {
  CHECK(is_bert_nonspacing_mark(0x0301));
  CHECK(is_bert_nonspacing_mark(0x0323));
  CHECK_FALSE(is_bert_nonspacing_mark(U'e'));
  CHECK_FALSE(is_bert_nonspacing_mark(0x0D81));  // Mn since Unicode 13: unassigned for the reference
  CHECK_FALSE(is_bert_nonspacing_mark(0x0903));  // Mc, a spacing mark
}

TEST_CASE("Chinese characters are the reference's CJK ranges, gap included") {
  CHECK(is_bert_chinese_char(0x4E2D));
  CHECK(is_bert_chinese_char(0x3400));
  CHECK(is_bert_chinese_char(0xF900));
  CHECK(is_bert_chinese_char(0x2B81F));
  CHECK_FALSE(is_bert_chinese_char(0x2B820));  // the reference leaves 2B820-2B91F out
  CHECK(is_bert_chinese_char(0x2B920));
  CHECK_FALSE(is_bert_chinese_char(0x3042));   // Hiragana
  CHECK_FALSE(is_bert_chinese_char(0xAC00));   // Hangul
}

}  // namespace char_classes_test
