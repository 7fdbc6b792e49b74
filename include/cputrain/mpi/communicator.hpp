// cputrain::dist::mpi_communicator — the processes of an MPI job as a cputrain::parallel::communicator: float
// sums and broadcasts, the local rank, and the small collectives a trainer needs. Every method but the accessors
// is collective; arguments are checked before any MPI call, and MPI failures throw cputrain::error.
#pragma once

#include "cputrain/mpi/environment.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/collectives/broadcast.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/exception.hpp>
#include <boost/mpi/operations.hpp>

#include "cputrain/core/bf16.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/policy/parallel/parallel_policy.hpp"

namespace cputrain::dist {

namespace detail {

/// Throws cputrain::error for an MPI return code other than MPI_SUCCESS, with MPI's own text for it.
inline void check_mpi(int rc, const char* where, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  std::string reason;
  if (MPI_Error_string(rc, text, &length) == MPI_SUCCESS && length > 0) {
    reason.assign(text, static_cast<std::size_t>(length));
  } else {
    reason = "MPI error code " + std::to_string(rc);
  }
  throw error(std::string(where) + ": " + call + " failed: " + reason);
}

/// Runs a Boost.MPI call, turning its boost::mpi::exception into cputrain::error with the method's name.
template <class F>
decltype(auto) boost_mpi_call(const char* where, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const boost::mpi::exception& e) {
    throw error(std::string(where) + ": " + e.what());
  }
}

// MPI counts are int; longer buffers go in pieces of this many elements (2^30: a power of two keeps pieces aligned).
inline constexpr std::size_t mpi_max_count = std::size_t{1} << 30;

// All-reduces go in pieces of 8 MiB. Open MPI reduces a large message through a temporary buffer as large as the
// message, and glibc gives an allocation over 32 MiB back to the kernel as soon as it is freed, so every call
// beyond that size page-faults its way through fresh memory: BERT-base's 436 MB of gradients in one MPI_Allreduce
// between two ranks took 175 ms here, 97 ms with glibc told to keep freed memory, 77 ms in 8 MiB pieces
// (docs/benchmarks.md). A piece costs one collective's latency, tens of microseconds, even between machines.
inline constexpr std::size_t all_reduce_piece = std::size_t{1} << 21;

}  // namespace detail

class mpi_communicator {
 public:
  /// Works on a duplicate of `comm` (MPI_COMM_WORLD unless told otherwise). Collective over `comm`. Needs MPI
  /// initialised (an mpi_environment alive); usage_error otherwise, or for MPI_COMM_NULL or an intercommunicator.
  explicit mpi_communicator(MPI_Comm comm = MPI_COMM_WORLD) {
    constexpr const char* where = "cputrain::dist::mpi_communicator";
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized == 0 || finalized != 0) {
      throw usage_error(std::string(where) + ": MPI is " + (finalized != 0 ? "already finalised" : "not initialised") +
                        "; construct a cputrain::dist::mpi_environment at the start of main() and keep it alive "
                        "while communicators exist");
    }
    if (comm == MPI_COMM_NULL) throw usage_error(std::string(where) + ": the communicator is MPI_COMM_NULL");
    int inter = 0;
    detail::check_mpi(MPI_Comm_test_inter(comm, &inter), where, "MPI_Comm_test_inter");
    if (inter != 0) {
      throw usage_error(std::string(where) + ": an intercommunicator was given; collectives here need an "
                        "intracommunicator such as MPI_COMM_WORLD");
    }
    comm_ = detail::boost_mpi_call(where, [&] { return boost::mpi::communicator(comm, boost::mpi::comm_duplicate); });
    detail::check_mpi(MPI_Comm_set_errhandler(native_handle(), MPI_ERRORS_RETURN), where, "MPI_Comm_set_errhandler");
    rank_ = comm_.rank();
    size_ = comm_.size();

    // Boost 1.74 has no split_shared: ranks that can share memory are the ranks on this machine.
    MPI_Comm shared = MPI_COMM_NULL;
    detail::check_mpi(MPI_Comm_split_type(native_handle(), MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &shared), where,
                      "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
    const int rank_rc = MPI_Comm_rank(shared, &local_rank_);
    const int size_rc = MPI_Comm_size(shared, &local_size_);
    MPI_Comm_free(&shared);
    detail::check_mpi(rank_rc, where, "MPI_Comm_rank(shared)");
    detail::check_mpi(size_rc, where, "MPI_Comm_size(shared)");
  }

  // One communicator, referred to by the reducers that use it: copies or moves would leave them pointing at a
  // different (or empty) one.
  mpi_communicator(const mpi_communicator&) = delete;
  mpi_communicator& operator=(const mpi_communicator&) = delete;
  mpi_communicator(mpi_communicator&&) = delete;
  mpi_communicator& operator=(mpi_communicator&&) = delete;
  ~mpi_communicator() = default;  // Boost frees the duplicate, unless MPI is already finalised

