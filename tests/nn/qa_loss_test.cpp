// Tests for include/cputrain/nn/qa_loss.hpp: BertForQuestionAnswering's loss, (CE(start) + CE(end)) / 2 with
// positions clamped to [0, seq] and seq ignored — a hand-computed value, the clamping, the all-ignored NaN, and the
// gradient against central differences.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cputrain/nn/qa_loss.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace qa_loss_test {

using cputrain::nn::qa_loss;

namespace {

/// Mean over the counted sequences of logsumexp(column) - column[target], in double: PyTorch's CrossEntropyLoss
/// with ignore_index = seq after clamp(0, seq).
double reference_cross_entropy(const std::vector<double>& logits, std::size_t column,
                               const std::vector<std::int64_t>& positions, std::size_t seq) {
  double total = 0;
  std::size_t counted = 0;
  for (std::size_t b = 0; b < positions.size(); ++b) {
    const auto target = std::clamp<std::int64_t>(positions[b], 0, static_cast<std::int64_t>(seq));
    if (target == static_cast<std::int64_t>(seq)) continue;
    double max = -INFINITY, sum = 0;
    for (std::size_t s = 0; s < seq; ++s) max = std::max(max, logits[(b * seq + s) * 2 + column]);
    for (std::size_t s = 0; s < seq; ++s) sum += std::exp(logits[(b * seq + s) * 2 + column] - max);
    total += max + std::log(sum) - logits[(b * seq + static_cast<std::size_t>(target)) * 2 + column];
    ++counted;
  }
  return total / static_cast<double>(counted);
}

double reference_loss(const std::vector<double>& logits, const std::vector<std::int64_t>& start,
                      const std::vector<std::int64_t>& end, std::size_t seq) {
  return (reference_cross_entropy(logits, 0, start, seq) + reference_cross_entropy(logits, 1, end, seq)) / 2;
}

std::vector<float> random_logits(std::size_t n, unsigned seed, float spread) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-spread, spread);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace

TEST_CASE("qa_loss equals a hand-computed cross-entropy, with its gradient") {
  // One sequence of 3 tokens. start logits (1, 2, 3), answer starts at 2; end logits (0, 0, 0), ends at 0.
  // CE(start) = log(e + e^2 + e^3) - 3 = log(1 + e^-1 + e^-2) = 0.40760596444; CE(end) = log 3 = 1.09861228867.
  const std::vector<float> logits{1, 0, 2, 0, 3, 0};
  const std::vector<std::int64_t> start{2}, end{0};
  std::vector<float> d(6, std::numeric_limits<float>::quiet_NaN());
  const float loss = qa_loss(logits.data(), start.data(), end.data(), 1, 3, d.data());
  CHECK(loss == Approx((0.40760596444 + 1.09861228867) / 2).epsilon(1e-7));
  // d/dlogit = (softmax - onehot) / 2: softmax(1, 2, 3) = (0.0900305732, 0.2447284711, 0.6652409558).
  CHECK(d[0] == Approx(0.0900305732 / 2).epsilon(1e-6));
  CHECK(d[2] == Approx(0.2447284711 / 2).epsilon(1e-6));
  CHECK(d[4] == Approx((0.6652409558 - 1) / 2).epsilon(1e-6));
  CHECK(d[1] == Approx((1.0 / 3 - 1) / 2).epsilon(1e-6));
  CHECK(d[3] == Approx(1.0 / 6).epsilon(1e-6));
  CHECK(d[5] == Approx(1.0 / 6).epsilon(1e-6));
}

