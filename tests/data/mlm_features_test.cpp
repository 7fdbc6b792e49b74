#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <tbb/global_control.h>

#include "cputrain/data/mlm_features.hpp"
#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/load_tokenizer.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "support/checks.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace mlm_features_test {

using namespace cputrain;
using namespace cputrain::data;
using cputrain::test::says;

namespace {

using ids = std::vector<std::int32_t>;
using bytes = std::vector<std::uint8_t>;
using labels = std::vector<std::int64_t>;
constexpr std::int64_t X = -100;

ids vec(std::span<const std::int32_t> s) { return ids(s.begin(), s.end()); }

// [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, a..j 5..14.
text::bert_tokenizer letters() {
  return text::bert_tokenizer(
      text::vocabulary::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\nc\nd\ne\nf\ng\nh\ni\nj\n", "letters"));
}

mlm_features make(const std::vector<std::string>& texts, std::size_t max_seq_length, bool line_by_line = false,
                  std::size_t texts_per_group = 1000) {
  mlm_feature_options o;
  o.max_seq_length = max_seq_length;
  o.line_by_line = line_by_line;
  o.texts_per_group = texts_per_group;
  return make_mlm_features(texts, letters(), o);
}

std::vector<std::size_t> all(const mlm_features& f) {
  std::vector<std::size_t> out(f.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = i;
  return out;
}

mlm_masking masking(double p, double mask, double random, std::uint64_t seed = 42) {
  mlm_masking m;
  m.mlm_probability = p;
  m.mask_replace_prob = mask;
  m.random_replace_prob = random;
  m.seed = seed;
  return m;
}

}  // namespace

TEST_CASE("group_texts concatenates the texts with their special tokens and drops the remainder") {
  // [CLS] a b c [SEP] | [CLS] d e [SEP] | [CLS] f g h i [SEP]: 15 tokens, 3 blocks of 4, 3 tokens dropped.
  const std::vector<std::string> texts{"a b c", "d e", "f g h i"};
  const auto f = make(texts, 4);
  REQUIRE(f.size() == 3);
  CHECK_FALSE(f.line_by_line());
  CHECK(vec(f.input_ids(0)) == ids{2, 5, 6, 7});
  CHECK(vec(f.input_ids(1)) == ids{3, 2, 8, 9});
  CHECK(vec(f.input_ids(2)) == ids{3, 2, 10, 11});
  CHECK(f.special_tokens_mask(0) == bytes{1, 0, 0, 0});
  CHECK(f.special_tokens_mask(1) == bytes{1, 1, 0, 0});
  CHECK(f.special_tokens_mask(2) == bytes{1, 1, 0, 0});
  CHECK(make(texts, 4, false, 0).size() == 3);  // one group: the same
  CHECK(make(texts, 5).size() == 3);            // 15 = 3 x 5: nothing dropped
  CHECK(vec(make(texts, 5).input_ids(2)) == ids{10, 11, 12, 13, 3});
  CHECK(make(texts, 16).empty());  // fewer tokens than one block: no feature (the current run_mlm's rule)
}

TEST_CASE("group_texts drops a remainder per group of texts_per_group texts as datasets' map batches do") {
  // Group 1: [CLS] a b c [SEP] [CLS] d e [SEP] (9): two blocks, [SEP] dropped. Group 2: [CLS] f g h i [SEP] (6):
  // one block, i [SEP] dropped.
  const auto f = make({"a b c", "d e", "f g h i"}, 4, false, 2);
  REQUIRE(f.size() == 3);
  CHECK(vec(f.input_ids(0)) == ids{2, 5, 6, 7});
  CHECK(vec(f.input_ids(1)) == ids{3, 2, 8, 9});
  CHECK(vec(f.input_ids(2)) == ids{2, 10, 11, 12});
  CHECK(f.special_tokens_mask(2) == bytes{1, 0, 0, 0});
  // An empty row still brings [CLS] [SEP], as the tokenizer gives them for "".
  const auto e = make({"a", "", "b"}, 3);
  REQUIRE(e.size() == 2);
  CHECK(vec(e.input_ids(0)) == ids{2, 5, 3});
  CHECK(vec(e.input_ids(1)) == ids{2, 3, 2});
}

TEST_CASE("line_by_line keeps each line that is not blank as one sequence cut to max_seq_length") {
  // Python's isspace(): tab, U+00A0 and U+3000 are blank too.
  const std::vector<std::string> lines{"a b c", "", "   ", "\t", "d e f g h i j", "\xc2\xa0", "\xe3\x80\x80", "a"};
  const auto f = make(lines, 5, true);
  REQUIRE(f.size() == 3);
  CHECK(f.line_by_line());
  CHECK(vec(f.input_ids(0)) == ids{2, 5, 6, 7, 3});
  CHECK(vec(f.input_ids(1)) == ids{2, 8, 9, 10, 3});  // truncated: [SEP] kept
  CHECK(vec(f.input_ids(2)) == ids{2, 5, 3});
  CHECK(f.length(2) == 3);
  CHECK(f.special_tokens_mask(1) == bytes{1, 0, 0, 0, 1});
  CHECK_THROWS_MATCHES(make(lines, 2, true), usage_error, says("besides the special tokens"));
}

TEST_CASE("a masked batch pads with -100 labels and never chooses special tokens or padding") {
  const auto f = make({"a b c", "d e f g h i j", "a"}, 5, true);
  const std::vector<std::size_t> order{2, 0};
  const auto b = f.batch(order, mlm_padding::longest, masking(1.0, 1.0, 0.0), 7);
  REQUIRE(b.batch == 2);
  REQUIRE(b.seq == 5);
  CHECK(b.input_ids == ids{2, 4, 3, 0, 0, 2, 4, 4, 4, 3});
  CHECK(b.attention_mask == ids{1, 1, 1, 0, 0, 1, 1, 1, 1, 1});
  CHECK(b.token_type_ids == ids(10, 0));
  CHECK(b.labels == labels{X, 5, X, X, X, X, 5, 6, 7, X});
  CHECK_NOTHROW(b.validate(15, 2, 512));
  // All chosen, none replaced: the inputs stay and the labels are the inputs.
  const auto kept = f.batch(order, mlm_padding::max_length, masking(1.0, 0.0, 0.0), 7);
  CHECK(kept.seq == 5);
  CHECK(kept.input_ids == ids{2, 5, 3, 0, 0, 2, 5, 6, 7, 3});
  CHECK(kept.labels == labels{X, 5, X, X, X, X, 5, 6, 7, X});
  const auto none = f.batch(order, mlm_padding::longest, masking(0.0, 0.8, 0.1), 7);
  CHECK(none.labels == labels(10, X));
  CHECK_THROWS_MATCHES(f.batch(order, mlm_padding::longest, masking(1.5, 0.8, 0.1), 7), usage_error,
                       says("must each be in [0, 1]"));
  CHECK_THROWS_MATCHES(f.batch(order, mlm_padding::longest, masking(0.15, 0.8, 0.3), 7), usage_error,
                       says("must not exceed 1"));
}

TEST_CASE("masking chooses mlm_probability of the tokens then replaces 80 percent by the mask 10 by random ids") {
  // 30005 ids so that a random replacement is rarely the original id: the three outcomes can be told apart.
  std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  for (int w = 0; w < 30000; ++w) vocab.append("w").append(std::to_string(w)).append("\n");
  const text::bert_tokenizer tok(text::vocabulary::parse(vocab, "words"));
  std::vector<std::string> texts;
  for (int t = 0; t < 2000; ++t) {  // 98 words + [CLS] [SEP]: 200,000 tokens in 400 blocks of 500
    std::string line;
    for (int w = 0; w < 98; ++w) line.append("w").append(std::to_string((t * 98 + w) * 7 % 30000)).append(" ");
    texts.push_back(line);
  }
  mlm_feature_options o;
  o.max_seq_length = 500;
  const auto f = make_mlm_features(texts, tok, o);
  REQUIRE(f.size() == 400);
  REQUIRE(f.id_count() == 30005);
  const auto b = f.batch(all(f), mlm_padding::longest, mlm_masking{}, 1);
  std::size_t ordinary = 0, chosen = 0, masked = 0, random = 0, kept = 0;
  std::int32_t lowest = 30005, highest = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const auto original = f.input_ids(i);
    const auto special = f.special_tokens_mask(i);
    for (std::size_t p = 0; p < original.size(); ++p) {
      const std::int32_t in = b.input_ids[i * 500 + p];
      const std::int64_t label = b.labels[i * 500 + p];
      if (special[p] != 0 || label == X) {
        CHECK((label == X && in == original[p]));  // specials are never chosen; unchosen tokens stay
        ordinary += special[p] == 0;
        continue;
      }
      ++ordinary;
      ++chosen;
      CHECK(label == original[p]);
      if (in == f.mask_id()) ++masked;
      else if (in == original[p]) ++kept;
      else {
        ++random;
        lowest = std::min(lowest, in);
        highest = std::max(highest, in);
      }
    }
  }
  REQUIRE(ordinary == 196000);
  const double c = static_cast<double>(chosen);
  CHECK(c / static_cast<double>(ordinary) == Approx(0.15).margin(0.01));
  CHECK(static_cast<double>(masked) / c == Approx(0.8).margin(0.01));
  CHECK(static_cast<double>(random) / c == Approx(0.1).margin(0.01));
  CHECK(static_cast<double>(kept) / c == Approx(0.1).margin(0.01));
  CHECK((lowest >= 0 && lowest < 1000));  // random ids span [0, len(tokenizer))
  CHECK((highest > 29000 && highest < 30005));
}

TEST_CASE("a masked batch is the same for the same seed and key and differs for another key or seed") {
  std::vector<std::string> texts;
  for (int t = 0; t < 50; ++t) texts.push_back(std::string("a b c d e f g h i j").substr(0, 1 + (t % 10) * 2));
  const auto f = make(texts, 5, true);
  const auto order = all(f);
  const auto b1 = f.batch(order, mlm_padding::longest, mlm_masking{}, 3);
  const auto b2 = f.batch(order, mlm_padding::longest, mlm_masking{}, 3);
  CHECK(b1.input_ids == b2.input_ids);
  CHECK(b1.labels == b2.labels);
  CHECK(f.batch(order, mlm_padding::longest, mlm_masking{}, 4).labels != b1.labels);
  CHECK(f.batch(order, mlm_padding::longest, masking(0.15, 0.8, 0.1, 43), 3).labels != b1.labels);
  // A feature's mask does not depend on its row, its neighbours or the padding.
  const std::vector<std::size_t> pair{7, 3}, reversed{3, 7};
  const auto p = f.batch(pair, mlm_padding::max_length, masking(0.5, 0.8, 0.1), 9);
  const auto r = f.batch(reversed, mlm_padding::longest, masking(0.5, 0.8, 0.1), 9);
  const std::size_t n = f.length(7);
  CHECK(ids(p.input_ids.begin(), p.input_ids.begin() + static_cast<std::ptrdiff_t>(n)) ==
        ids(r.input_ids.begin() + static_cast<std::ptrdiff_t>(r.seq),
            r.input_ids.begin() + static_cast<std::ptrdiff_t>(r.seq + n)));
  CHECK(labels(p.labels.begin(), p.labels.begin() + static_cast<std::ptrdiff_t>(n)) ==
        labels(r.labels.begin() + static_cast<std::ptrdiff_t>(r.seq),
               r.labels.begin() + static_cast<std::ptrdiff_t>(r.seq + n)));
}

TEST_CASE("masked LM features keep the masking they were made with, which a batch without one draws") {
  std::vector<std::string> texts;
  for (int t = 0; t < 20; ++t) texts.push_back(std::string("a b c d e f g h i j").substr(0, 1 + (t % 10) * 2));
  mlm_feature_options o;
  o.max_seq_length = 6;
  o.line_by_line = true;
  o.masking = masking(0.5, 0.6, 0.2, 7);
  const auto f = make_mlm_features(texts, letters(), o);
  CHECK(f.masking().mlm_probability == 0.5);
  CHECK(f.masking().seed == 7);
  const auto order = all(f);
  const auto own = f.batch(order, mlm_padding::longest, 5);
  const auto given = f.batch(order, mlm_padding::longest, o.masking, 5);
  CHECK(own.input_ids == given.input_ids);
  CHECK(own.labels == given.labels);
  CHECK(own.labels != f.batch(order, mlm_padding::longest, mlm_masking{}, 5).labels);
  o.masking.mlm_probability = 1.5;
  CHECK_THROWS_MATCHES(make_mlm_features(texts, letters(), o), usage_error, says("mlm_probability (1.5"));
}

TEST_CASE("mask_sequence masks one sequence in place and checks its spans") {
  ids in{2, 5, 6, 7, 3};
  const bytes special{1, 0, 0, 0, 1};
  labels out(5);
  mask_sequence(in, special, out, masking(1.0, 0.0, 1.0), 4, 15, 0, 0);
  CHECK(out == labels{X, 5, 6, 7, X});
  CHECK((in[0] == 2 && in[4] == 3));
  for (std::size_t p = 1; p < 4; ++p) CHECK((in[p] >= 0 && in[p] < 15));
  labels short_labels(4);
  CHECK_THROWS_MATCHES(mask_sequence(in, special, short_labels, mlm_masking{}, 4, 15, 0, 0), usage_error,
                       says("same length"));
}

TEST_CASE("masked LM features in RoBERTa's layout keep each text's <s> and </s>") {
  const text::tokenizer tok = text::load_tokenizer(std::string(CPUTRAIN_TEXT_TEST_DATA) + "/gpt2_cut");
  const std::vector<std::string> texts{"Hello world, this is a text.", "And another one follows here."};
  ids stream;
  for (const auto& t : texts) {
    const auto e = tok.encode(t);
    stream.insert(stream.end(), e.ids.begin(), e.ids.end());
  }
  mlm_feature_options o;
  o.max_seq_length = 4;
  const auto f = make_mlm_features(texts, tok, o);
  REQUIRE(f.size() == stream.size() / 4);
  for (std::size_t i = 0; i < f.size(); ++i) {
    CHECK(vec(f.input_ids(i)) == ids(stream.begin() + static_cast<std::ptrdiff_t>(4 * i),
                                     stream.begin() + static_cast<std::ptrdiff_t>(4 * i + 4)));
    const auto special = f.special_tokens_mask(i);
    for (std::size_t p = 0; p < 4; ++p) {
      const std::int32_t id = f.input_ids(i)[p];
      CHECK((special[p] != 0) == (id == tok.specials().cls || id == tok.specials().sep));
    }
  }
  CHECK(f.mask_id() == *tok.specials().mask);
  CHECK(f.id_count() == tok.id_count());
}

TEST_CASE("masked LM features refuse a tokenizer without a mask token and name a text it cannot read") {
  const text::bert_tokenizer no_mask(text::vocabulary::parse("[PAD]\n[UNK]\n[CLS]\n[SEP]\na\n", "no mask"));
  CHECK_THROWS_MATCHES(make_mlm_features(std::vector<std::string>{"a"}, no_mask, {}), usage_error,
                       says("needs a mask token"));
  CHECK_THROWS_MATCHES(make({"a", "b \xff"}, 4), data_error, says("text 1: "));
  CHECK_THROWS_MATCHES(make({"a"}, 0), usage_error, says("max_seq_length 0"));
}

TEST_CASE("masked LM features do not depend on the number of threads and truncate keeps the first") {
  std::vector<std::string> texts;
  for (int t = 0; t < 3000; ++t) texts.push_back(std::string("a b c d e f g h i j").substr(0, 1 + (t % 10) * 2));
  const auto many = make(texts, 7);
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  auto single = make(texts, 7);
  REQUIRE(many.size() == single.size());
  REQUIRE(many.size() > 100);
  for (std::size_t i = 0; i < many.size(); ++i) {
    CHECK(vec(many.input_ids(i)) == vec(single.input_ids(i)));
    CHECK(many.special_tokens_mask(i) == single.special_tokens_mask(i));
  }
  CHECK(single.memory_bytes() >= single.size() * 7 * 4);
  single.truncate(10);
  CHECK(single.size() == 10);
  CHECK(vec(single.input_ids(9)) == vec(many.input_ids(9)));
  CHECK(single.special_tokens_mask(9) == many.special_tokens_mask(9));
  CHECK_THROWS_MATCHES(single.input_ids(10), usage_error, says("feature 10 of 10"));
}

}  // namespace mlm_features_test
