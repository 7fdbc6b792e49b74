// Runs as a singleton (a world of one) and under mpirun with 2 and 3 ranks (tests/mpi/CMakeLists.txt). The
// averaged gradients are compared bit for bit with one plain all-reduce of the whole buffer divided by the world
// size, and with the average computed here from every rank's values. The values are multiples of 1/4 below 2^12,
// so their sums are exact in float whatever order MPI adds them in: any difference is a bucket reduced twice,
// missed, divided twice or reduced before backward had written it. A fake communicator (a pretend world of two)
// drives the communication thread even in a singleton run, and lets a collective fail on purpose.
#include <catch2/catch.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cputrain/mpi/gradient_reducer.hpp"
#include "cputrain/mpi/communicator.hpp"
#include "support/checks.hpp"
#include "cputrain/policy/parallel/single.hpp"

using cputrain::dist::basic_gradient_reducer;
using cputrain::dist::gradient_reducer;
using cputrain::dist::mpi_communicator;
using cputrain::test::says;
using cputrain::dist::reducer_options;

namespace {

using bucket_list = std::vector<std::pair<std::size_t, std::size_t>>;

// A small BERT-like layout: an embedding, a few "layers" of tensors of awkward sizes, a head.
struct layout {
  std::vector<std::size_t> offsets;
  std::size_t length = 0;
};

layout bert_like_layout() {
  layout l;
  const auto add = [&](std::size_t n) {
    l.offsets.push_back(l.length);
    l.length += n;
  };
  add(3001);  // word embeddings
  add(97);    // position embeddings
  add(2);     // token types
  add(16);
  add(16);  // LayerNorm
  for (int layer = 0; layer < 3; ++layer) {
    for (int qkvo = 0; qkvo < 4; ++qkvo) {
      add(256);  // weight
      add(16);   // bias
    }
    add(16);
    add(16);
    add(1024);
    add(64);
    add(1024);
    add(16);
    add(16);
    add(16);
  }
  add(32);
  add(2);  // QA head
  return l;
}

// Rank r's gradient at index i in step s: a multiple of 1/4 in (-1024, 1024).
float grad_value(int rank, std::size_t i, int step) {
  const auto k = static_cast<int>((i * 37 + static_cast<std::size_t>(rank) * 1001 + static_cast<std::size_t>(step) * 7919) % 8191);
  return static_cast<float>(k - 4095) * 0.25f;
}

std::vector<float> expected_average(std::size_t length, int size, int step) {
  std::vector<float> avg(length);
  for (std::size_t i = 0; i < length; ++i) {
    float sum = 0;
    for (int r = 0; r < size; ++r) sum += grad_value(r, i, step);
    avg[i] = sum / static_cast<float>(size);
  }
  return avg;
}

// Backward as a trainer runs it: each tensor's gradients are written, last tensor first, and then declared final.
// A reducer that read a bucket before ready_from covered it would see the stale values (NaN here).
template <class Reducer>
void backward_with_ready_from(Reducer& reducer, std::span<float> grads, const layout& l, int rank, int step) {
  std::size_t end = l.length;
  for (std::size_t t = l.offsets.size(); t-- > 0;) {
    for (std::size_t i = l.offsets[t]; i < end; ++i) grads[i] = grad_value(rank, i, step);
    reducer.ready_from(l.offsets[t]);
    end = l.offsets[t];
  }
}

void fill(std::span<float> grads, int rank, int step) {
  for (std::size_t i = 0; i < grads.size(); ++i) grads[i] = grad_value(rank, i, step);
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The buckets must tile [0, length) from the end backwards, each cut at tensor offsets, each at most
// bucket_bytes unless it is a single tensor, and none could have taken the tensor before it (greedy).
void check_tiling(const bucket_list& buckets, const layout& l, std::size_t bucket_bytes) {
  REQUIRE_FALSE(buckets.empty());
  CHECK(buckets.front().second == l.length);
  CHECK(buckets.back().first == 0);
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const auto [begin, end] = buckets[b];
    INFO("bucket " << b << " [" << begin << ", " << end << ")");
    CHECK(begin < end);
    if (b + 1 < buckets.size()) CHECK(buckets[b + 1].second == begin);
    CHECK(std::binary_search(l.offsets.begin(), l.offsets.end(), begin));
    const auto first = std::lower_bound(l.offsets.begin(), l.offsets.end(), begin);
    const auto last = std::lower_bound(l.offsets.begin(), l.offsets.end(), end);
    const auto tensors = last - first;
    CHECK((tensors == 1 || (end - begin) * sizeof(float) <= bucket_bytes));
    if (first != l.offsets.begin()) {
      const std::size_t previous_tensor = begin - *(first - 1);
      CHECK((end - begin + previous_tensor) * sizeof(float) > bucket_bytes);
    }
  }
}

// A pretend world of two ranks whose other rank holds the same gradients: a sum is twice the values. It records
// the buckets it was given and can be told to fail on the k-th call.
class fake_pair {
 public:
  explicit fake_pair(std::span<const float> whole) : whole_(whole) {}
  [[nodiscard]] int rank() const { return 0; }
  [[nodiscard]] int size() const { return 2; }
  void all_reduce_sum(std::span<float> buffer) {
    std::size_t call = 0;
    {
      const std::lock_guard lock(mutex_);
      call = calls_.size();
      calls_.emplace_back(static_cast<std::size_t>(buffer.data() - whole_.data()),
                          static_cast<std::size_t>(buffer.data() - whole_.data()) + buffer.size());
      threads_.push_back(std::this_thread::get_id());
    }
    if (call == fail_on_) throw std::runtime_error("the network went away");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    for (float& x : buffer) x += x;
  }
  void broadcast(std::span<float>, int) {}
  void barrier() {}
  // The other "rank" agrees with this one on everything.
  [[nodiscard]] double all_reduce_sum(double value) { return value + value; }
  [[nodiscard]] std::int64_t all_reduce_max(std::int64_t value) { return value; }
  [[nodiscard]] std::vector<float> gatherv(std::span<const float> part, int) {
    std::vector<float> both(part.begin(), part.end());
    both.insert(both.end(), part.begin(), part.end());
    return both;
  }

