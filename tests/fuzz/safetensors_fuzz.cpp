// Fuzzes cputrain::io::safetensors_file (include/cputrain/io/safetensors.hpp) on arbitrary file contents: open()
// (header length, JSON header, every entry, the tiling of the data region), then, for whatever it accepted,
// names(), info(), read_float / read_i64 into buffers of the right size (and of a wrong size, and the wrong dtype:
// their errors), verify_checksums (whose refusal must be an io_error naming a tensor that has a checksum), and
// check_tensors against the tensors found (must pass) and against a list with one tensor missing and one misshapen
// (must throw).
// A finding: a crash or sanitizer report, a hang, a huge allocation, any exception that is not a cputrain::error,
// or a broken invariant (a tensor whose bytes are not numel * dtype_size, check_tensors refusing the file's own
// tensors or accepting a wrong list).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cputrain/io/safetensors.hpp"
#include "fuzz_support.hpp"

namespace ct = cputrain;
using cputrain_fuzz::fuzz_check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cputrain_fuzz::fuzz_file file("model.safetensors");
  const std::string path = file.path_with(data, size);
  try {
    const auto st = ct::io::safetensors_file::open(path);
    std::vector<ct::io::expected_tensor> expected;
    for (const std::string& name : st.names()) {
      const ct::io::tensor_info& t = st.info(name);
      fuzz_check(t.numel >= 0 && t.bytes.size() == static_cast<std::size_t>(t.numel) * ct::io::dtype_size(t.dtype),
                 "a tensor's bytes are not numel * dtype_size");
      fuzz_check(t.bytes.size() <= size, "a tensor larger than the file");
      const auto n = static_cast<std::size_t>(t.numel);
      if (t.dtype == ct::io::dtype::i64) {
        std::vector<std::int64_t> out(n);
        st.read_i64(name, out);
        std::vector<float> wrong(n);
        try {
          st.read_float(name, wrong);
          cputrain_fuzz::die("read_float accepted an I64 tensor");
        } catch (const ct::io::io_error&) {
        }
      } else {
        std::vector<float> out(n);
        st.read_float(name, out);
        std::vector<float> too_many(n + 1);
        try {
          st.read_float(name, too_many);
          cputrain_fuzz::die("read_float accepted a destination of the wrong size");
        } catch (const ct::io::io_error&) {
        }
      }
      expected.push_back({name, t.shape});
    }
    try {
      st.verify_checksums();
    } catch (const ct::io::io_error&) {
      bool some_checked = false;
      for (const std::string& name : st.names()) some_checked = some_checked || st.has_checksum(name);
      fuzz_check(some_checked, "verify_checksums refused a file without checksums");
    }
    ct::io::check_tensors(st, expected);  // the file's own tensors: must pass
    (void)st.metadata();
    try {
      (void)st.info("\x01not a tensor");
      cputrain_fuzz::die("info() found a tensor that is not there");
    } catch (const ct::io::io_error&) {
    }
    if (!expected.empty()) expected.front().shape.push_back(3);
    expected.push_back({"\x01not a tensor", {1}});
    try {
      ct::io::check_tensors(st, expected);
      cputrain_fuzz::die("check_tensors accepted a missing tensor");
    } catch (const ct::io::io_error&) {
    }
  } catch (const ct::error&) {
    // Bad input, refused with our message: the expected outcome.
  }
  return 0;
}
