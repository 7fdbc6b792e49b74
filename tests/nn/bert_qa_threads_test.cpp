// A training step of nn/bert_qa.hpp runs on the threads of the arena it is called in and on no others: oneDNN's
// OpenMP runtime (kernels/onednn_matmul.hpp) must never open a team of its own beside oneTBB's workers. Each
// test case runs in a process of its own (CTest runs every case alone), so the count of the process's threads
// starts from the test runner's one.
#include <catch2/catch.hpp>

#include <cstddef>
#include <filesystem>
#include <string>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/gemm_backend.hpp"
#include "cputrain/nn/bert_qa.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace bert_qa_threads_test {

namespace ct = cputrain;

namespace {

std::size_t process_threads() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

ct::nn::bert_config step_config() {
  ct::nn::bert_config c;
  c.vocab_size = 512;
  c.hidden_size = 256;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 1024;
  c.max_position_embeddings = 128;
  return c;
}

ct::nn::qa_batch step_batch() {
  ct::nn::qa_batch b;
  b.batch = 4;
  b.seq = 128;
  for (std::size_t i = 0; i < b.tokens(); ++i) {
    b.input_ids.push_back(1 + static_cast<std::int32_t>(ct::kernels::counter_random(3, 0, i) % 500));
    b.token_type_ids.push_back(0);
    b.attention_mask.push_back(1);
  }
  for (std::size_t i = 0; i < b.batch; ++i) {
    b.start_positions.push_back(static_cast<std::int64_t>(i * 7));
    b.end_positions.push_back(static_cast<std::int64_t>(i * 7 + 3));
  }
  return b;
}

template <class Precision>
void check_step_threads() {
  INFO("GEMM path: " << ct::kernels::gemm_path_description(std::is_same_v<Precision, ct::precision::bf16_mixed>));
  REQUIRE(process_threads() == 1);
  const auto batch = step_batch();
  // Everything, construction included, inside the arena: work outside one would start oneTBB's default arena.
  for (const int arena_threads : {1, 2}) {
    tbb::task_arena arena(arena_threads);
    arena.execute([&] {
      ct::nn::bert_qa<ct::policy<Precision>> model(step_config(), 1);
      for (std::uint64_t step = 0; step < 2; ++step) {
        model.forward(batch, {.training = true, .seed = 1, .step = step});
        model.backward();
      }
    });
    INFO("arena of " << arena_threads);
    CHECK(process_threads() <= static_cast<std::size_t>(arena_threads));
  }
}

}  // namespace

TEST_CASE("a bf16 training step runs no thread beyond its arena's") {
  check_step_threads<ct::precision::bf16_mixed>();
}

TEST_CASE("an fp32 training step runs no thread beyond its arena's") { check_step_threads<ct::precision::fp32>(); }

}  // namespace bert_qa_threads_test
