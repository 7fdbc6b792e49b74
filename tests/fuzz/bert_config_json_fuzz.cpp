// Fuzzes cputrain::io::read_bert_config (include/cputrain/io/bert_config_json.hpp, its bert_config_reader) on
// arbitrary config.json contents, and the nn::bert_config it returns: validate() (include/cputrain/nn/
// bert_config.hpp) must accept what the reader accepted, and head_dim() must be consistent.
// A finding: a crash or sanitizer report, a hang, a huge allocation, any exception that is not a cputrain::error,
// or a config returned by the reader that its own validate() then refuses.
#include <cstddef>
#include <cstdint>

#include "cputrain/io/bert_config_json.hpp"
#include "fuzz_support.hpp"

namespace ct = cputrain;
using cputrain_fuzz::fuzz_check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cputrain_fuzz::fuzz_file file("config.json");
  const std::string path = file.path_with(data, size);
  ct::nn::bert_config config;
  try {
    config = ct::io::read_bert_config(path);
  } catch (const ct::error&) {
    return 0;  // bad input, refused with our message
  }
  try {
    config.validate();
  } catch (const ct::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    cputrain_fuzz::die("read_bert_config returned a config that validate() refuses");
  }
  fuzz_check(config.head_dim() * config.num_attention_heads == config.hidden_size, "head_dim inconsistent");
  return 0;
}
