// Tests for examples/demo/demo_glue.hpp: near misses change what demo_glue_options allows and nothing else — the
// year by default (the numbers differ, the words do not), the relation with swap_relations (the same numbers and
// names, another verb), a person with "P" — and options that allow no near miss are refused.
#include <catch2/catch.hpp>

#include <cctype>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"
#include "demo/demo_glue.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace demo_glue_test {

namespace demo = cputrain::demo;

namespace {

// The sentence's numbers and its words of letters, each as a sorted multiset.
struct content {
  std::multiset<std::string> numbers, words;
  bool operator==(const content&) const = default;
};

content content_of(const std::string& sentence) {
  content c;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    (std::isdigit(static_cast<unsigned char>(token[0])) ? c.numbers : c.words).insert(token);
    token.clear();
  };
  for (const char ch : sentence) {
    if (std::isalnum(static_cast<unsigned char>(ch))) token += ch;
    else flush();
  }
  flush();
  return c;
}

std::vector<demo::demo_glue_pair> pairs_with(const std::string& values, bool swap_relations) {
  demo::demo_glue_options options;
  options.pairs = 400;
  options.reworded_fraction = 0.0;  // the same wording: what differs is what the near miss changed
  options.near_miss_values = values;
  options.swap_relations = swap_relations;
  return demo::make_demo_glue(options);
}

}  // namespace

TEST_CASE("demo_glue: a near miss changes the year by default and nothing else") {
  std::size_t near_misses = 0;
  for (const auto& p : pairs_with("Y", false)) {
    const content a = content_of(p.sentence1), b = content_of(p.sentence2);
    CHECK(a.words == b.words);
    if (p.label == 1) {
      CHECK(p.sentence1 == p.sentence2);
    } else {
      ++near_misses;
      CHECK(a.numbers != b.numbers);
    }
  }
  CHECK(near_misses > 100);  // 40% of 400
}

namespace {

// Every near miss keeps the numbers and changes a word (a name, or the relation's verb).
void check_near_misses_change_words(const std::string& values, bool swap_relations) {
  std::size_t near_misses = 0;
  for (const auto& p : pairs_with(values, swap_relations)) {
    if (p.label == 1) continue;
    ++near_misses;
    const content a = content_of(p.sentence1), b = content_of(p.sentence2);
    CHECK(a.numbers == b.numbers);
    CHECK(a.words != b.words);
  }
  CHECK(near_misses > 100);
}

}  // namespace

TEST_CASE("demo_glue: with swap_relations alone a near miss keeps every value and changes the relation") {
  check_near_misses_change_words("", true);
}

TEST_CASE("demo_glue: a near miss of a person keeps the numbers and changes a name") {
  check_near_misses_change_words("P", false);
}

TEST_CASE("demo_glue: options that allow no near miss are refused naming them") {
  demo::demo_glue_options options;
  options.near_miss_values = "";
  options.swap_relations = false;
  CHECK_THROWS_AS(demo::make_demo_glue(options), cputrain::usage_error);
  options.near_miss_values = "X";
  CHECK_THROWS_WITH(demo::make_demo_glue(options), Catch::Contains("near-miss values \"X\""));
}

}  // namespace demo_glue_test
