// Tests for include/cputrain/text/tokenizer_json_writer.hpp: a byte-level tokenizer written out and read back
// encodes exactly as before, in every layout and with its options.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/text/load_tokenizer.hpp"
#include "cputrain/text/tokenizer_json_writer.hpp"
#include "support/temp_dir.hpp"
#include "support/wordpiece_json.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace tokenizer_json_writer_test {

using namespace cputrain::text;

namespace {

std::string data(const std::string& name) { return std::string(CPUTRAIN_TEXT_TEST_DATA) + "/" + name; }

tokenizer round_trip(const tokenizer& t) {
  const cputrain::test::temp_dir dir;
  const auto& bpe = std::get<byte_level_bpe_tokenizer>(t.get());
  std::ofstream(dir.path() / "tokenizer.json") << to_tokenizer_json(bpe, t.specials()).dump();
  return load_tokenizer(dir.path());
}

void check_same(const tokenizer& a, const tokenizer& b) {
  const std::vector<std::pair<std::string, std::string>> pairs{
      {"Hello world", "How are you?"}, {" leading <mask> and<s>", "Crème brûlée 👩‍👩‍👧 北京"}, {"", "x"}};
  for (const auto& [first, second] : pairs) {
    INFO(first << " | " << second);
    const encoding ea = a.encode_pair(first, second), eb = b.encode_pair(first, second);
    CHECK(ea.ids == eb.ids);
    CHECK(ea.type_ids == eb.type_ids);
    CHECK(ea.word_ids == eb.word_ids);
    CHECK(ea.offsets == eb.offsets);
  }
  CHECK(a.specials().layout == b.specials().layout);
  if (a.specials().layout != special_layout::none) {  // cls and sep mean nothing without a layout that adds them
    CHECK(a.specials().cls == b.specials().cls);
    CHECK(a.specials().sep == b.specials().sep);
  }
  CHECK(a.specials().pad == b.specials().pad);
  CHECK(a.specials().mask == b.specials().mask);
  CHECK(a.id_count() == b.id_count());
}

}  // namespace

TEST_CASE("a byte-level tokenizer written as tokenizer.json reads back the same, merges in rank order") {
  const tokenizer roberta = load_tokenizer(data("gpt2_cut"));
  const tokenizer again = round_trip(roberta);
  check_same(roberta, again);
  const auto& original = std::get<byte_level_bpe_tokenizer>(roberta.get()).model().merges();
  const auto& written = std::get<byte_level_bpe_tokenizer>(again.get()).model().merges();
  CHECK(written == original);
  CHECK(written.size() == 3000);

  // Other options and layouts survive too: a prefix space and no trimming, GPT-2's plain layout.
  const cputrain::test::temp_dir dir;
  std::filesystem::copy_file(data("gpt2_cut/tokenizer.json"), dir.path() / "tokenizer.json");
  cputrain::test::write_json(dir.path() / "tokenizer_config.json",
                             nlohmann::json{{"add_prefix_space", true}, {"trim_offsets", false}});
  const tokenizer prefixed = load_tokenizer(dir.path());
  CHECK(std::get<byte_level_bpe_tokenizer>(prefixed.get()).options().add_prefix_space);
  check_same(prefixed, round_trip(prefixed));
  special_tokens no_wrapping = prefixed.specials();  // <pad> and <mask> are still found by name
  no_wrapping.layout = special_layout::none;
  const tokenizer plain(prefixed.get(), no_wrapping);
  check_same(plain, round_trip(plain));
}

}  // namespace tokenizer_json_writer_test
