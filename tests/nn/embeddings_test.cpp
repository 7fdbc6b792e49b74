// Tests for include/cputrain/nn/embeddings.hpp: word + position + token type embeddings then LayerNorm, forward
// against a double reference and backward against central differences — repeated ids accumulate, the padding row
// gets no gradient — and thread-count independence of the scatter.
#include <catch2/catch.hpp>

#include "support/checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/nn/embeddings.hpp"
#include "cputrain/nn/parameters.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace embeddings_test {

using cputrain::nn::embeddings;
using cputrain::nn::parameter_table;

using cputrain::test::relative_error;

namespace {

std::vector<float> random_values(std::size_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

struct fixture {
  parameter_table table;
  embeddings emb;
  std::size_t batch, seq;
  std::vector<std::int32_t> ids, types;
  std::vector<float> params, w;  // w: weights of the objective L = sum(w * y)

  fixture(std::size_t vocab, std::size_t hidden, std::size_t positions, std::vector<std::int32_t> ids_,
          std::vector<std::int32_t> types_, std::size_t batch_, std::int64_t pad, unsigned seed,
          cputrain::nn::position_rule rule = cputrain::nn::position_rule::index)
      : batch(batch_), seq(ids_.size() / batch_), ids(std::move(ids_)), types(std::move(types_)) {
    emb = embeddings::create(table, "bert", vocab, hidden, positions, 2, pad, 1e-12f, rule);
    table.add("after.weight", {5}, cputrain::nn::parameter_role::weight);
    std::mt19937 rng(seed);
    params = random_values(table.total_size(), rng);
    for (std::size_t j = 0; j < hidden; ++j) params[emb.ln_weight + j] = 1.0f + 0.5f * params[emb.ln_weight + j];
    w = random_values(ids.size() * hidden, rng);
  }

  /// Each token's position row as Hugging Face computes it: BERT's arange, or RoBERTa's
  /// create_position_ids_from_input_ids: cumsum(mask) * mask + padding_idx, mask = ids != padding_idx.
  std::vector<std::size_t> hf_positions() const {
    std::vector<std::size_t> out(ids.size());
    for (std::size_t b = 0; b < batch; ++b) {
      std::int64_t cumsum = 0;
      for (std::size_t i = 0; i < seq; ++i) {
        const std::size_t t = b * seq + i;
        const std::int64_t mask = ids[t] != emb.pad_token_id ? 1 : 0;
        cumsum += mask;
        out[t] = emb.rule == cputrain::nn::position_rule::index
                     ? i
                     : static_cast<std::size_t>(cumsum * mask + emb.pad_token_id);
      }
    }
    return out;
  }

  /// LayerNorm(word[id] + position[hf_positions] + type[type]) in double.
  std::vector<double> reference(const std::vector<double>& p) const {
    const auto pos = hf_positions();
    const std::size_t H = emb.hidden;
    std::vector<double> y(ids.size() * H);
    for (std::size_t t = 0; t < ids.size(); ++t) {
      std::vector<double> s(H);
      double mean = 0, var = 0;
      for (std::size_t j = 0; j < H; ++j) {
        s[j] = p[emb.word + static_cast<std::size_t>(ids[t]) * H + j] + p[emb.position + pos[t] * H + j] +
               p[emb.token_type + static_cast<std::size_t>(types[t]) * H + j];
        mean += s[j];
      }
      mean /= static_cast<double>(H);
      for (std::size_t j = 0; j < H; ++j) var += (s[j] - mean) * (s[j] - mean);
      const double rstd = 1 / std::sqrt(var / static_cast<double>(H) + emb.eps);
      for (std::size_t j = 0; j < H; ++j) {
        y[t * H + j] = (s[j] - mean) * rstd * p[emb.ln_weight + j] + p[emb.ln_bias + j];
      }
    }
    return y;
  }

  struct output {
    std::vector<float> sum, y, mean, rstd;
  };
  output forward() const {
    const std::size_t n = ids.size() * emb.hidden;
    output o{std::vector<float>(n), std::vector<float>(n), std::vector<float>(ids.size()),
             std::vector<float>(ids.size())};
    emb.forward(params.data(), ids.data(), types.data(), batch, seq, o.sum.data(), o.y.data(), o.mean.data(),
                o.rstd.data());
    return o;
  }
  std::vector<float> backward(const output& o, std::vector<float> grads) const {
    auto dy = w;
    emb.backward(params.data(), grads.data(), ids.data(), types.data(), batch, seq, o.sum.data(), o.mean.data(),
                 o.rstd.data(), dy.data());
    return grads;
  }
};

}  // namespace

TEST_CASE("embeddings::create registers Hugging Face's five tensors") {
  parameter_table t;
  const auto e = embeddings::create(t, "bert", 100, 16, 32, 2, 0, 1e-12f);
  CHECK(t.at("bert.embeddings.word_embeddings.weight").shape == std::vector<std::int64_t>{100, 16});
  CHECK(t.at("bert.embeddings.position_embeddings.weight").shape == std::vector<std::int64_t>{32, 16});
  CHECK(t.at("bert.embeddings.token_type_embeddings.weight").shape == std::vector<std::int64_t>{2, 16});
  CHECK(t.at("bert.embeddings.LayerNorm.weight").shape == std::vector<std::int64_t>{16});
  CHECK(t.at("bert.embeddings.LayerNorm.bias").shape == std::vector<std::int64_t>{16});
  CHECK(e.word == t.at("bert.embeddings.word_embeddings.weight").offset);
  CHECK(e.position == t.at("bert.embeddings.position_embeddings.weight").offset);
  CHECK(e.token_type == t.at("bert.embeddings.token_type_embeddings.weight").offset);
  CHECK(e.ln_weight == t.at("bert.embeddings.LayerNorm.weight").offset);
  CHECK(e.ln_bias == t.at("bert.embeddings.LayerNorm.bias").offset);
  CHECK(t.entries().size() == 5);
  using cputrain::nn::parameter_role;
  CHECK(t.at("bert.embeddings.word_embeddings.weight").role == parameter_role::word_embedding);
  CHECK(t.at("bert.embeddings.position_embeddings.weight").role == parameter_role::embedding);
  CHECK(t.at("bert.embeddings.token_type_embeddings.weight").role == parameter_role::embedding);
  CHECK(t.at("bert.embeddings.LayerNorm.weight").role == parameter_role::norm_weight);
  CHECK(t.at("bert.embeddings.LayerNorm.bias").role == parameter_role::norm_bias);
}

TEST_CASE("embeddings forward: (word + type) + position, then LayerNorm, positions restarting per sequence") {
  const fixture f(7, 80, 6, {1, 3, 3, 5, 2, 3, 1, 6}, {0, 0, 1, 1, 0, 1, 1, 1}, 2, 1, 1);
  const auto o = f.forward();
  const std::size_t H = f.emb.hidden;
  for (std::size_t t = 0; t < f.ids.size(); ++t) {
    for (std::size_t j = 0; j < H; ++j) {
      const float want = (f.params[f.emb.word + static_cast<std::size_t>(f.ids[t]) * H + j] +
                          f.params[f.emb.token_type + static_cast<std::size_t>(f.types[t]) * H + j]) +
                         f.params[f.emb.position + (t % f.seq) * H + j];
      REQUIRE(o.sum[t * H + j] == want);  // bit for bit: HF's order of additions
    }
  }
  CHECK(relative_error(o.y.data(), f.reference({f.params.begin(), f.params.end()})) < 2e-6);
}

TEST_CASE("embeddings backward matches central differences, repeated ids accumulate, the padding row gets none") {
  // Ids: 3 three times, the padding id 1 twice, 0 and 4 never.
  const fixture f(7, 80, 6, {1, 3, 3, 5, 2, 3, 1, 6}, {0, 0, 1, 1, 0, 1, 1, 1}, 2, 1, 2);
  const auto o = f.forward();
  std::mt19937 rng(3);
  const auto initial = random_values(f.table.total_size(), rng);
  const auto grads = f.backward(o, initial);

  std::vector<double> p(f.params.begin(), f.params.end());
  auto objective = [&] {
    const auto y = f.reference(p);
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i) l += f.w[i] * y[i];
    return l;
  };
  auto numeric = [&](std::size_t first, std::size_t size) {
    std::vector<double> g(size);
    for (std::size_t i = 0; i < size; ++i) {
      const double saved = p[first + i], h = 1e-5;
      p[first + i] = saved + h;
      const double up = objective();
      p[first + i] = saved - h;
      const double down = objective();
      p[first + i] = saved;
      g[i] = (up - down) / (2 * h);
    }
    return g;
  };
  std::vector<float> added(grads.size());
  for (std::size_t i = 0; i < grads.size(); ++i) added[i] = grads[i] - initial[i];
  const std::size_t H = f.emb.hidden;
  const std::size_t pad_row = f.emb.word + static_cast<std::size_t>(f.emb.pad_token_id) * H;