  // The accessors make no MPI call, so any thread may use them at any time.
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  /// This process among the processes of this communicator that run on the same machine.
  [[nodiscard]] int local_rank() const noexcept { return local_rank_; }
  [[nodiscard]] int local_size() const noexcept { return local_size_; }
  /// The duplicated MPI communicator, for MPI calls this class does not offer.
  [[nodiscard]] MPI_Comm native_handle() const noexcept { return static_cast<MPI_Comm>(comm_); }

  /// In place: every rank ends with the element-wise sum over ranks (MPI_Allreduce, MPI_IN_PLACE, MPI_SUM, in
  /// pieces of 8 MiB: see detail::all_reduce_piece). Every rank passes the same length. Like every method here,
  /// it may run on another thread than the caller's only as MPI's thread level allows (one MPI call at a time
  /// under MPI_THREAD_SERIALIZED).
  void all_reduce_sum(std::span<float> buffer) {
    for (std::size_t done = 0; done < buffer.size(); done += detail::all_reduce_piece) {
      const std::size_t count = std::min(detail::all_reduce_piece, buffer.size() - done);
      detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, buffer.data() + done, static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                                      native_handle()),
                        "cputrain::dist::mpi_communicator::all_reduce_sum", "MPI_Allreduce");
    }
  }

  /// In place: every rank ends with `root`'s values. Every rank passes the same length and root.
  void broadcast(std::span<float> buffer, int root) {
    constexpr const char* where = "cputrain::dist::mpi_communicator::broadcast";
    check_root(root, where);
    for (std::size_t done = 0; done < buffer.size(); done += detail::mpi_max_count) {
      const std::size_t count = std::min(detail::mpi_max_count, buffer.size() - done);
      detail::check_mpi(MPI_Bcast(buffer.data() + done, static_cast<int>(count), MPI_FLOAT, root, native_handle()),
                        where, "MPI_Bcast");
    }
  }

  /// Throws cputrain::error, naming `who`, unless MPI lets a second thread make this process's MPI calls (at least
  /// MPI_THREAD_SERIALIZED): what a reducer that overlaps communication with backward needs.
  static void check_calls_from_another_thread(const char* who) {
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_SERIALIZED) {
      throw error(std::string(who) + ": overlap needs MPI initialised with at least MPI_THREAD_SERIALIZED (the "
                  "communication thread calls MPI), but MPI provides " + mpi_thread_level_name(level) +
                  "; initialise MPI through cputrain::dist::mpi_environment, or set reducer_options::overlap = false");
    }
  }

  void barrier() {
    detail::boost_mpi_call("cputrain::dist::mpi_communicator::barrier", [&] { comm_.barrier(); });
  }

  /// The sum of `value` over ranks, on every rank (MPI_SUM over MPI_DOUBLE; the order of the additions is MPI's).
  [[nodiscard]] double all_reduce_sum(double value) {
    return detail::boost_mpi_call("cputrain::dist::mpi_communicator::all_reduce_sum(double)",
                                  [&] { return boost::mpi::all_reduce(comm_, value, std::plus<double>()); });
  }

  /// The largest `value` over ranks, on every rank.
  [[nodiscard]] std::int64_t all_reduce_max(std::int64_t value) {
    return detail::boost_mpi_call("cputrain::dist::mpi_communicator::all_reduce_max", [&] {
      return boost::mpi::all_reduce(comm_, value, boost::mpi::maximum<std::int64_t>());
    });
  }

  /// Every rank's string (any bytes, any length, empty too) at `root`, in rank order; an empty vector elsewhere.
  /// At most INT_MAX bytes in total (MPI's displacements are int); more throws usage_error on every rank.
  [[nodiscard]] std::vector<std::string> gather_strings(const std::string& mine, int root) {
    constexpr const char* where = "cputrain::dist::mpi_communicator::gather_strings";
    check_root(root, where);
    const gather_layout layout = layout_of(mine.size(), where, "bytes");
    std::string all;
    if (rank_ == root) all.resize(layout.total);
    detail::check_mpi(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), layout.counts.data(),
                                  layout.displacements.data(), MPI_BYTE, root, native_handle()),
                      where, "MPI_Gatherv");
    std::vector<std::string> strings;
    if (rank_ != root) return strings;
    strings.reserve(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      strings.push_back(all.substr(static_cast<std::size_t>(layout.displacements[static_cast<std::size_t>(r)]),
                                   static_cast<std::size_t>(layout.counts[static_cast<std::size_t>(r)])));
    }
    return strings;
  }

  /// Every rank's floats (any length, empty too) at `root`, one after the other in rank order; an empty vector
  /// elsewhere. At most INT_MAX floats in total; more throws usage_error on every rank.
  [[nodiscard]] std::vector<float> gatherv(std::span<const float> mine, int root) {
    constexpr const char* where = "cputrain::dist::mpi_communicator::gatherv";
    check_root(root, where);
    const gather_layout layout = layout_of(mine.size(), where, "floats");
    std::vector<float> all;
    if (rank_ == root) all.resize(layout.total);
    detail::check_mpi(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_FLOAT, all.data(), layout.counts.data(),
                                  layout.displacements.data(), MPI_FLOAT, root, native_handle()),
                      where, "MPI_Gatherv");
    return all;
  }

  /// in: [size, block], out: [size, block]: block b of this rank's `in` goes to rank b, which keeps it as its
  /// out[this rank] (MPI_Alltoall). Every rank passes the same lengths, a multiple of size(); a block of at most
  /// INT_MAX elements. The gradient reducer's bf16 exchange (distributed/bf16_bucket_exchange.hpp).
  void all_to_all(std::span<const bf16> in, std::span<bf16> out) {
    constexpr const char* where = "cputrain::dist::mpi_communicator::all_to_all";
    const int block = block_count(in.size(), out.size(), size_, where);
    detail::check_mpi(MPI_Alltoall(in.data(), block, MPI_UINT16_T, out.data(), block, MPI_UINT16_T, native_handle()),
                      where, "MPI_Alltoall");
  }

  /// in: [block], out: [size, block]: every rank's `in` in rank order (MPI_Allgather). Every rank passes the same
  /// lengths; a block of at most INT_MAX elements.
  void all_gather(std::span<const bf16> in, std::span<bf16> out) {
    constexpr const char* where = "cputrain::dist::mpi_communicator::all_gather";
    const int block = block_count(in.size() * static_cast<std::size_t>(size_), out.size(), size_, where);
    detail::check_mpi(MPI_Allgather(in.data(), block, MPI_UINT16_T, out.data(), block, MPI_UINT16_T, native_handle()),
                      where, "MPI_Allgather");
  }

  /// Every rank's `bytes` becomes `root`'s (any length; the others' lengths do not matter).
  void broadcast_bytes(std::string& bytes, int root) {
    constexpr const char* where = "cputrain::dist::mpi_communicator::broadcast_bytes";
    check_root(root, where);
    std::uint64_t length = bytes.size();
    detail::boost_mpi_call(where, [&] { boost::mpi::broadcast(comm_, length, root); });
    if (rank_ != root) bytes.resize(static_cast<std::size_t>(length));
    for (std::size_t done = 0; done < bytes.size(); done += detail::mpi_max_count) {
      const std::size_t count = std::min(detail::mpi_max_count, bytes.size() - done);
      detail::check_mpi(MPI_Bcast(bytes.data() + done, static_cast<int>(count), MPI_BYTE, root, native_handle()), where,
                        "MPI_Bcast");
    }
  }

 private:
  struct gather_layout {
    std::vector<int> counts;         // per rank
    std::vector<int> displacements;  // per rank
    std::size_t total = 0;
  };

  void check_root(int root, const char* where) const {
    if (root < 0 || root >= size_) {
      throw usage_error(std::string(where) + ": root " + std::to_string(root) +
                        " is not a rank of this communicator (its ranks are 0.." + std::to_string(size_ - 1) + ")");
    }
  }

  // The elements each rank sends to each: `whole` split in size() blocks, which `out` must hold.
  static int block_count(std::size_t whole, std::size_t out, int size, const char* where) {
    const auto ranks = static_cast<std::size_t>(size);
    if (whole != out || whole % ranks != 0 || whole / ranks > static_cast<std::size_t>(INT_MAX)) {
      throw usage_error(std::string(where) + ": " + std::to_string(whole) + " elements to send and room for " +
                        std::to_string(out) + " received; both must be the same multiple of the " +
                        std::to_string(size) + " ranks, with at most " + std::to_string(INT_MAX) + " per rank");
    }
    return static_cast<int>(whole / ranks);
  }

  // Every rank learns every length (not only the root), so a total too large for MPI is refused on all of them.
  gather_layout layout_of(std::size_t mine, const char* where, const char* unit) const {
    const auto my_length = static_cast<std::int64_t>(mine);
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(size_));
    detail::check_mpi(MPI_Allgather(&my_length, 1, MPI_INT64_T, lengths.data(), 1, MPI_INT64_T, native_handle()), where,
                      "MPI_Allgather");
    gather_layout layout;
    layout.counts.resize(lengths.size());
    layout.displacements.resize(lengths.size());
    std::int64_t total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      if (lengths[r] > INT_MAX - total) {
        throw usage_error(std::string(where) + ": the ranks' buffers add up to more than " + std::to_string(INT_MAX) +
                          " " + unit + ", the most one MPI gather can take; gather in pieces");
      }
      layout.counts[r] = static_cast<int>(lengths[r]);
      layout.displacements[r] = static_cast<int>(total);
      total += lengths[r];
    }
    layout.total = static_cast<std::size_t>(total);
    return layout;
  }

  boost::mpi::communicator comm_;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
};

static_assert(parallel::communicator<mpi_communicator>);

}  // namespace cputrain::dist
