// Fuzzes the training-arguments JSON readers of include/cputrain/cli/ on arbitrary bytes: (args_file.hpp)
// read_training_args_json(path) (run_qa args.json: parse, every key's type, the extra flags, validate(), which
// also looks up the paths the file names), and — when the bytes are a JSON document — (args_json.hpp) from_json / args_from_json
// (a checkpoint's training_args.json: types only) followed by the to_json -> from_json round trip, which must give
// the same JSON again.
// A finding: a crash or sanitizer report, a hang, a huge allocation, any exception that is not a cputrain::error
// (an nlohmann type_error or out_of_range from a value of the wrong type, say), or arguments that to_json writes
// and from_json then refuses or reads differently.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cputrain/cli/args_file.hpp"
#include "cputrain/cli/args_json.hpp"
#include "fuzz_support.hpp"

namespace ct = cputrain;
using cputrain_fuzz::fuzz_check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cputrain_fuzz::fuzz_file file("args.json");
  try {
    (void)ct::cli::read_training_args_json(file.path_with(data, size));
  } catch (const ct::error&) {
    // Bad input, refused with our message: the expected outcome.
  }
  // The harness's own parse, without exceptions: only a JSON document goes on to from_json.
  const auto json = nlohmann::ordered_json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  ct::cli::training_args args;
  try {
    args = ct::cli::from_json(json);
  } catch (const ct::error&) {
    return 0;
  }
  const nlohmann::ordered_json written = ct::cli::to_json(args);
  try {
    const ct::cli::training_args again = ct::cli::from_json(written);
    fuzz_check(ct::cli::to_json(again) == written, "to_json -> from_json -> to_json changed the arguments");
  } catch (const ct::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    cputrain_fuzz::die("from_json refused what to_json wrote");
  }
  return 0;
}
