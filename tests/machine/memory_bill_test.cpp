#include <catch2/catch.hpp>

#include <string>

#include "cputrain/machine/memory_bill.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace memory_bill_test {

using cputrain::format_bytes;
using cputrain::insufficient_memory;
using cputrain::memory_allowance;
using cputrain::memory_bill;
using cputrain::require_memory;

namespace {

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

memory_allowance machine_with(double available_gib) {
  memory_allowance a;
  a.available = static_cast<std::uint64_t>(available_gib * GiB);
  a.resident = 50u << 20;
  a.source = "MemAvailable (/proc/meminfo)";
  return a;
}

std::string refusal(const memory_bill& bill, const memory_allowance& a, const char* who) {
  try {
    require_memory(bill, a, who);
  } catch (const insufficient_memory& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("format_bytes: three significant digits in binary units") {
  CHECK(format_bytes(100) == "100 bytes");
  CHECK(format_bytes(4096) == "4.00 KiB");
  CHECK(format_bytes(512.0 * 1024 * 1024) == "512 MiB");
  CHECK(format_bytes(22.8 * GiB) == "22.8 GiB");
  CHECK(format_bytes(191.0 * 1024 * GiB) == "191 TiB");
  CHECK(format_bytes(1.5 * 1024 * 1024 * GiB) == "1.50 PiB");
}

TEST_CASE("a bill that fits passes, one that does not is refused before anything, naming cause and both figures") {
  memory_bill bill;
  const std::string layers = "num_hidden_layers 1000000000 x (hidden_size 768, intermediate_size 3072)";
  bill.add("parameters", 47.7 * 1024 * GiB, layers);
  bill.add("AdamW moments", 95.4 * 1024 * GiB, layers);
  bill.add("activations kept for backward", 2 * GiB, "per_device_train_batch_size 12 x max_seq_length 384 tokens");
  const std::string what = refusal(bill, machine_with(22.8), "config.json");
  INFO(what);
  CHECK(what.starts_with("config.json: num_hidden_layers 1000000000 x (hidden_size 768, intermediate_size 3072) "
                         "needs about 143 TiB of memory; this machine allows 22.8 GiB (MemAvailable (/proc/meminfo)"));
  // every item, biggest first, each cause once
  CHECK(what.find("AdamW moments 95.4 TiB, parameters 47.7 TiB, activations kept for backward 2.00 GiB "
                  "(per_device_train_batch_size 12 x max_seq_length 384 tokens)") != std::string::npos);

  CHECK(refusal(bill, machine_with(200 * 1024), "config.json") == "(accepted)");
  CHECK(refusal(bill, memory_allowance{}, "config.json") == "(accepted)");  // no limit known
}

TEST_CASE("the refusal is a usage_error, so programs exit 2 for it") {
  memory_bill bill;
  bill.add("parameters", 2 * GiB, "vocab_size 1000000000 x hidden_size 1");
  CHECK_THROWS_AS(require_memory(bill, machine_with(1), "bert_qa"), cputrain::usage_error);
  memory_bill exact;
  exact.add("parameters", 1 * GiB);
  CHECK_NOTHROW(require_memory(exact, machine_with(1), "bert_qa"));  // exactly what is available fits
}

TEST_CASE("peak_bytes is what the process holds now plus the bill") {
  memory_bill bill;
  bill.add("a", 1000);
  bill.add("b", 24);
  CHECK(bill.total() == 1024);
  CHECK(cputrain::peak_bytes(bill, machine_with(1)) == Approx(1024.0 + (50u << 20)));
  CHECK(bill.biggest()->what == "a");
  CHECK(memory_bill{}.biggest() == nullptr);
}

}  // namespace memory_bill_test
