// cputrain::dist::bf16_bucket_exchange — sums a float bucket over ranks with bf16 on the wire: half the bytes of
// an fp32 all-reduce. Each rank rounds its bucket to bf16 and sends shard b to rank b (all-to-all); rank b adds the
// ranks' copies of its shard in fp32, in rank order, and rounds the sum once; the summed shards go back to every
// rank (all-gather). Every rank ends with the same bits. Why not MPI_Allreduce on bf16: docs/distributed.md.
#pragma once

#include "cputrain/core/bf16_convert.hpp"

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "cputrain/core/bf16.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/policy/parallel/parallel_policy.hpp"

namespace cputrain::dist {

/// A communicator that can also move bf16 blocks. All calls are collective, with the same sizes on every rank.
template <class C>
concept bf16_exchanging_communicator =
    parallel::communicator<C> && requires(C& c, std::span<const bf16> in, std::span<bf16> out) {
      c.all_to_all(in, out);  // in: [size, block]; out[r] = rank r's in[this rank]
      c.all_gather(in, out);  // in: [block]; out: [size, block], rank r's in at out[r]
    };

/// The buffers of the exchange, sized once for the largest bucket; one exchange at a time.
class bf16_bucket_exchange {
 public:
  /// Buckets longer than this go in pieces: the buffers stay small (8 MiB of bf16 each) and every MPI count fits
  /// an int. Each piece costs one more latency of the two collectives, tens of microseconds.
  static constexpr std::size_t piece_elements = std::size_t{1} << 22;

  bf16_bucket_exchange(int world_size, std::size_t largest_bucket) : world_(static_cast<std::size_t>(world_size)) {
    if (world_size < 1) {
      throw usage_error("cputrain::dist::bf16_bucket_exchange: world size " + std::to_string(world_size) +
                        " is not positive");
    }
    const std::size_t shard = shard_length(std::min(largest_bucket, piece_elements), world_size);
    outgoing_.resize(shard * world_);
    incoming_.resize(shard * world_);
    sum_.resize(shard);
    converted_.resize(shard);
  }

  /// Elements of a bucket of `length` each rank sums: the length divided by the world size, rounded up.
  [[nodiscard]] static std::size_t shard_length(std::size_t length, int world_size) noexcept {
    const auto world = static_cast<std::size_t>(world_size);
    return (length + world - 1) / world;
  }

  /// Bytes each rank sends for a bucket of `length` floats: (size - 1) shards in the all-to-all and (size - 1) in a
  /// ring all-gather, 2 bytes an element — half of a ring all-reduce's 2 (size - 1) / size x length x 4.
  [[nodiscard]] static std::size_t sent_bytes(std::size_t length, int world_size) noexcept {
    std::size_t bytes = 0;
    for (std::size_t done = 0; done < length; done += piece_elements) {
      const std::size_t piece = std::min(piece_elements, length - done);
      bytes += 2 * (static_cast<std::size_t>(world_size) - 1) * shard_length(piece, world_size) * sizeof(bf16);
    }
    return bytes;
  }

  /// In place: bucket ends as bf16(sum over ranks of bf16(bucket)) as a float, divided by the world size before
  /// the rounding when `average`; the same bits on every rank. Every rank passes the same length.
  template <bf16_exchanging_communicator Comm>
  void all_reduce(Comm& comm, std::span<float> bucket, bool average) {
    if (comm.size() != static_cast<int>(world_)) {
      throw usage_error("cputrain::dist::bf16_bucket_exchange: made for " + std::to_string(world_) +
                        " ranks, used with " + std::to_string(comm.size()));
    }
    for (std::size_t done = 0; done < bucket.size(); done += piece_elements) {
      all_reduce_piece(comm, bucket.subspan(done, std::min(piece_elements, bucket.size() - done)), average);
    }
  }

 private:
  template <class Comm>
  void all_reduce_piece(Comm& comm, std::span<float> piece, bool average) {
    const std::size_t shard = shard_length(piece.size(), static_cast<int>(world_));
    if (shard * world_ > outgoing_.size()) {
      throw usage_error("cputrain::dist::bf16_bucket_exchange: a bucket of " + std::to_string(piece.size()) +
                        " floats is longer than the largest it was made for");
    }
    // outgoing: [world, shard], the bucket then zeros to fill the last shard.
    const std::span<bf16> outgoing(outgoing_.data(), shard * world_);
    const std::span<bf16> incoming(incoming_.data(), shard * world_);
    to_bf16_serial(piece, outgoing.first(piece.size()));
    std::fill(outgoing.begin() + static_cast<std::ptrdiff_t>(piece.size()), outgoing.end(), bf16{});
    comm.all_to_all(std::span<const bf16>(outgoing), incoming);
    sum_shard(incoming, shard, average);
    // The summed shards of every rank, in rank order, are the bucket again (and the padding's zeros).
    comm.all_gather(std::span<const bf16>(converted_.data(), shard), outgoing);
    to_float_serial(std::span<const bf16>(outgoing.data(), piece.size()), piece);
  }

  // incoming: [world, shard], rank r's copy of this rank's shard at row r. Sums in rank order, so the result does
  // not depend on the MPI's algorithm; fp32 keeps 16 more bits than bf16, so the rounding that matters is the last.
  void sum_shard(std::span<const bf16> incoming, std::size_t shard, bool average) {
    const std::span<float> sum(sum_.data(), shard);
    to_float_serial(incoming.first(shard), sum);
    for (std::size_t r = 1; r < world_; ++r) {
      const std::span<const bf16> row = incoming.subspan(r * shard, shard);
      for (std::size_t j = 0; j < shard; ++j) sum[j] += static_cast<float>(row[j]);
    }
    if (average) {
      const auto divisor = static_cast<float>(world_);
      for (float& s : sum) s /= divisor;
    }
    to_bf16_serial(sum, std::span<bf16>(converted_.data(), shard));
  }

  std::size_t world_;
  std::vector<bf16> outgoing_;   // [world, shard]: the bucket in bf16; after the all-gather, the summed bucket
  std::vector<bf16> incoming_;   // [world, shard]: every rank's copy of this rank's shard
  std::vector<float> sum_;       // [shard]
  std::vector<bf16> converted_;  // [shard]: the rounded sum this rank contributes to the all-gather
};

}  // namespace cputrain::dist