  void fail_on(std::size_t call) { fail_on_ = call; }
  bucket_list calls() {
    const std::lock_guard lock(mutex_);
    return calls_;
  }
  std::vector<std::thread::id> threads() {
    const std::lock_guard lock(mutex_);
    return threads_;
  }
  void clear() {
    const std::lock_guard lock(mutex_);
    calls_.clear();
    threads_.clear();
  }

 private:
  std::span<const float> whole_;
  std::mutex mutex_;
  bucket_list calls_;
  std::vector<std::thread::id> threads_;
  std::size_t fail_on_ = static_cast<std::size_t>(-1);
};
static_assert(cputrain::parallel::communicator<fake_pair>);

}  // namespace

TEST_CASE("gradient_reducer: buckets are cut at tensor offsets, from the end backwards") {
  mpi_communicator comm;
  // Tensors [0,10) [10,30) [30,35) [35,100) [100,120); 40 floats per bucket.
  std::vector<float> grads(120);
  const std::vector<std::size_t> offsets = {0, 10, 30, 35, 100};
  gradient_reducer reducer(comm, grads, offsets, {.bucket_bytes = 40 * sizeof(float), .overlap = true});
  CHECK(reducer.buckets() == bucket_list{{100, 120}, {35, 100}, {0, 35}});
  CHECK(reducer.bucket_count() == 3);

  gradient_reducer per_tensor(comm, grads, offsets, {.bucket_bytes = 0, .overlap = true});
  CHECK(per_tensor.buckets() == bucket_list{{100, 120}, {35, 100}, {30, 35}, {10, 30}, {0, 10}});
  gradient_reducer one(comm, grads, offsets, {.bucket_bytes = 120 * sizeof(float), .overlap = true});
  CHECK(one.buckets() == bucket_list{{0, 120}});
  // Empty tensors (repeated offsets, one at the very end) cut nothing of their own.
  const std::vector<std::size_t> with_empty = {0, 10, 10, 30, 35, 100, 120};
  gradient_reducer empties(comm, grads, with_empty, {.bucket_bytes = 0, .overlap = true});
  CHECK(empties.buckets() == bucket_list{{100, 120}, {35, 100}, {30, 35}, {10, 30}, {0, 10}});
}

