// Tests for include/cputrain/text/byte_trie.hpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cputrain/text/byte_trie.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace byte_trie_test {

using cputrain::text::byte_trie;

byte_trie trie_of(const std::vector<std::string>& keys, byte_trie::repeated_key repeats) {
  return byte_trie(keys.size(), [&](std::size_t i) -> std::string_view { return keys[i]; }, repeats);
}

TEST_CASE("find gives each key's index, and nothing for prefixes, extensions or other strings") {
  const std::vector<std::string> keys{"ab", "a", "abc", "b", std::string("\xC3\xA9\0x", 4), "\xFF"};
  const auto trie = trie_of(keys, byte_trie::repeated_key::keeps_last);
  for (std::size_t i = 0; i < keys.size(); ++i) CHECK(trie.find(keys[i]) == static_cast<std::int32_t>(i));
  CHECK_FALSE(trie.find("abcd"));
  CHECK_FALSE(trie.find("c"));
  CHECK_FALSE(trie.find("\xC3\xA9"));  // a prefix of a key that holds a zero byte
  CHECK_FALSE(trie.find(""));
  CHECK_FALSE(byte_trie().find("a"));
  CHECK(byte_trie().longest_prefix("a") == std::pair<std::int32_t, std::size_t>{-1, 0});
}

TEST_CASE("a key given twice keeps its first or its last index, as asked") {
  const std::vector<std::string> keys{"x", "yy", "x", "z", "x"};
  CHECK(trie_of(keys, byte_trie::repeated_key::keeps_first).find("x") == 0);
  CHECK(trie_of(keys, byte_trie::repeated_key::keeps_last).find("x") == 4);
  CHECK(trie_of(keys, byte_trie::repeated_key::keeps_first).find("yy") == 1);
}

TEST_CASE("longest_prefix takes the longest non-empty key the text starts with") {
  const std::vector<std::string> keys{"", "<s", "<s>", "<sep>", "s"};
  const auto trie = trie_of(keys, byte_trie::repeated_key::keeps_last);
  using match = std::pair<std::int32_t, std::size_t>;
  CHECK(trie.longest_prefix("<s>tail") == match{2, 3});
  CHECK(trie.longest_prefix("<se") == match{1, 2});  // "<sep>" is cut short: the longest complete one
  CHECK(trie.longest_prefix("<sep>>") == match{3, 5});
  CHECK(trie.longest_prefix("x<s>") == match{-1, 0});  // only at the start, and the empty key is no match
  CHECK(trie.longest_prefix("") == match{-1, 0});
}

TEST_CASE("walking a byte at a time meets every key that starts the text, shortest first") {
  const std::vector<std::string> keys{"abc", "a", "b", "ab", "abd"};
  const auto trie = trie_of(keys, byte_trie::repeated_key::keeps_last);
  std::vector<std::int32_t> met;
  std::uint32_t node = byte_trie::root;
  for (const char c : std::string("abcz")) {
    node = trie.child(node, static_cast<unsigned char>(c));
    if (node == byte_trie::no_node) break;
    if (trie.value(node) >= 0) met.push_back(trie.value(node));
  }
  CHECK(met == std::vector<std::int32_t>{1, 3, 0});
  CHECK(trie.child(byte_trie::root, 'z') == byte_trie::no_node);
}

TEST_CASE("every one of many keys sharing long prefixes is found with its own index") {
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back("<extra_id_" + std::to_string(i) + ">");
  for (int i = 0; i < 300; ++i) keys.push_back(std::string(static_cast<std::size_t>(i % 7 + 1), static_cast<char>(i)));
  const auto trie = trie_of(keys, byte_trie::repeated_key::keeps_first);
  std::size_t found = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto first = static_cast<std::size_t>(std::find(keys.begin(), keys.end(), keys[i]) - keys.begin());
    found += trie.find(keys[i]) == static_cast<std::int32_t>(first);
  }
  CHECK(found == keys.size());
  CHECK_FALSE(trie.find("<extra_id_3000>"));
  CHECK_FALSE(trie.find("<extra_id_12"));
}

}  // namespace byte_trie_test
