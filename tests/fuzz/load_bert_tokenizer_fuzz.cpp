// Fuzzes cputrain::text::read_tokenizer_config (include/cputrain/text/load_bert_tokenizer.hpp: the switches of a
// model directory's tokenizer_config.json) on arbitrary file contents, from both default option sets.
// A finding: a crash or sanitizer report, a hang, a huge allocation, or any exception that is not a
// cputrain::error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cputrain/text/load_bert_tokenizer.hpp"
#include "fuzz_support.hpp"

namespace ct = cputrain;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cputrain_fuzz::fuzz_file file("tokenizer_config.json");
  const std::string path = file.path_with(data, size);
  ct::text::bert_tokenizer_options cased;
  cased.lower_case = false;
  cased.strip_accents = false;
  for (const auto& defaults : {ct::text::bert_tokenizer_options{}, cased}) {
    try {
      (void)ct::text::read_tokenizer_config(path, defaults);
    } catch (const ct::error&) {
      // Bad input, refused with our message: the expected outcome.
    }
  }
  return 0;
}