  // The word table: every row but the padding one as the numeric gradient; the padding row untouched.
  auto want_word = numeric(f.emb.word, f.emb.vocab * H);
  double pad_numeric = 0;
  for (std::size_t j = 0; j < H; ++j) pad_numeric = std::max(pad_numeric, std::abs(want_word[H + j]));
  REQUIRE(pad_numeric > 1e-2);  // the padding token does influence the loss: skipping it is a rule, not an accident
  for (std::size_t j = 0; j < H; ++j) {
    CHECK(grads[pad_row + j] == initial[pad_row + j]);
    want_word[H + j] = 0;
    added[pad_row + j] = 0;
  }
  CHECK(relative_error(added.data() + f.emb.word, want_word) < 1e-5);
  for (std::size_t j = 0; j < H; ++j) {  // ids 0 and 4 appear nowhere
    CHECK(added[f.emb.word + 0 * H + j] == 0.0f);
    CHECK(added[f.emb.word + 4 * H + j] == 0.0f);
  }
  CHECK(relative_error(added.data() + f.emb.position, numeric(f.emb.position, f.emb.positions * H)) < 1e-5);
  for (std::size_t r = f.seq; r < f.emb.positions; ++r) {  // positions past seq are not used
    for (std::size_t j = 0; j < H; ++j) CHECK(added[f.emb.position + r * H + j] == 0.0f);
  }
  CHECK(relative_error(added.data() + f.emb.token_type, numeric(f.emb.token_type, 2 * H)) < 1e-5);
  CHECK(relative_error(added.data() + f.emb.ln_weight, numeric(f.emb.ln_weight, H)) < 1e-5);
  CHECK(relative_error(added.data() + f.emb.ln_bias, numeric(f.emb.ln_bias, H)) < 1e-5);
  // The tensor after the embeddings is not touched.
  const auto& after = f.table.at("after.weight");
  for (std::size_t i = 0; i < after.size; ++i) CHECK(grads[after.offset + i] == initial[after.offset + i]);
}