TEST_CASE("gradient_reducer: buckets tile a BERT-like buffer for every bucket size") {
  mpi_communicator comm;
  const layout l = bert_like_layout();
  std::vector<float> grads(l.length);
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{4}, std::size_t{100 * 4}, std::size_t{1500 * 4},
                                  std::size_t{5000 * 4}, l.length * 4, std::size_t{25} << 20}) {
    INFO("bucket_bytes " << bytes);
    gradient_reducer reducer(comm, grads, l.offsets, {.bucket_bytes = bytes, .overlap = true});
    check_tiling(reducer.buckets(), l, bytes);
    CHECK(reducer.bucket_count() == reducer.buckets().size());
    if (bytes <= 4) CHECK(reducer.bucket_count() == l.offsets.size());
    if (bytes >= l.length * 4) CHECK(reducer.bucket_count() == 1);
  }
}

TEST_CASE("gradient_reducer: the average equals a plain all-reduce divided by the world size, bit for bit") {
  mpi_communicator comm;
  const layout l = bert_like_layout();
  const int rank = comm.rank();
  const int size = comm.size();

  // 1 tensor per bucket; buckets smaller than most tensors; a few tensors per bucket; one bucket for everything.
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{64}, std::size_t{1500 * 4}, l.length * 4}) {
    for (const bool overlap : {true, false}) {
      for (const bool call_ready_from : {true, false}) {
        INFO("bucket_bytes " << bytes << ", overlap " << overlap << ", ready_from " << call_ready_from);
        std::vector<float> grads(l.length, std::numeric_limits<float>::quiet_NaN());
        gradient_reducer reducer(comm, grads, l.offsets, {.bucket_bytes = bytes, .overlap = overlap});
        for (int step = 0; step < 3; ++step) {
          INFO("step " << step);
          std::fill(grads.begin(), grads.end(), std::numeric_limits<float>::quiet_NaN());
          if (call_ready_from) {
            backward_with_ready_from(reducer, grads, l, rank, step);
          } else {
            fill(grads, rank, step);
          }
          reducer.finish();

          std::vector<float> plain(l.length);
          fill(plain, rank, step);
          comm.all_reduce_sum(plain);
          for (float& x : plain) x /= static_cast<float>(size);
          CHECK(same_bits(grads, plain));
          CHECK(same_bits(grads, expected_average(l.length, size, step)));

          const auto& stats = reducer.last_step();
          CHECK(stats.buckets == (size > 1 ? reducer.bucket_count() : 0));
          CHECK(stats.communication_seconds >= 0);
          CHECK(stats.exposed_seconds >= 0);
          if (size == 1) CHECK(stats.communication_seconds == 0);
        }
      }
    }
  }
}

TEST_CASE("gradient_reducer: average = false leaves the plain sum over ranks") {
  mpi_communicator comm;
  const layout l = bert_like_layout();
  for (const bool overlap : {true, false}) {
    std::vector<float> grads(l.length);
    gradient_reducer reducer(comm, grads, l.offsets, {.bucket_bytes = 1500 * 4, .overlap = overlap, .average = false});
    backward_with_ready_from(reducer, grads, l, comm.rank(), 0);
    reducer.finish();
    std::vector<float> plain(l.length);
    fill(plain, comm.rank(), 0);
    comm.all_reduce_sum(plain);
    CHECK(same_bits(grads, plain));
  }
}

TEST_CASE("gradient_reducer: overlap on and off give identical bits, and ready_from in pieces changes nothing") {
  mpi_communicator comm;
  const layout l = bert_like_layout();
  std::vector<float> a(l.length);
  std::vector<float> b(l.length);
  gradient_reducer with(comm, a, l.offsets, {.bucket_bytes = 2000, .overlap = true});
  gradient_reducer without(comm, b, l.offsets, {.bucket_bytes = 2000, .overlap = false});
  for (int step = 0; step < 4; ++step) {
    fill(a, comm.rank(), step);
    fill(b, comm.rank(), step);
    // Offsets in the middle of tensors and repeated ones hand over only whole buckets.
    with.ready_from(l.length);
    with.ready_from(l.length - 1);
    with.ready_from(l.length / 2 + 3);
    with.ready_from(l.length / 2 + 3);
    with.ready_from(l.length / 3);
    with.finish();
    without.ready_from(l.length / 2);
    without.finish();
    CHECK(same_bits(a, b));
    CHECK(same_bits(a, expected_average(l.length, comm.size(), step)));
  }
}

