// Tests for include/cputrain/nn/model_memory.hpp: the sizes computed from a config are the ones bert_qa allocates,
// and configs or batches that cannot be counted, or cannot fit, are refused by name before anything is allocated.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <string>
#include <type_traits>

#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/nn/model_memory.hpp"
#include "cputrain/nn/masked_lm_head.hpp"
#include "cputrain/nn/sequence_classification_head.hpp"
#include "cputrain/nn/token_classification_head.hpp"
#include "support/sanitizers.hpp"

namespace ct = cputrain;
using Catch::Matchers::Contains;
using ct::nn::bert_config;

// Counts the bytes allocated while an allocation_counter lives (tests run one at a time, so a global will do).
// Without AddressSanitizer plain and aligned operator new are replaced for this executable (new[], nothrow and
// sized forms forward to these in libstdc++), and past the counter's budget they throw std::bad_alloc, so a
// constructor that starts building what cannot fit ends at once. Under ASan, whose runtime hands out some blocks from
// its own operator new, the allocator's malloc hook counts instead (it cannot throw).
namespace {
std::atomic<bool> counting{false};
std::atomic<std::size_t> counted_bytes{0};
std::size_t counting_budget = 0;

void count(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) counted_bytes.fetch_add(size, std::memory_order_relaxed);
}

struct allocation_counter {
  explicit allocation_counter(std::size_t budget) {
    counting_budget = budget;
    counted_bytes = 0;
    counting = true;
  }
  ~allocation_counter() { counting = false; }
  allocation_counter(const allocation_counter&) = delete;
  allocation_counter& operator=(const allocation_counter&) = delete;
  [[nodiscard]] std::size_t bytes() const { return counted_bytes.load(); }
};
}  // namespace

#if CPUTRAIN_TEST_ASAN
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, std::size_t),
                                                        void (*free_hook)(const volatile void*));