TEST_CASE("qa_loss clamps positions to 0..seq and ignores those at seq, each CE averages its own count") {
  const std::size_t batch = 4, seq = 5;
  const auto logits = random_logits(batch * seq * 2, 1, 3.0f);
  // start: 1 counts; 10 -> seq, ignored; -3 -> 0, counts; 5 = seq, ignored  => 2 counted
  // end:   5 ignored; 2 counts;  0 counts; 4 counts                          => 3 counted
  const std::vector<std::int64_t> start{1, 10, -3, 5}, end{5, 2, 0, 4};
  std::vector<float> d(logits.size(), std::numeric_limits<float>::quiet_NaN());
  const float loss = qa_loss(logits.data(), start.data(), end.data(), batch, seq, d.data());
  const std::vector<double> ld(logits.begin(), logits.end());
  CHECK(loss == Approx(reference_loss(ld, start, end, seq)).epsilon(1e-6));
  // -3 behaves as 0, and 10 as seq: the same loss with the clamped positions written out
  const std::vector<std::int64_t> clamped_start{1, 5, 0, 5};
  std::vector<float> d2(logits.size());
  CHECK(qa_loss(logits.data(), clamped_start.data(), end.data(), batch, seq, d2.data()) == loss);
  CHECK(d2 == d);
  // Ignored sequences get exactly zero gradient in their column (whatever dlogits held before).
  for (std::size_t s = 0; s < seq; ++s) {
    CHECK(d[(1 * seq + s) * 2 + 0] == 0.0f);
    CHECK(d[(3 * seq + s) * 2 + 0] == 0.0f);
    CHECK(d[(0 * seq + s) * 2 + 1] == 0.0f);
  }
  // A counted column's gradient sums to zero (softmax - one-hot).
  for (std::size_t b : {std::size_t{0}, std::size_t{2}}) {
    double sum = 0;
    for (std::size_t s = 0; s < seq; ++s) sum += d[(b * seq + s) * 2];
    CHECK(std::abs(sum) < 1e-7);
  }
}

TEST_CASE("qa_loss is NaN when no sequence counts, as PyTorch's mean over nothing") {
  const std::size_t batch = 2, seq = 3;
  const auto logits = random_logits(batch * seq * 2, 2, 1.0f);
  const std::vector<std::int64_t> ignored{3, 100}, counted{0, 2};
  std::vector<float> d(logits.size());
  CHECK(std::isnan(qa_loss(logits.data(), ignored.data(), ignored.data(), batch, seq, d.data())));
  for (float v : d) CHECK(v == 0.0f);  // nothing to learn from; the trainer stops on the NaN loss
  // One of the two cross-entropies empty is enough to make the mean NaN.
  CHECK(std::isnan(qa_loss(logits.data(), ignored.data(), counted.data(), batch, seq, d.data())));
  CHECK(std::isnan(qa_loss(logits.data(), counted.data(), ignored.data(), batch, seq, d.data())));
  CHECK(std::isfinite(qa_loss(logits.data(), counted.data(), counted.data(), batch, seq, d.data())));
}

TEST_CASE("qa_loss gradient matches central differences of the double loss") {
  const std::size_t batch = 3, seq = 7;
  const auto logits = random_logits(batch * seq * 2, 3, 4.0f);
  const std::vector<std::int64_t> start{0, 6, 9}, end{3, -1, 2};  // 9 ignored; -1 -> 0
  std::vector<float> d(logits.size());
  qa_loss(logits.data(), start.data(), end.data(), batch, seq, d.data());
  std::vector<double> ld(logits.begin(), logits.end());
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < ld.size(); ++i) {
    const double saved = ld[i], h = 1e-5;
    ld[i] = saved + h;
    const double up = reference_loss(ld, start, end, seq);
    ld[i] = saved - h;
    const double down = reference_loss(ld, start, end, seq);
    ld[i] = saved;
    const double numeric = (up - down) / (2 * h);
    worst = std::max(worst, std::abs(d[i] - numeric));
    scale = std::max(scale, std::abs(numeric));
  }
  REQUIRE(scale > 0.1);
  CHECK(worst < 1e-6 * scale);
}

TEST_CASE("qa_loss is finite for large logits") {
  const std::size_t seq = 4;
  const std::vector<float> logits{1000, -1000, 999, 0, -1000, 1000, 0, 998};
  const std::vector<std::int64_t> start{1}, end{3};
  std::vector<float> d(logits.size());
  const float loss = qa_loss(logits.data(), start.data(), end.data(), 1, seq, d.data());
  // CE(start) = log(1 + e^-1) + 1; CE(end) = log(1 + e^-2) + 2
  CHECK(loss == Approx((std::log1p(std::exp(-1.0)) + 1 + std::log1p(std::exp(-2.0)) + 2) / 2).epsilon(1e-6));
  for (float v : d) CHECK(std::isfinite(v));
}

}  // namespace qa_loss_test
