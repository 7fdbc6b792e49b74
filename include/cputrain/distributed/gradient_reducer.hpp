// cputrain::dist::basic_gradient_reducer — data-parallel gradient averaging overlapped with backward, over any
// cputrain::parallel::communicator: the flat gradient buffer goes in buckets (about reducer_options::bucket_bytes,
// from the end), each handed to one communication thread as backward finishes it (ready_from), finish() waits.
// The result equals one all-reduce of the whole buffer; with wire_dtype::bf16, each bucket travels as bf16
// (distributed/bf16_bucket_exchange.hpp). mpi/gradient_reducer.hpp is the one over MPI.
#pragma once

#include "cputrain/distributed/bf16_bucket_exchange.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/policy/parallel/parallel_policy.hpp"

namespace cputrain::dist {

/// What gradients travel as between ranks.
enum class wire_dtype {
  /// Exact: the sum over ranks, as one process with the whole batch would have it.
  fp32,
  /// Half the bytes: each rank's values and the sum rounded to bf16 (bf16_bucket_exchange).
  bf16,
};

/// "fp32" or "bf16".
[[nodiscard]] inline const char* wire_dtype_name(wire_dtype w) noexcept { return w == wire_dtype::bf16 ? "bf16" : "fp32"; }

struct reducer_options {
  /// The size a bucket grows to (in bytes of float gradients) before the next tensor starts a new one; a tensor
  /// larger than this is a bucket of its own, and 0 makes every tensor its own bucket. PyTorch DDP's default.
  std::size_t bucket_bytes = 25u << 20;
  /// Reduce on the communication thread while backward runs; false reduces everything inside finish(), on the
  /// calling thread (for measuring what the overlap hides, or with an MPI below MPI_THREAD_SERIALIZED).
  bool overlap = true;
  /// Divide the sums by the world size. false leaves the sums, for a caller that scaled its gradients by 1 / size
  /// before (a trainer does it through the loss scale for free, saving the division's pass over the buffer; for a
  /// power-of-two world the result is bit-identical either way).
  bool average = true;
  /// bf16 halves the bytes each rank sends; every rank still ends with the same bits. Needs a communicator with
  /// all_to_all and all_gather of bf16 (bf16_exchanging_communicator); usage_error otherwise.
  wire_dtype wire = wire_dtype::fp32;
};

/// What one step's reduction cost.
struct reducer_step_stats {
  double communication_seconds = 0;  // time spent inside the collectives (on whichever thread ran them)
  double exposed_seconds = 0;        // time the caller spent inside finish(): the communication backward did not hide
  std::size_t buckets = 0;           // buckets reduced (0 in a world of one, where nothing is)
  /// What each rank sends with a bandwidth-optimal algorithm (ring all-reduce: 2 (size - 1) / size x 4 bytes a
  /// float; bf16: half that): the bytes that set the step's time on a slow link. Small buckets may send more.
  std::size_t sent_bytes = 0;
};

/// Averages a flat gradient buffer over the ranks of `Comm`, bucket by bucket.
///
/// Protocol, per step (ready_from and finish() may be called from any thread, but one call at a time, never two
/// at once):
///   - backward writes gradients from the end of the buffer towards the start; whenever grads[offset, end) are
///     final, ready_from(offset) (offsets non-increasing within a step; calling it is optional);
///   - finish() once backward is done: afterwards grads hold the average over ranks, and the next step may start.
/// With gradient accumulation, only the micro-batch that completes the accumulation calls ready_from and finish();
/// the others just add into grads (what DDP's no_sync does). Anything that reads the averaged gradients (clipping by
/// global norm, the optimizer) comes after finish().
/// Between handing a stretch over (ready_from) and finish() returning, the caller must neither read nor write that
/// stretch of grads. Between the first ready_from of a step and finish() returning, no other collective may run on
/// the communicator, and (under MPI_THREAD_SERIALIZED, which is enough for this class) this process must make no
/// MPI call at all on any thread; with MPI_THREAD_MULTIPLE, collectives on other communicators are fine.
/// Every rank must build its reducer with the same buffer length, tensor offsets and bucket_bytes, and call
/// finish() for every step: the buckets are reduced in the same order everywhere, which MPI's collectives require.
/// In a world of more than one the constructor is collective too: it checks (all_reduce_max of a hash of the
/// buckets) that every rank cut the same buckets, and throws usage_error on every rank if not.
///
/// Errors: an exception on the communication thread (an MPI failure, which mpi_communicator reports as
/// cputrain::error) is rethrown by finish(), naming the bucket; the buckets after it in that step are not reduced
/// on this rank, so the other ranks are left waiting for them: a rank that catches it should end the job
/// (mpi_environment::abort). The reducer itself is ready for another step after finish() threw.
template <parallel::communicator Comm>
class basic_gradient_reducer {
 public:
  using step_stats = reducer_step_stats;