// What the bf16 wire gives (bf16_bucket_exchange_test checks the exchange itself): every rank's values rounded to
// bf16, summed in fp32, divided, rounded once more. Sums of these values are exact in fp32 in any order.
std::vector<float> expected_bf16_average(std::size_t length, int size, int step) {
  std::vector<float> avg(length);
  for (std::size_t i = 0; i < length; ++i) {
    float sum = 0;
    for (int r = 0; r < size; ++r) sum += static_cast<float>(cputrain::bf16(grad_value(r, i, step)));
    avg[i] = static_cast<float>(cputrain::bf16(sum / static_cast<float>(size)));
  }
  return avg;
}

TEST_CASE("gradient_reducer: bf16 on the wire gives the rounded average on every rank, for every bucket size") {
  mpi_communicator comm;
  const layout l = bert_like_layout();
  const int size = comm.size();
  for (const std::size_t bytes : {std::size_t{0}, std::size_t{1500 * 4}, l.length * 4}) {
    for (const bool overlap : {true, false}) {
      INFO("bucket_bytes " << bytes << ", overlap " << overlap);
      std::vector<float> grads(l.length);
      gradient_reducer reducer(comm, grads, l.offsets,
                               {.bucket_bytes = bytes, .overlap = overlap, .wire = cputrain::dist::wire_dtype::bf16});
      gradient_reducer fp32(comm, grads, l.offsets, {.bucket_bytes = bytes, .overlap = overlap});
      for (int step = 0; step < 2; ++step) {
        backward_with_ready_from(reducer, grads, l, comm.rank(), step);
        reducer.finish();
        const std::vector<float> expected = size > 1 ? expected_bf16_average(l.length, size, step)
                                                     : expected_average(l.length, size, step);
        CHECK(same_bits(grads, expected));
        const std::vector<float> everyone = comm.gatherv(grads, 0);
        for (int r = 0; comm.rank() == 0 && r < size; ++r) {
          CHECK(std::memcmp(everyone.data() + static_cast<std::size_t>(r) * l.length, grads.data(),
                            l.length * sizeof(float)) == 0);
        }
      }
      // The bytes: about half of fp32's (each bucket's last shard is padded to the world size).
      fill(grads, comm.rank(), 0);
      fp32.finish();
      const std::size_t fp32_bytes = fp32.last_step().sent_bytes;
      const std::size_t bf16_bytes = reducer.last_step().sent_bytes;
      if (size == 1) {
        CHECK(fp32_bytes == 0);
        CHECK(bf16_bytes == 0);
      } else {
        std::size_t ring = 0;  // a ring all-reduce of each bucket
        for (const auto& [begin, end] : fp32.buckets()) {
          ring += 2 * static_cast<std::size_t>(size - 1) * (end - begin) * 4 / static_cast<std::size_t>(size);
        }
        CHECK(fp32_bytes == ring);
        CHECK(bf16_bytes * 2 >= fp32_bytes);
        CHECK(bf16_bytes * 2 <= fp32_bytes + reducer.bucket_count() * static_cast<std::size_t>(8 * size));
      }
    }
  }
}

TEST_CASE("gradient_reducer: bf16 on the wire is refused for a communicator that cannot move bf16") {
  const layout l = bert_like_layout();
  std::vector<float> grads(l.length);
  fake_pair pair(grads);
  CHECK_THROWS_MATCHES(
      basic_gradient_reducer<fake_pair>(pair, grads, l.offsets, {.wire = cputrain::dist::wire_dtype::bf16}),
      cputrain::usage_error, says("needs a communicator with all_to_all and all_gather of bf16"));
  // In a world of one nothing travels, so any communicator will do.
  cputrain::parallel::single::communicator one;
  basic_gradient_reducer<cputrain::parallel::single::communicator> alone(one, grads, l.offsets,
                                                                        {.wire = cputrain::dist::wire_dtype::bf16});
  alone.finish();
  CHECK(alone.last_step().sent_bytes == 0);
}

