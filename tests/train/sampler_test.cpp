#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "cputrain/train/sampler.hpp"
#include "support/checks.hpp"

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
