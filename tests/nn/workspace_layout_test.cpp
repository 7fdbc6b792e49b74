// Tests for include/cputrain/nn/workspace_layout.hpp: a description read by workspace_tally (counts, checked in 64
// bits) and by workspace_carver (consecutive pieces of the two buffers, kept floats before the scratch).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "cputrain/core/bf16.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/nn/workspace_layout.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace workspace_layout_test {

using cputrain::bf16;
using cputrain::nn::workspace_carver;
using cputrain::nn::workspace_size;
using cputrain::nn::workspace_tally;

struct pieces {
  bf16* a = nullptr;
  float* stats = nullptr;
  bf16* b = nullptr;
  float* scratch = nullptr;
  float* more_stats = nullptr;
};

// One description, as layers write theirs: pieces of each kind, interleaved.
template <class Carver>
pieces describe(Carver& c, std::uint64_t tokens) {
  pieces p;
  p.a = c.kept({tokens, 8});
  p.stats = c.kept_float({tokens});
  p.b = c.kept({2, tokens, 3});
  p.scratch = c.scratch({tokens, 5});
  p.more_stats = c.kept_float({tokens, 2});
  return p;
}

TEST_CASE("the tally counts each kind and the carver hands out consecutive pieces of the sizes counted") {
  workspace_tally<bf16> tally("test");
  const pieces none = describe(tally, 10);
  CHECK(none.a == nullptr);
  CHECK(tally.size().kept == 10 * 8 + 2 * 10 * 3);
  CHECK(tally.size().kept_floats == 10 + 20);
  CHECK(tally.size().scratch == 50);

  std::vector<bf16> kept(tally.size().kept);
  std::vector<float> floats(tally.size().kept_floats + tally.size().scratch);
  workspace_carver<bf16> carver(kept.data(), floats.data(), tally.size());
  const pieces p = describe(carver, 10);
  CHECK(p.a == kept.data());
  CHECK(p.b == kept.data() + 80);
  CHECK(p.stats == floats.data());
  CHECK(p.more_stats == floats.data() + 10);
  // The scratch after every kept float, whatever order the description asked in.
  CHECK(p.scratch == floats.data() + 30);
  CHECK(p.scratch + 50 == floats.data() + floats.size());
}

TEST_CASE("copies of a described block multiply each kind") {
  workspace_tally<bf16> block("block");
  (void)describe(block, 4);
  workspace_tally<bf16> all("all");
  (void)all.scratch({7});
  all.add_copies(block, 3);
  CHECK(all.size().kept == 3 * block.size().kept);
  CHECK(all.size().kept_floats == 3 * block.size().kept_floats);
  CHECK(all.size().scratch == 7 + 3 * block.size().scratch);
}

TEST_CASE("a count beyond 64 bits is refused with the description's name") {
  workspace_tally<float> tally("--per_device_train_batch_size 1099511627776 x --max_seq_length 1073741824");
  CHECK_THROWS_WITH(tally.kept({std::uint64_t{1} << 40, std::uint64_t{1} << 30}),
                    Catch::Contains("--per_device_train_batch_size 1099511627776") && Catch::Contains("64-bit"));
  workspace_tally<float> sum("sum");
  (void)sum.scratch({std::uint64_t{1} << 63});
  CHECK_THROWS_AS(sum.scratch({std::uint64_t{1} << 63}), cputrain::usage_error);
  workspace_tally<float> copies("copies");
  (void)copies.kept({std::uint64_t{1} << 40});
  workspace_tally<float> all("all");
  CHECK_THROWS_WITH(all.add_copies(copies, std::uint64_t{1} << 30), Catch::Contains("all"));
}

}  // namespace workspace_layout_test
