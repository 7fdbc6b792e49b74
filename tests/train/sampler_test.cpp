#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "cputrain/train/sampler.hpp"
#include "support/checks.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace sampler_test {

using namespace cputrain::train;
using cputrain::test::says;

TEST_CASE("each epoch is a permutation fixed by seed and epoch") {
  const auto a = epoch_permutation(1000, 42, 0);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint32_t i = 0; i < 1000; ++i) REQUIRE(sorted[i] == i);
  CHECK(a == epoch_permutation(1000, 42, 0));
  CHECK(a != epoch_permutation(1000, 42, 1));
  CHECK(a != epoch_permutation(1000, 43, 0));
  std::size_t fixed_points = 0;
  for (std::uint32_t i = 0; i < 1000; ++i) fixed_points += a[i] == i;
  CHECK(fixed_points < 10);  // a shuffle, not the identity (about 1 expected)
  // Pinned values: the order must not change between compilers or releases, or resumed runs would differ.
  CHECK(epoch_permutation(8, 42, 0) == std::vector<std::uint32_t>{7, 4, 5, 0, 1, 6, 2, 3});
  const auto small = epoch_permutation(5, 7, 3);
  CHECK(std::set<std::uint32_t>(small.begin(), small.end()).size() == 5);
}

TEST_CASE("every position of a small permutation takes every value about equally often") {
  std::vector<std::vector<int>> counts(4, std::vector<int>(4, 0));
  for (std::uint64_t epoch = 0; epoch < 4000; ++epoch) {
    const auto p = epoch_permutation(4, 1, epoch);
    for (std::size_t i = 0; i < 4; ++i) ++counts[i][p[i]];
  }
  for (const auto& row : counts)
    for (const int c : row) CHECK((c > 850 && c < 1150));  // 1000 expected; 4.7 standard deviations either side
}

TEST_CASE("batches cover the epoch and the last one is short unless dropped") {
  const data_order order(10, 4, 42, false);
  CHECK(order.batches_per_epoch() == 3);
  const auto batches = order.epoch_batches(0);
  REQUIRE(batches.size() == 3);
  CHECK(batches[2].size() == 2);
  std::vector<std::size_t> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const data_order dropping(10, 4, 42, true);
  CHECK(dropping.batches_per_epoch() == 2);
  CHECK(dropping.epoch_batches(0).size() == 2);
}

TEST_CASE("two processes with batch b see at each step what one process with batch 2b sees") {
  const data_order one(24, 6, 9, false);
  const data_order rank0(24, 3, 9, false, 2, 0), rank1(24, 3, 9, false, 2, 1);
  for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
    const auto whole = one.epoch_batches(epoch), a = rank0.epoch_batches(epoch), b = rank1.epoch_batches(epoch);
    REQUIRE(whole.size() == 4);
    REQUIRE((a.size() == 4 && b.size() == 4));
    for (std::size_t k = 0; k < 4; ++k) {
      std::multiset<std::size_t> together(a[k].begin(), a[k].end());
      together.insert(b[k].begin(), b[k].end());
      CHECK(together == std::multiset<std::size_t>(whole[k].begin(), whole[k].end()));
    }
  }
}

TEST_CASE("an uneven split is padded by wrapping around, as DistributedSampler pads") {
  const data_order rank2(10, 2, 5, false, 3, 2);
  CHECK(rank2.per_process() == 4);
  const auto batches = rank2.epoch_batches(0);
  REQUIRE(batches.size() == 2);
  const auto perm = epoch_permutation(10, 5, 0);
  CHECK(batches[1][1] == perm[(2 + 3 * 3) % 10]);  // position 11 wraps to 1
}

TEST_CASE("a data order without features or batch is refused") {
  CHECK_THROWS_MATCHES(data_order(0, 4, 1, false), cputrain::usage_error, says("no training features"));
  CHECK_THROWS_MATCHES(data_order(4, 0, 1, false), cputrain::usage_error, says("batch size"));
  CHECK_THROWS_MATCHES(data_order(4, 1, 1, false, 2, 2), cputrain::usage_error, says("rank 2 of a world of 2"));
}