TEST_CASE("gradient_reducer: in a world of one the gradients are untouched and nothing is reduced") {
  mpi_communicator self(MPI_COMM_SELF);
  const layout l = bert_like_layout();
  std::vector<float> grads(l.length);
  fill(grads, 5, 1);
  // A signalling NaN comes out of any arithmetic, even a division by one, as a quiet NaN: untouched means untouched.
  grads[17] = std::numeric_limits<float>::signaling_NaN();
  const std::vector<float> before = grads;
  for (const bool overlap : {true, false}) {
    gradient_reducer reducer(self, grads, l.offsets, {.bucket_bytes = 1000, .overlap = overlap});
    backward_with_ready_from(reducer, grads, l, 5, 1);
    grads[17] = std::numeric_limits<float>::signaling_NaN();
    reducer.finish();
    reducer.finish();
    CHECK(same_bits(grads, before));
    CHECK(reducer.last_step().buckets == 0);
    CHECK(reducer.last_step().communication_seconds == 0);
  }
  // The single-process policy's communicator works too.
  cputrain::parallel::single::communicator one;
  basic_gradient_reducer<cputrain::parallel::single::communicator> reducer(one, grads, l.offsets);
  reducer.finish();
  CHECK(same_bits(grads, before));
}

TEST_CASE("gradient_reducer: bad construction arguments and offsets throw usage_error") {
  mpi_communicator comm;
  std::vector<float> grads(100);
  const auto make = [&](std::vector<std::size_t> offsets) { gradient_reducer r(comm, grads, offsets); };
  CHECK_THROWS_MATCHES(make({}), cputrain::usage_error, says("tensor_offsets is empty"));
  CHECK_THROWS_MATCHES(make({5, 10}), cputrain::usage_error, says("tensor_offsets[0] is 5"));
  CHECK_THROWS_MATCHES(make({0, 50, 20}), cputrain::usage_error,
                       says("not sorted: tensor_offsets[2] = 20 comes after tensor_offsets[1] = 50"));
  CHECK_THROWS_MATCHES(make({0, 50, 101}), cputrain::usage_error,
                       says("tensor_offsets[2] = 101 lies beyond the gradient buffer of 100 floats"));

  gradient_reducer reducer(comm, grads, std::vector<std::size_t>{0, 50});
  CHECK_THROWS_MATCHES(reducer.ready_from(101), cputrain::usage_error,
                       says("offset 101 lies beyond the gradient buffer of 100 floats"));
  // The reducer is still usable after the refused call.
  fill(grads, comm.rank(), 0);
  reducer.ready_from(50);
  reducer.finish();
  CHECK(same_bits(grads, expected_average(100, comm.size(), 0)));
}

TEST_CASE("gradient_reducer: ranks that cut different buckets are refused on every rank") {
  mpi_communicator comm;
  const layout l = bert_like_layout();
  std::vector<float> grads(l.length);
  if (comm.size() == 1) {
    SUCCEED("a world of one has no other rank to disagree with");
    return;
  }
  // The last rank asks for smaller buckets than the others.
  const std::size_t bytes = comm.rank() == comm.size() - 1 ? 1000 : 4000;
  CHECK_THROWS_MATCHES(gradient_reducer(comm, grads, l.offsets, {.bucket_bytes = bytes, .overlap = true}),
                       cputrain::usage_error, says("the ranks cut different buckets"));
  // A different buffer length on one rank, same offsets.
  std::vector<float> longer(l.length + (comm.rank() == 0 ? 1 : 0));
  CHECK_THROWS_AS(gradient_reducer(comm, longer, l.offsets), cputrain::usage_error);
}

TEST_CASE("gradient_reducer: an empty buffer has no buckets and finishes at once") {
  mpi_communicator comm;
  std::vector<float> grads;
  gradient_reducer reducer(comm, grads, std::vector<std::size_t>{0});
  CHECK(reducer.bucket_count() == 0);
  reducer.ready_from(0);
  reducer.finish();
  CHECK(reducer.last_step().buckets == 0);
}