TEST_CASE("RoBERTa's positions: real tokens count from pad_token_id + 1, padding sits at pad_token_id") {
  using cputrain::nn::position_rule;
  // pad 1; the second sequence has padding inside and at its end
  const fixture f(7, 80, 12, {0, 3, 3, 5, 2, 2, 0, 1, 4, 6, 1, 1}, std::vector<std::int32_t>(12, 0), 2, 1, 5,
                  position_rule::after_padding);
  const auto pos = f.hf_positions();
  CHECK(pos == std::vector<std::size_t>{2, 3, 4, 5, 6, 7, 2, 1, 3, 4, 1, 1});
  const auto o = f.forward();
  const std::size_t H = f.emb.hidden;
  for (std::size_t t = 0; t < f.ids.size(); ++t) {
    for (std::size_t j = 0; j < H; ++j) {
      const float want = (f.params[f.emb.word + static_cast<std::size_t>(f.ids[t]) * H + j] +
                          f.params[f.emb.token_type + static_cast<std::size_t>(f.types[t]) * H + j]) +
                         f.params[f.emb.position + pos[t] * H + j];
      REQUIRE(o.sum[t * H + j] == want);
    }
  }
  // Backward: the position rows used get the summed gradient of their tokens, the padding row (1) none
  // (nn.Embedding(padding_idx)), rows 0 and 8.. none.
  const auto grads = f.backward(o, std::vector<float>(f.table.total_size(), 0.0f));
  for (std::size_t r = 0; r < f.emb.positions; ++r) {
    const bool used = r != 1 && std::find(pos.begin(), pos.end(), r) != pos.end();
    double size = 0;
    for (std::size_t j = 0; j < H; ++j) size = std::max(size, std::abs(static_cast<double>(grads[f.emb.position + r * H + j])));
    INFO("position row " << r);
    CHECK((size > 0) == used);
  }
  // and the table's padding row is the one HF's init zeroes
  CHECK(f.table.at("bert.embeddings.position_embeddings.weight").padding_row == 1);
  CHECK(f.table.at("bert.embeddings.word_embeddings.weight").padding_row == 1);
}

TEST_CASE("RoBERTa's positions are right when a parallel block of rows starts inside a sequence") {
  using cputrain::nn::position_rule;
  // hidden 512: blocks of 32 rows, sequences of 100 with padding spread through them
  const std::size_t batch = 3, seq = 100;
  std::vector<std::int32_t> ids(batch * seq);
  std::mt19937 rng(9);
  for (auto& i : ids) i = static_cast<std::int32_t>(rng() % 5);  // pad 1 one time in five
  const fixture f(5, 512, seq + 2, ids, std::vector<std::int32_t>(ids.size(), 0), batch, 1, 6,
                  position_rule::after_padding);
  const auto o = f.forward();
  CHECK(relative_error(o.y.data(), f.reference({f.params.begin(), f.params.end()})) < 2e-6);
}

TEST_CASE("embeddings backward is bit-identical in arenas of 1 and 2 threads") {
  const std::size_t batch = 8, seq = 64, vocab = 50;
  std::mt19937 rng(4);
  std::vector<std::int32_t> ids(batch * seq), types(batch * seq);
  for (auto& i : ids) i = static_cast<std::int32_t>(rng() % 10);  // many repeats
  for (auto& t : types) t = static_cast<std::int32_t>(rng() % 2);
  const fixture f(vocab, 256, seq, ids, types, batch, 0, 5);
  const auto o = f.forward();
  std::vector<float> one, two;
  const std::vector<float> zero(f.table.total_size(), 0.0f);
  tbb::task_arena(1).execute([&] { one = f.backward(o, zero); });
  tbb::task_arena(2).execute([&] { two = f.backward(o, zero); });
  CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
  // Row 3 of the word table is the sum over its tokens of the LayerNorm input gradient: non-zero.
  double norm = 0;
  for (std::size_t j = 0; j < 256; ++j) norm += std::abs(one[f.emb.word + 3 * 256 + j]);
  CHECK(norm > 0);
}

}  // namespace embeddings_test