  /// `grads`: the flat gradient buffer, parameters in forward order (embeddings, layer 0..L-1, head).
  /// `tensor_offsets`: where each parameter tensor starts, in floats, sorted, the first 0, none beyond the buffer.
  /// Both must outlive the reducer, as must `comm`. Throws usage_error for bad offsets.
  basic_gradient_reducer(Comm& comm, std::span<float> grads, std::span<const std::size_t> tensor_offsets,
                         reducer_options options = {})
      : comm_(comm), grads_(grads), options_(options), world_size_(comm.size()) {
    check_offsets(grads.size(), tensor_offsets);
    buckets_ = cut_buckets(grads.size(), tensor_offsets, options.bucket_bytes);
    if (world_size_ <= 1) return;
    if constexpr (requires { comm.all_reduce_max(std::int64_t{}); }) check_same_buckets_on_every_rank();
    if (options_.wire == wire_dtype::bf16) make_bf16_exchange();
    // A communicator that can refuse calls from a second thread (MPI below MPI_THREAD_SERIALIZED) says so now.
    if constexpr (requires { comm.check_calls_from_another_thread("cputrain::dist::gradient_reducer"); }) {
      if (options_.overlap) comm.check_calls_from_another_thread("cputrain::dist::gradient_reducer");
    }
    if (options_.overlap) thread_ = std::thread([this] { communication_loop(); });
  }

  basic_gradient_reducer(const basic_gradient_reducer&) = delete;
  basic_gradient_reducer& operator=(const basic_gradient_reducer&) = delete;
  basic_gradient_reducer(basic_gradient_reducer&&) = delete;
  basic_gradient_reducer& operator=(basic_gradient_reducer&&) = delete;

  /// Stops the communication thread: it completes the collective it is in (which the other ranks are in too), starts
  /// no other, and is joined. Destroying a reducer mid-step is for error paths only: see the class comment.
  ~basic_gradient_reducer() {
    if (!thread_.joinable()) return;
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    work_ready_.notify_one();
    thread_.join();
  }

  /// grads[offset, grads.size()) are final for this step: hands every bucket lying wholly inside it that is not yet
  /// handed over to the communication thread. An offset larger than an earlier one in the step changes nothing.
  void ready_from(std::size_t offset) {
    if (offset > grads_.size()) {
      throw usage_error("cputrain::dist::gradient_reducer::ready_from: offset " + std::to_string(offset) +
                        " lies beyond the gradient buffer of " + std::to_string(grads_.size()) + " floats");
    }
    if (!thread_.joinable()) return;  // a world of one, or overlap off: finish() does everything
    std::size_t ready = handed_;      // only the caller's side writes handed_, so reading it unlocked is safe
    while (ready < buckets_.size() && buckets_[ready].first >= offset) ++ready;
    if (ready == handed_) return;
    {
      const std::lock_guard lock(mutex_);
      handed_ = ready;
    }
    work_ready_.notify_one();
  }

  /// Reduces every bucket not handed over yet, waits for all, and leaves grads holding the average over ranks
  /// (the sum divided by size()). Rethrows the first exception the reduction met. Nothing to do in a world of one.
  void finish() {
    const auto start = clock::now();
    step_stats stats;
    std::exception_ptr failure;
    if (world_size_ > 1 && !buckets_.empty()) {
      if (thread_.joinable()) {
        std::unique_lock lock(mutex_);
        handed_ = buckets_.size();
        work_ready_.notify_one();
        work_done_.wait(lock, [&] { return done_ == handed_; });
        stats.communication_seconds = thread_seconds_;
        failure = failure_;
        handed_ = 0;
        done_ = 0;
        thread_seconds_ = 0;
        failure_ = nullptr;
      } else {
        for (std::size_t i = 0; i < buckets_.size() && !failure; ++i) {
          try {
            stats.communication_seconds += reduce_bucket(i);
          } catch (...) {
            failure = bucket_failure(i);
          }
        }
      }
      stats.buckets = buckets_.size();
      stats.sent_bytes = sent_bytes_per_step();
    }
    stats.exposed_seconds = std::chrono::duration<double>(clock::now() - start).count();
    last_ = stats;
    if (failure) std::rethrow_exception(failure);
  }