TEST_CASE("group_by_length sorts megabatches longest first and puts the longest window in the first batch") {
  // epoch_permutation(8, 42, 0) is {7, 4, 5, 0, 1, 6, 2, 3}; a global batch of 2 makes megabatches of
  // min(8 / (2 x 4), 50) = 1 batch: {7, 4} {5, 0} {1, 6} {2, 3}.
  const std::vector<std::uint32_t> lengths{5, 1, 9, 3, 3, 2, 8, 4};
  data_order order(8, 2, 42, false);
  order.group_by_length(lengths, 2);
  // Sorted: {7, 4} {0, 5} {6, 1} {2, 3}; then the longest (2, length 9) swaps places with the first (7).
  CHECK(order.epoch_order(0) == std::vector<std::uint32_t>{2, 4, 0, 5, 6, 1, 7, 3});
  const auto batches = order.epoch_batches(0);
  REQUIRE(batches.size() == 4);
  CHECK(batches[0] == std::vector<std::size_t>{2, 4});

  // Equal lengths keep the permutation's order (a stable sort), so grouping by a constant changes nothing.
  data_order constant(8, 2, 42, false);
  constant.group_by_length(std::vector<std::uint32_t>(8, 7), 2);
  CHECK(constant.epoch_order(3) == epoch_permutation(8, 42, 3));
}

TEST_CASE("group_by_length keeps every feature once and makes batches of similar lengths") {
  const std::size_t n = 4000, batch = 8;
  std::vector<std::uint32_t> lengths(n);
  for (std::size_t i = 0; i < n; ++i) lengths[i] = static_cast<std::uint32_t>(20 + (i * 7919) % 109);
  data_order grouped(n, batch, 3, false), plain(n, batch, 3, false);
  grouped.group_by_length(lengths, batch);
  const auto order = grouped.epoch_order(1);
  CHECK(std::set<std::uint32_t>(order.begin(), order.end()).size() == n);
  CHECK(order.size() == n);
  // Megabatches of 50 batches (400 features) are the permutation's, each sorted longest first.
  const auto perm = epoch_permutation(n, 3, 1);
  for (std::size_t begin = 0; begin < n; begin += 400) {
    std::multiset<std::uint32_t> a(perm.begin() + static_cast<std::ptrdiff_t>(begin),
                                   perm.begin() + static_cast<std::ptrdiff_t>(begin + 400));
    std::multiset<std::uint32_t> b(order.begin() + static_cast<std::ptrdiff_t>(begin),
                                   order.begin() + static_cast<std::ptrdiff_t>(begin + 400));
    if (begin != 0) CHECK(a == b);  // the first megabatch traded its first feature for the longest one
    for (std::size_t i = begin + 1; i + 1 < begin + 400; ++i) CHECK(lengths[order[i]] >= lengths[order[i + 1]]);
  }
  CHECK(lengths[order[0]] == 128);
  // Padding to each batch's longest window: grouped batches carry a fraction of the padding of plain ones.
  const auto padding = [&](const data_order& o) {
    std::size_t pad = 0;
    for (const auto& b : o.epoch_batches(1)) {
      std::uint32_t longest = 0;
      for (const std::size_t i : b) longest = std::max(longest, lengths[i]);
      for (const std::size_t i : b) pad += longest - lengths[i];
    }
    return pad;
  };
  CHECK(padding(grouped) * 10 < padding(plain));
}

TEST_CASE("group_by_length keeps the union of two processes' batches equal to one process's batch") {
  std::vector<std::uint32_t> lengths(60);
  for (std::size_t i = 0; i < lengths.size(); ++i) lengths[i] = static_cast<std::uint32_t>((i * 37) % 23);
  data_order one(60, 6, 9, false), rank0(60, 3, 9, false, 2, 0), rank1(60, 3, 9, false, 2, 1);
  one.group_by_length(lengths, 6);
  rank0.group_by_length(lengths, 6);
  rank1.group_by_length(lengths, 6);
  const auto whole = one.epoch_batches(2), a = rank0.epoch_batches(2), b = rank1.epoch_batches(2);
  REQUIRE(whole.size() == a.size());
  for (std::size_t k = 0; k < whole.size(); ++k) {
    std::multiset<std::size_t> both(a[k].begin(), a[k].end());
    both.insert(b[k].begin(), b[k].end());
    CHECK(both == std::multiset<std::size_t>(whole[k].begin(), whole[k].end()));
  }
  CHECK_THROWS_MATCHES(one.group_by_length(std::vector<std::uint32_t>(5, 1), 6), cputrain::usage_error,
                       says("5 lengths for 60 features"));
}

}  // namespace sampler_test
