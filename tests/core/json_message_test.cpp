// Tests for include/cputrain/core/json_message.hpp: hostile text shown in messages is quoted, keeps valid UTF-8
// when cut, and is cut at all when long.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "cputrain/core/json_message.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace json_message_test {

using cputrain::json_text_for_message;
using cputrain::quote_for_message;
using cputrain::utf8_prefix;
using json = nlohmann::json;

namespace {

// Whether `s` is well-formed UTF-8 (nlohmann's parser is the judge: a JSON string of it must parse).
bool valid_utf8(const std::string& s) { return nlohmann::json::accept("\"" + s + "\""); }

}  // namespace

TEST_CASE("utf8_prefix cuts back to a character boundary, never inside one") {
  const std::string e_acute = "\xc3\xa9";  // 2 bytes
  const std::string euro = "\xe2\x82\xac";  // 3 bytes
  CHECK(utf8_prefix("abc", 5) == "abc");
  CHECK(utf8_prefix("abc", 2) == "ab");
  CHECK(utf8_prefix(e_acute + e_acute, 3) == e_acute);
  CHECK(utf8_prefix("a" + euro, 2) == "a");
  CHECK(utf8_prefix("a" + euro, 3) == "a");
  CHECK(utf8_prefix("a" + euro, 4) == "a" + euro);
  CHECK(utf8_prefix(euro, 0).empty());
}

TEST_CASE("json_text_for_message cuts a long value at a character, with ..., and keeps a short one whole") {
  CHECK(json_text_for_message(nlohmann::json(12)) == "12");
  CHECK(json_text_for_message(nlohmann::json{{"a", 1}}) == "{\"a\":1}");
  CHECK(json_text_for_message(nlohmann::ordered_json::array({1, 2})) == "[1,2]");
  // "a" then "é" x 60 dumps as 123 bytes, `"a` then 2-byte characters: byte 77 is the second byte of the 38th,
  // which a cut after 77 bytes would split.
  std::string long_text = "a";
  for (int i = 0; i < 60; ++i) long_text += "\xc3\xa9";
  const std::string shown = json_text_for_message(nlohmann::json(long_text));
  INFO(shown);
  CHECK(shown.size() <= 80);
  REQUIRE(shown.ends_with("..."));
  const std::string kept = shown.substr(0, shown.size() - 3);
  CHECK(kept.size() == 76);  // `"a` + 37 characters
  CHECK(valid_utf8(kept.substr(1)));
  CHECK_FALSE(valid_utf8(kept.substr(1) + "\xc3"));  // the judge can say no
  CHECK(json_text_for_message(nlohmann::json(std::string(78, 'x'))).size() == 80);  // 80 bytes: shown whole
  std::string cut_short(1, '"');
  cut_short.append(76, 'x').append("...");
  CHECK(json_text_for_message(nlohmann::json(std::string(79, 'x'))) == cut_short);
}

TEST_CASE("quote_for_message escapes quotes and control characters and replaces invalid UTF-8") {
  CHECK(quote_for_message<json>("plain") == "\"plain\"");
  CHECK(quote_for_message<json>("a\"b\nc") == "\"a\\\"b\\nc\"");
  CHECK(quote_for_message<json>(std::string("x\xff" "y")) == "\"x\xef\xbf\xbdy\"");  // U+FFFD, no throw
  CHECK(quote_for_message<json>(std::string(100, 'q')).size() == 102);             // no limit unless asked
  CHECK(quote_for_message<json>("\xc3\xa9\xc3\xa9", 3) == "\"\xc3\xa9\"...");     // cut at a character, then ...
  CHECK(quote_for_message<json>("abc", 3) == "\"abc\"");
}

}  // namespace json_message_test