  [[nodiscard]] const step_stats& last_step() const noexcept { return last_; }
  [[nodiscard]] std::size_t bucket_count() const noexcept { return buckets_.size(); }
  /// The buckets as [begin, end) offsets in floats, in reduction order (from the end of the buffer backwards).
  [[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> buckets() const { return buckets_; }

 private:
  using clock = std::chrono::steady_clock;

  static void check_offsets(std::size_t length, std::span<const std::size_t> offsets) {
    const std::string where = "cputrain::dist::gradient_reducer: ";
    if (offsets.empty()) {
      throw usage_error(where + "tensor_offsets is empty; it must list where each parameter tensor starts in the "
                                "gradient buffer, beginning with 0");
    }
    if (offsets.front() != 0) {
      throw usage_error(where + "tensor_offsets[0] is " + std::to_string(offsets.front()) +
                        "; the first tensor must start at offset 0, or the floats before it would never be reduced");
    }
    for (std::size_t i = 1; i < offsets.size(); ++i) {
      if (offsets[i] < offsets[i - 1]) {
        throw usage_error(where + "tensor_offsets are not sorted: tensor_offsets[" + std::to_string(i) + "] = " +
                          std::to_string(offsets[i]) + " comes after tensor_offsets[" + std::to_string(i - 1) +
                          "] = " + std::to_string(offsets[i - 1]));
      }
    }
    if (offsets.back() > length) {
      throw usage_error(where + "tensor_offsets[" + std::to_string(offsets.size() - 1) + "] = " +
                        std::to_string(offsets.back()) + " lies beyond the gradient buffer of " +
                        std::to_string(length) + " floats");
    }
  }

  // Walk the tensors from the last to the first, closing a bucket before the tensor that would take it over the
  // limit; so a bucket is at most bucket_bytes unless it is one tensor larger than that.
  static std::vector<std::pair<std::size_t, std::size_t>> cut_buckets(std::size_t length,
                                                                      std::span<const std::size_t> offsets,
                                                                      std::size_t bucket_bytes) {
    std::vector<std::pair<std::size_t, std::size_t>> buckets;
    std::size_t bucket_end = length;
    std::size_t bucket_begin = length;
    std::size_t tensor_end = length;
    for (std::size_t i = offsets.size(); i-- > 0;) {
      const std::size_t tensor_begin = offsets[i];
      const std::size_t tensor_bytes = (tensor_end - tensor_begin) * sizeof(float);
      const std::size_t bucket_bytes_now = (bucket_end - bucket_begin) * sizeof(float);
      if (bucket_begin < bucket_end && tensor_bytes > 0 && bucket_bytes_now + tensor_bytes > bucket_bytes) {
        buckets.emplace_back(bucket_begin, bucket_end);
        bucket_end = bucket_begin;
      }
      bucket_begin = tensor_begin;
      tensor_end = tensor_begin;
    }
    if (bucket_begin < bucket_end) buckets.emplace_back(bucket_begin, bucket_end);
    return buckets;
  }

  // Mismatched layouts would pair different buckets in one collective: wrong sums, or a job that hangs. A hash of
  // the layout is compared through its maximum and minimum over ranks, which agree only if every rank's does.
  void check_same_buckets_on_every_rank() {
    std::uint64_t hash = 1469598103934665603ull;  // FNV-1a
    const auto mix = [&](std::uint64_t value) {
      for (int byte = 0; byte < 8; ++byte) {
        hash ^= (value >> (8 * byte)) & 0xffu;
        hash *= 1099511628211ull;
      }
    };
    mix(grads_.size());
    for (const auto& [begin, end] : buckets_) {
      mix(begin);
      mix(end);
    }
    const auto mine = static_cast<std::int64_t>(hash >> 2);  // 62 bits, so negating cannot overflow
    const std::int64_t largest = comm_.all_reduce_max(mine);
    const std::int64_t smallest = -comm_.all_reduce_max(-mine);
    if (largest != smallest) {
      throw usage_error("cputrain::dist::gradient_reducer: the ranks cut different buckets (this rank: " +
                        std::to_string(buckets_.size()) + " buckets over " + std::to_string(grads_.size()) +
                        " floats); every rank must pass the same buffer length, tensor_offsets and bucket_bytes");
    }
  }

  void make_bf16_exchange() {
    if constexpr (bf16_exchanging_communicator<Comm>) {
      std::size_t largest = 0;
      for (const auto& [begin, end] : buckets_) largest = std::max(largest, end - begin);
      bf16_exchange_.emplace(world_size_, largest);
    } else {
      throw usage_error("cputrain::dist::gradient_reducer: wire_dtype::bf16 needs a communicator with all_to_all "
                        "and all_gather of bf16 (cputrain::dist::bf16_exchanging_communicator); this one has none");
    }
  }

  [[nodiscard]] std::size_t sent_bytes_per_step() const noexcept {
    const auto world = static_cast<std::size_t>(world_size_);
    std::size_t bytes = 0;
    for (const auto& [begin, end] : buckets_) {
      bytes += bf16_exchange_ ? bf16_bucket_exchange::sent_bytes(end - begin, world_size_)
                              : 2 * (world - 1) * (end - begin) * sizeof(float) / world;
    }
    return bytes;
  }

  // Sums bucket i over ranks and divides it by the world size: a division, not a multiplication by the inverse,
  // so the result is bit-identical to reducing the whole buffer and dividing; it costs no more here, since the
  // pass is bound by memory. Returns the seconds spent in the collective (for bf16, with the conversions).
  double reduce_bucket(std::size_t i) {
    const auto [begin, end] = buckets_[i];
    const std::span<float> bucket = grads_.subspan(begin, end - begin);
    const auto start = clock::now();
    if constexpr (bf16_exchanging_communicator<Comm>) {
      if (bf16_exchange_) {
        bf16_exchange_->all_reduce(comm_, bucket, options_.average);
        return std::chrono::duration<double>(clock::now() - start).count();
      }
    }
    comm_.all_reduce_sum(bucket);
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    if (options_.average) {
      const auto divisor = static_cast<float>(world_size_);
      for (float& g : bucket) g /= divisor;
    }
    return seconds;
  }

  std::exception_ptr bucket_failure(std::size_t i) const {
    try {
      throw;
    } catch (const std::exception& e) {
      return std::make_exception_ptr(error("cputrain::dist::gradient_reducer: reducing bucket " + std::to_string(i) +
                                           " of " + std::to_string(buckets_.size()) + " (floats [" +
                                           std::to_string(buckets_[i].first) + ", " +
                                           std::to_string(buckets_[i].second) + ")) failed: " + e.what()));
    } catch (...) {
      return std::current_exception();
    }
  }

  void communication_loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_ready_.wait(lock, [&] { return stop_ || done_ < handed_; });
      if (stop_) return;
      const std::size_t i = done_;
      const bool skip = failure_ != nullptr;  // this step already failed: no more collectives from this rank
      lock.unlock();
      double seconds = 0;
      std::exception_ptr failure;
      if (!skip) {
        try {
          seconds = reduce_bucket(i);
        } catch (...) {
          failure = bucket_failure(i);
        }
      }
      lock.lock();
      ++done_;
      thread_seconds_ += seconds;
      if (failure) failure_ = failure;
      if (done_ == handed_) work_done_.notify_one();
    }
  }

  Comm& comm_;
  std::span<float> grads_;
  reducer_options options_;
  int world_size_;
  std::vector<std::pair<std::size_t, std::size_t>> buckets_;
  std::optional<bf16_bucket_exchange> bf16_exchange_;  // with wire_dtype::bf16 in a world of more than one
  step_stats last_;

  // The hand-off: buckets [0, handed_) are given to the thread, [0, done_) are reduced. Guarded by mutex_.
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::size_t handed_ = 0;
  std::size_t done_ = 0;
  double thread_seconds_ = 0;
  std::exception_ptr failure_;
  bool stop_ = false;
  std::thread thread_;  // last: started once everything it uses exists
};

}  // namespace cputrain::dist
