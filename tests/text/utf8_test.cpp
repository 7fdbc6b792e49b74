#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cputrain/text/utf8.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace utf8_test {

using namespace cputrain::text;

TEST_CASE("decode_utf8 reads one to four byte sequences and rejects invalid ones") {
  const std::string s = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80";  // a é 中 😀
  char32_t cp = 0;
  CHECK(decode_utf8(s, 0, cp) == 1);
  CHECK(cp == U'a');
  CHECK(decode_utf8(s, 1, cp) == 2);
  CHECK(cp == 0xE9);
  CHECK(decode_utf8(s, 3, cp) == 3);
  CHECK(cp == 0x4E2D);
  CHECK(decode_utf8(s, 6, cp) == 4);
  CHECK(cp == 0x1F600);
  CHECK(decode_utf8(s, 2, cp) == 0);                      // a continuation byte alone
  CHECK(decode_utf8("\xC0\xAF", 0, cp) == 0);             // overlong '/'
  CHECK(decode_utf8("\xED\xA0\x80", 0, cp) == 0);         // a surrogate
  CHECK(decode_utf8("\xF4\x90\x80\x80", 0, cp) == 0);     // above U+10FFFF
  CHECK(decode_utf8(std::string_view("\xE4\xB8", 2), 0, cp) == 0);  // cut short
}

TEST_CASE("find_invalid_utf8 gives the byte position of the first bad sequence") {
  CHECK(find_invalid_utf8("plain ascii") == std::string_view::npos);
  CHECK(find_invalid_utf8("caf\xC3\xA9") == std::string_view::npos);
  CHECK(find_invalid_utf8("caf\xC3") == 3);
  CHECK(find_invalid_utf8("ok \xFF then") == 3);
}

TEST_CASE("append_utf8 round-trips through decode_utf8 at every length") {
  for (const char32_t cp : {U'\x01', U'\x7F', char32_t{0x80}, char32_t{0x7FF}, char32_t{0x800}, char32_t{0xFFFF},
                            char32_t{0x10000}, char32_t{0x10FFFF}}) {
    std::string s;
    append_utf8(s, cp);
    char32_t back = 0;
    CHECK(decode_utf8(s, 0, back) == s.size());
    CHECK(back == cp);
  }
}

TEST_CASE("code point counts and byte positions agree with the encoding") {
  const std::string s = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80z";
  CHECK(count_code_points(s) == 5);
  CHECK(byte_position(s, 0) == 0);
  CHECK(byte_position(s, 1) == 1);
  CHECK(byte_position(s, 2) == 3);
  CHECK(byte_position(s, 3) == 6);
  CHECK(byte_position(s, 4) == 10);
  CHECK(byte_position(s, 5) == s.size());
  CHECK_THROWS_AS(byte_position(s, 6), text_error);
}

TEST_CASE("lead bytes give a character's length, and stepping back finds where the previous character starts") {
  const std::string s = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80z";  // a é 中 😀 z
  const std::vector<std::size_t> starts{0, 1, 3, 6, 10};
  std::vector<std::size_t> walked;
  for (std::size_t pos = 0; pos < s.size(); pos += utf8_char_length(s, pos)) walked.push_back(pos);
  CHECK(walked == starts);
  std::size_t continuations = 0;
  for (const char c : s) continuations += is_utf8_continuation(c);
  CHECK(continuations == s.size() - starts.size());
  CHECK(previous_char_start(s, s.size()) == 10);
  CHECK(previous_char_start(s, 10) == 6);
  CHECK(previous_char_start(s, 6) == 3);
  CHECK(previous_char_start(s, 3) == 1);
  CHECK(previous_char_start(s, 1) == 0);
  CHECK(previous_char_start(s, 10, 8) == 8);  // never before the floor
}

}  // namespace utf8_test
