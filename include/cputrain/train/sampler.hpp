// cputrain::train::data_order — which training features each optimizer step of each process sees: a permutation
// per epoch drawn from (seed, epoch) alone (a resumed run replays it), split between processes as PyTorch's
// DistributedSampler does, optionally grouped by length as Hugging Face's LengthGroupedSampler does, the same with
// every compiler. docs/training.md, "Data order", says how and why.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/core/splitmix64.hpp"

namespace cputrain::train {

namespace detail {

// A uniform integer in [0, bound) from 64 random bits: draws past the largest multiple of bound are redrawn, so
// the remainder is unbiased.
inline std::uint64_t uniform_below(std::uint64_t bound, std::uint64_t seed, std::uint64_t& counter) noexcept {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  for (;;) {
    const std::uint64_t r = splitmix64(seed ^ splitmix64(counter++));
    if (r < limit) return r % bound;
  }
}

}  // namespace detail

/// The permutation of [0, n) for `epoch` of a run seeded with `seed`.
CPUTRAIN_DECL std::vector<std::uint32_t> epoch_permutation(std::size_t n, std::uint64_t seed, std::uint64_t epoch);

/// How the features of an epoch are cut into per-process batches.
class data_order {
 public:
  /// `features` training features, `batch` per process, `world` processes, this one `rank`.
  data_order(std::size_t features, std::size_t batch, std::uint64_t seed, bool drop_last, std::size_t world = 1,
             std::size_t rank = 0);

  /// Groups every epoch's permutation by `lengths` (one per feature) in megabatches of up to 50 x `global_batch`
  /// (see the header comment). `global_batch` is the per-process batch x processes x accumulation steps.
  data_order& group_by_length(std::span<const std::uint32_t> lengths, std::size_t global_batch);

  /// The order of `epoch`'s features before it is shared out among processes.
  [[nodiscard]] std::vector<std::uint32_t> epoch_order(std::uint64_t epoch) const;

  /// Features per process and epoch (the padded share).
  [[nodiscard]] std::size_t per_process() const noexcept { return (features_ + world_ - 1) / world_; }

  /// Batches per process and epoch; the last may be short unless drop_last.
  [[nodiscard]] std::size_t batches_per_epoch() const noexcept {
    return drop_last_ ? per_process() / batch_ : (per_process() + batch_ - 1) / batch_;
  }

  /// This process's feature indices for every batch of `epoch`, in order.
  [[nodiscard]] std::vector<std::vector<std::size_t>> epoch_batches(std::uint64_t epoch) const;

 private:
  std::size_t features_, batch_;
  std::uint64_t seed_;
  bool drop_last_;
  std::size_t world_, rank_;
  std::vector<std::uint32_t> lengths_;  // empty: no grouping
  std::size_t megabatch_ = 0;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::vector<std::uint32_t> epoch_permutation(std::size_t n, std::uint64_t seed, std::uint64_t epoch) {
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  const std::uint64_t stream = splitmix64(seed) ^ splitmix64(0x5EED0000ull + epoch);
  std::uint64_t counter = 0;
  for (std::size_t i = n; i > 1; --i) {
    const auto j = static_cast<std::size_t>(detail::uniform_below(i, stream, counter));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

CPUTRAIN_DECL data_order::data_order(std::size_t features, std::size_t batch, std::uint64_t seed, bool drop_last,
                                      std::size_t world, std::size_t rank)
    : features_(features), batch_(batch), seed_(seed), drop_last_(drop_last), world_(world), rank_(rank) {
  if (features_ == 0) throw usage_error("data_order: there are no training features");
  if (batch_ == 0) throw usage_error("data_order: the batch size must be at least 1");
  if (world_ == 0 || rank_ >= world_)
    throw usage_error("data_order: rank " + std::to_string(rank_) + " of a world of " + std::to_string(world_));
}

CPUTRAIN_DECL data_order& data_order::group_by_length(std::span<const std::uint32_t> lengths,
                                                      std::size_t global_batch) {
  if (lengths.size() != features_)
    throw usage_error("data_order: " + std::to_string(lengths.size()) + " lengths for " + std::to_string(features_) +
                      " features");
  if (global_batch == 0) throw usage_error("data_order: the global batch size must be at least 1");
  lengths_.assign(lengths.begin(), lengths.end());
  // HF: min(n / (4 batch), 50) batches per megabatch, at least one.
  megabatch_ = std::max<std::size_t>(1, std::min<std::size_t>(features_ / (global_batch * 4), 50)) * global_batch;
  return *this;
}

CPUTRAIN_DECL std::vector<std::uint32_t> data_order::epoch_order(std::uint64_t epoch) const {
  auto order = epoch_permutation(features_, seed_, epoch);
  if (lengths_.empty()) return order;
  const auto longer = [this](std::uint32_t a, std::uint32_t b) { return lengths_[a] > lengths_[b]; };
  std::size_t longest_group = 0;
  for (std::size_t begin = 0; begin < features_; begin += megabatch_) {
    const auto first = order.begin() + static_cast<std::ptrdiff_t>(begin);
    std::stable_sort(first, order.begin() + static_cast<std::ptrdiff_t>(std::min(features_, begin + megabatch_)),
                     longer);
    if (lengths_[*first] > lengths_[order[longest_group]]) longest_group = begin;
  }
  // The longest window goes first, so that a batch too large for memory shows in the first step (as HF does).
  std::swap(order[0], order[longest_group]);
  return order;
}

CPUTRAIN_DECL std::vector<std::vector<std::size_t>> data_order::epoch_batches(std::uint64_t epoch) const {
  const auto perm = epoch_order(epoch);
  const std::size_t share = per_process();
  std::vector<std::size_t> mine;
  mine.reserve(share);
  for (std::size_t k = 0; k < share; ++k) mine.push_back(perm[(rank_ + k * world_) % features_]);
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t begin = 0; begin < share; begin += batch_) {
    const std::size_t end = std::min(share, begin + batch_);
    if (drop_last_ && end - begin < batch_) break;
    batches.emplace_back(mine.begin() + static_cast<std::ptrdiff_t>(begin),
                         mine.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return batches;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