namespace {
[[maybe_unused]] const int hooks_installed = __sanitizer_install_malloc_and_free_hooks(
    [](const volatile void*, std::size_t size) { count(size); }, [](const volatile void*) {});
}  // namespace
#else
namespace {
void* counted_new(std::size_t size, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed)) {
    count(size);
    if (counted_bytes.load(std::memory_order_relaxed) > counting_budget) throw std::bad_alloc();
  }
  void* p = nullptr;
  if (alignment <= __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    p = std::malloc(size == 0 ? 1 : size);
  } else if (posix_memalign(&p, alignment, size == 0 ? 1 : size) != 0) {
    p = nullptr;
  }
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace
void* operator new(std::size_t size) { return counted_new(size, 0); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  return counted_new(size, static_cast<std::size_t>(alignment));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#endif

namespace {

bert_config small(int layers, int hidden, int heads, int inter, int vocab) {
  bert_config c;
  c.num_hidden_layers = layers;
  c.hidden_size = hidden;
  c.num_attention_heads = heads;
  c.intermediate_size = inter;
  c.vocab_size = vocab;
  c.max_position_embeddings = 40;
  return c;
}

ct::nn::qa_batch batch_of(std::size_t batch, std::size_t seq) {
  ct::nn::qa_batch b;
  b.batch = batch;
  b.seq = seq;
  b.input_ids.assign(batch * seq, 1);
  b.token_type_ids.assign(batch * seq, 0);
  b.attention_mask.assign(batch * seq, 1);
  return b;
}

double item(const ct::memory_bill& bill, const std::string& what) {
  for (const auto& i : bill.items())
    if (i.what == what) return i.bytes;
  FAIL("no item " << what);
  return 0;
}

}  // namespace

TEST_CASE("parameter_count is the size of bert_qa's parameter buffer, padding included") {
  for (const auto& c : {small(1, 8, 2, 16, 30), small(3, 24, 3, 40, 101), small(2, 64, 4, 256, 1000)}) {
    const ct::nn::bert_qa<> model(c);
    CHECK(ct::nn::parameter_count(c) == model.params().size());
  }
  // bert-base-uncased: 109 M parameters (Hugging Face's count: 108,893,186 with the QA head), plus padding
  const auto base = ct::nn::parameter_count(bert_config{});
  CHECK(base >= 108'893'186u);
  CHECK(base < 108'893'186u + 16u * 220u);
}

TEST_CASE("every head's parameter count and activation bill are what its model allocates") {
  bert_config c = small(2, 32, 4, 64, 50);
  c.num_labels = 7;
  auto check = [&](auto model, auto batch) {
    using head = typename decltype(model)::head_type;
    CHECK(ct::nn::parameter_count<head>(c) == model.params().size());
    batch.batch = 3;
    batch.seq = 10;
    batch.input_ids.assign(30, 1);
    batch.token_type_ids.assign(30, 0);
    batch.attention_mask.assign(30, 1);
    (void)model.forward(batch, {.training = false});
    const auto bill = ct::nn::activation_memory<head>(c, 4, {3, 10});
    const double stats = 4.0 * 30 * (2 + 4 * c.num_hidden_layers);
    double head_stats = 0;  // the sequence head keeps its tanh output in float
    if constexpr (std::is_same_v<head, ct::nn::sequence_classification_head>) head_stats = 4.0 * 3 * 32;
    // the masked-LM head keeps GELU's input and output [T, W] and its LayerNorm's statistics in float
    if constexpr (std::is_same_v<head, ct::nn::masked_lm_head>) head_stats = 4.0 * (2 * 30 * c.embedding_width() + 2 * 30);
    CHECK(item(bill, "activations kept for backward") == static_cast<double>(model.activation_bytes()) + stats + head_stats);
    CHECK(item(bill, "layer workspace") + item(bill, "head workspace") == static_cast<double>(model.scratch_bytes()));
  };
  check(ct::nn::encoder_model<ct::nn::sequence_classification_head>(c), ct::nn::sequence_classification_batch{});
  check(ct::nn::encoder_model<ct::nn::token_classification_head>(c), ct::nn::token_classification_batch{});
  check(ct::nn::encoder_model<ct::nn::masked_lm_head>(c), ct::nn::masked_lm_batch{});
  // ELECTRA: narrower embeddings and their projection, counted and carved like the rest
  bert_config electra = c;
  electra.model_type = "electra";
  electra.embedding_size = 16;
  const bert_config saved = c;
  c = electra;
  check(ct::nn::encoder_model<ct::nn::qa_head>(c), ct::nn::qa_batch{});
  check(ct::nn::encoder_model<ct::nn::token_classification_head>(c), ct::nn::token_classification_batch{});
  check(ct::nn::encoder_model<ct::nn::masked_lm_head>(c), ct::nn::masked_lm_batch{});
  // the tables are 16 wide instead of 32, and embeddings_project [32, 16] + [32] is added
  CHECK(ct::nn::parameter_count<ct::nn::qa_head>(saved) - ct::nn::parameter_count<ct::nn::qa_head>(electra) ==
        (50 + 40 + 2) * 16 + 2 * 16 - (32 * 16 + 32));
  c = saved;
  // the heads differ: pooler and classifier [7, 32] against classifier alone
  CHECK(ct::nn::parameter_count<ct::nn::sequence_classification_head>(c) -
            ct::nn::parameter_count<ct::nn::token_classification_head>(c) ==
        32 * 32 + 32);
}

TEST_CASE("the model's bill: weights and gradients in float, plus the bf16 copy when the products take bf16") {
  const bert_config c = small(2, 64, 4, 256, 1000);
  const double params = static_cast<double>(ct::nn::parameter_count(c));
  const auto fp32 = ct::nn::model_memory(c, 4);
  CHECK(fp32.total() == 8 * params);
  const auto bf16 = ct::nn::model_memory(c, 2);
  CHECK(item(bf16, "bf16 copy of the weights") == 2 * params);
  CHECK(bf16.total() == 10 * params);
  CHECK(item(bf16, "parameters") == 4 * params);
}

TEST_CASE("the activation bill is the workspace bert_qa allocates: what it keeps for backward and its scratch") {
  const bert_config c = small(2, 32, 4, 64, 50);
  for (const auto& [batch, seq] :
       {std::pair{std::size_t{2}, std::size_t{16}}, std::pair{std::size_t{3}, std::size_t{40}}}) {
    // Float row statistics kept beside the activations: mean and 1/std of the embeddings' LayerNorm and of each
    // layer's two.
    const double stats = 4.0 * static_cast<double>(batch * seq) * (2 + 4 * c.num_hidden_layers);
    ct::nn::bert_qa<> fp32(c);
    (void)fp32.forward(batch_of(batch, seq), {.training = false});
    const auto bill = ct::nn::activation_memory(c, 4, {batch, seq});
    CHECK(item(bill, "activations kept for backward") == static_cast<double>(fp32.activation_bytes()) + stats);
    CHECK(item(bill, "layer workspace") + item(bill, "head workspace") == static_cast<double>(fp32.scratch_bytes()));
    // every layer keeps its input, q, k, v, context, two LayerNorm inputs, h1 ([T, H]), two [T, I] and the
    // probabilities; the embeddings' LayerNorm input and the final hidden state are kept once
    const std::size_t T = batch * seq;
    const std::size_t per_layer = 8 * T * 32 + 2 * T * 64 + batch * 4 * seq * seq;
    CHECK(fp32.activation_bytes() == 4 * (2 * per_layer + 2 * T * 32));

    ct::nn::bert_qa<ct::policy<ct::precision::bf16_mixed>> bf16(c);
    (void)bf16.forward(batch_of(batch, seq), {.training = false});
    const auto bf16_bill = ct::nn::activation_memory(c, 2, {batch, seq});
    CHECK(item(bf16_bill, "activations kept for backward") == static_cast<double>(bf16.activation_bytes()) + stats);
    CHECK(bf16.activation_bytes() * 2 == fp32.activation_bytes());
    CHECK(item(bf16_bill, "layer workspace") + item(bf16_bill, "head workspace") ==
          static_cast<double>(bf16.scratch_bytes()));
  }
}

TEST_CASE("a masked-LM head's logits are billed apart, naming vocab_size, not the layers") {
  // 32 x 128 tokens of a 250002-word vocabulary (XLM-R's): logits and their gradient are 8 GB of floats, far more
  // than two small layers' workspace.
  bert_config c = small(2, 64, 4, 256, 250002);
  const auto bill = ct::nn::activation_memory<ct::nn::masked_lm_head>(c, 4, {32, 128, "--per_device_train_batch_size",
                                                                             "--max_seq_length"});
  const auto head = std::find_if(bill.items().begin(), bill.items().end(),
                                 [](const auto& i) { return i.what == "head workspace"; });
  REQUIRE(head != bill.items().end());
  CHECK(head->bytes >= 2.0 * 4 * 32 * 128 * 250002);
  CHECK(head->cause == "--per_device_train_batch_size 32 x --max_seq_length 128 tokens x vocab_size 250002 logits");
  CHECK(item(bill, "layer workspace") < head->bytes / 100);
  // the other heads name what sizes theirs
  c.num_labels = 9;
  const auto token = ct::nn::activation_memory<ct::nn::token_classification_head>(c, 4, {2, 8});
  const auto sequence = ct::nn::activation_memory<ct::nn::sequence_classification_head>(c, 4, {2, 8});
  const auto qa = ct::nn::activation_memory<ct::nn::qa_head>(c, 4, {2, 8});
  CHECK(token.items().back().cause == "batch 2 x seq 8 tokens x num_labels 9 logits");
  CHECK(sequence.items().back().cause == "batch 2 x seq 8 tokens x num_labels 9 logits per sequence");
  CHECK(qa.items().back().cause == "batch 2 x seq 8 tokens x 2 logits (start, end)");
  // [T, H] for the gradient through its dropout, logits and their gradient [T, L]
  CHECK(item(token, "head workspace") == 4.0 * (2 * 8 * 64 + 2 * (2 * 8 * 9)));
}

TEST_CASE("the bill names the field that makes the parameters big: layers, or whichever embedding table") {
  bert_config c = small(2, 64, 4, 256, 1000);
  CHECK(ct::nn::parameter_cause(c) == "num_hidden_layers 2 x (hidden_size 64, intermediate_size 256)");
  c.vocab_size = 1'000'000;
  CHECK(ct::nn::parameter_cause(c) == "vocab_size 1000000 x hidden_size 64");
  c.max_position_embeddings = 50'000'000;  // a position table bigger than everything else
  CHECK(ct::nn::parameter_cause(c) == "max_position_embeddings 50000000 x hidden_size 64");
  CHECK(ct::nn::model_memory(c, 4).items().front().cause == "max_position_embeddings 50000000 x hidden_size 64");
  c.type_vocab_size = 90'000'000;
  CHECK(ct::nn::parameter_cause(c) == "type_vocab_size 90000000 x hidden_size 64");
}

TEST_CASE("counts that do not fit in 64 bits are refused naming the settings") {
  bert_config wide = small(2, 64, 4, 256, 1000);
  wide.vocab_size = 2'000'000'000;
  wide.hidden_size = 2'000'000'000;
  wide.num_attention_heads = 2;
  wide.intermediate_size = 2'000'000'000;
  wide.num_hidden_layers = 2'000'000'000;
  CHECK_THROWS_WITH(ct::nn::parameter_count(wide), Contains("num_hidden_layers 2000000000") &&
                                                       Contains("more than 64-bit sizes can count"));
  const bert_config c = small(2, 64, 4, 256, 1000);
  const ct::nn::activation_shape absurd{std::size_t{1} << 40, std::size_t{1} << 30, "--per_device_train_batch_size",
                                        "--max_seq_length"};
  CHECK_THROWS_WITH(ct::nn::activation_memory(c, 4, absurd),
                    Contains("--per_device_train_batch_size 1099511627776") && Contains("64-bit"));
}

TEST_CASE("a model that cannot fit is refused by its constructor at once, naming the field, before allocating") {
  bert_config huge = small(2, 768, 12, 3072, 30522);
  huge.num_hidden_layers = 1'000'000'000;
  // "At once" and "before allocating", measured in bytes rather than seconds (a busy machine cannot break it): the
  // refusal may allocate its message and what it reads from /proc, not one layer (28 MB) of the model.
  constexpr std::size_t budget = std::size_t{1} << 20;
  std::string refusal;
  bool over_budget = false;
  std::size_t allocated = 0;
  {
    const allocation_counter counter(budget);
    try {
      ct::nn::bert_qa<> model(huge);
    } catch (const ct::insufficient_memory& e) {
      refusal = e.what();
    } catch (const std::bad_alloc&) {
      over_budget = true;  // (builds that replace operator new) the constructor went past the budget
    }
    allocated = counter.bytes();
  }
  INFO("bytes allocated while refusing: " << allocated);
  REQUIRE_FALSE(over_budget);
  REQUIRE(!refusal.empty());  // else a model of 1e9 layers was built
  CHECK_THAT(refusal, Contains("bert_qa: num_hidden_layers 1000000000 x (hidden_size 768, intermediate_size 3072) "
                               "needs about") &&
                          Contains("this machine allows"));
  CHECK(allocated < budget);
}