TEST_CASE("gradient_reducer: the communication thread reduces buckets in order while the caller goes on") {
  const layout l = bert_like_layout();
  std::vector<float> grads(l.length);
  fake_pair comm(grads);
  basic_gradient_reducer<fake_pair> reducer(comm, grads, l.offsets, {.bucket_bytes = 3000, .overlap = true});
  for (int step = 0; step < 3; ++step) {
    comm.clear();
    backward_with_ready_from(reducer, grads, l, 0, step);
    reducer.finish();
    // The other "rank" has the same values: the average is the rank's own values again.
    std::vector<float> own(l.length);
    fill(own, 0, step);
    CHECK(same_bits(grads, own));
    CHECK(comm.calls() == reducer.buckets());
    const auto threads = comm.threads();
    CHECK(std::all_of(threads.begin(), threads.end(), [&](auto id) { return id == threads.front(); }));
    CHECK(threads.front() != std::this_thread::get_id());
    CHECK(reducer.last_step().buckets == reducer.bucket_count());
    CHECK(reducer.last_step().communication_seconds > 0);
  }
  // overlap = false: the same collectives, on the calling thread.
  fake_pair inline_comm(grads);
  basic_gradient_reducer<fake_pair> inline_reducer(inline_comm, grads, l.offsets,
                                                   {.bucket_bytes = 3000, .overlap = false});
  fill(grads, 0, 0);
  inline_reducer.finish();
  CHECK(inline_comm.calls() == inline_reducer.buckets());
  CHECK(inline_comm.threads().front() == std::this_thread::get_id());
}

TEST_CASE("gradient_reducer: ready_from hands over exactly the buckets lying wholly inside the finished part") {
  const layout l = bert_like_layout();
  std::vector<float> grads(l.length);
  fake_pair comm(grads);
  basic_gradient_reducer<fake_pair> reducer(comm, grads, l.offsets, {.bucket_bytes = 3000, .overlap = true});
  const auto buckets = reducer.buckets();
  REQUIRE(buckets.size() > 3);
  std::size_t end = l.length;
  for (std::size_t t = l.offsets.size(); t-- > 0;) {
    const std::size_t offset = l.offsets[t];
    fill(std::span<float>(grads).subspan(offset, end - offset), 0, 0);
    reducer.ready_from(offset);
    end = offset;
    const auto expected = static_cast<std::size_t>(
        std::count_if(buckets.begin(), buckets.end(), [&](const auto& b) { return b.first >= offset; }));
    // Wait for the thread to take what it was given, then give it time to take more than that (it must not).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (comm.calls().size() < expected && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    INFO("ready from " << offset);
    REQUIRE(comm.calls().size() == expected);
  }
  reducer.finish();
  CHECK(comm.calls() == buckets);
}

TEST_CASE("gradient_reducer: a collective that throws on the communication thread surfaces from finish()") {
  const layout l = bert_like_layout();
  std::vector<float> grads(l.length);
  fake_pair comm(grads);
  basic_gradient_reducer<fake_pair> reducer(comm, grads, l.offsets, {.bucket_bytes = 3000, .overlap = true});
  REQUIRE(reducer.bucket_count() > 3);
  comm.fail_on(1);
  backward_with_ready_from(reducer, grads, l, 0, 0);
  const auto second = reducer.buckets()[1];
  CHECK_THROWS_MATCHES(reducer.finish(), cputrain::error,
                       says("reducing bucket 1 of " + std::to_string(reducer.bucket_count()) +
                                                 " (floats [" + std::to_string(second.first) + ", " +
                                                 std::to_string(second.second) + ")) failed: the network went away"));
  // After the failure this rank made no further collective in that step.
  CHECK(comm.calls().size() == 2);

  // The next step works.
  comm.fail_on(static_cast<std::size_t>(-1));
  comm.clear();
  backward_with_ready_from(reducer, grads, l, 0, 1);
  reducer.finish();
  std::vector<float> own(l.length);
  fill(own, 0, 1);
  CHECK(same_bits(grads, own));

  // The same on the calling thread.
  fake_pair inline_comm(grads);
  basic_gradient_reducer<fake_pair> inline_reducer(inline_comm, grads, l.offsets,
                                                   {.bucket_bytes = 3000, .overlap = false});
  inline_comm.fail_on(0);
  CHECK_THROWS_MATCHES(inline_reducer.finish(), cputrain::error,
                       says("reducing bucket 0 of"));
}

TEST_CASE("gradient_reducer: destroying a reducer mid-step does not hang") {
  const layout l = bert_like_layout();
  std::vector<float> grads(l.length);
  fake_pair comm(grads);
  {
    basic_gradient_reducer<fake_pair> reducer(comm, grads, l.offsets, {.bucket_bytes = 0, .overlap = true});
    reducer.ready_from(0);  // every bucket handed over, no finish()
  }
  CHECK(comm.calls().size() <= l.offsets.size());
}
