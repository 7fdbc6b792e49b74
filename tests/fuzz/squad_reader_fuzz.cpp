// Fuzzes cputrain::data::parse_squad / read_squad (include/cputrain/data/squad_reader.hpp) on arbitrary file
// contents: the official nested format (v1.1, v2.0), Hugging Face's flat format and JSON Lines — the reader tells
// them apart by their content, so one target reaches all three; the seeds hold each. A first byte 0x00-0x03
// (never the start of a JSON text) is an options byte: bit 0 picks the policy (bad_record_policy::refuse or
// ::skip), bit 1 the entry point (parse_squad on the bytes, or read_squad on them as a file), and the rest is the
// file; any other first byte starts the file itself, read with parse_squad under refuse — so a real SQuAD file is
// a seed as it is.
// A finding: a crash or sanitizer report, a hang, a huge allocation, any exception that is not a cputrain::error
// (only data_error may leave the reader), or a dataset that breaks the reader's promises: an example pointing
// at a context that does not exist, an answer outside its context or not equal to the context's text there,
// duplicate ids, a skip count that differs from the problems kept, a refused record under refuse that was not
// thrown.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

#include "cputrain/data/squad_reader.hpp"
#include "cputrain/text/utf8.hpp"
#include "fuzz_support.hpp"

namespace ct = cputrain;
using cputrain_fuzz::fuzz_check;

namespace {

void check_answer(const std::string& context, const ct::data::squad_answer& a) {
  const std::size_t chars = ct::text::count_code_points(context);
  fuzz_check(a.answer_start <= chars, "answer_start beyond the context");
  const std::size_t begin = ct::text::byte_position(context, a.answer_start);
  fuzz_check(begin <= context.size(), "answer byte offset beyond the context");
  fuzz_check(context.compare(begin, a.text.size(), a.text) == 0, "answer text differs from the context there");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cputrain_fuzz::fuzz_file file("train.json");
  ct::data::squad_read_options options;
  bool through_file = false;
  if (size > 0 && data[0] <= 3) {
    using policy = ct::data::bad_record_policy;
    options.on_bad_record = (data[0] & 1) != 0 ? policy::skip : policy::refuse;
    through_file = (data[0] & 2) != 0;
    ++data;
    --size;
  }
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const ct::data::squad_dataset ds = through_file ? ct::data::read_squad(file.path_with(data, size), options)
                                                    : ct::data::parse_squad(bytes, "fuzz.json", options);
    fuzz_check(ds.skipped == ds.problems.size(), "skipped differs from the number of problems kept");
    if (options.on_bad_record == ct::data::bad_record_policy::refuse) fuzz_check(ds.skipped == 0, "refuse skipped");
    std::unordered_set<std::string_view> ids;
    for (const auto& e : ds.examples) {
      fuzz_check(!e.id.empty() && ids.insert(e.id).second, "an empty or duplicate id was kept");
      fuzz_check(e.context_index < ds.contexts.size(), "context_index outside the contexts");
      const std::string& context = ds.contexts[e.context_index];
      fuzz_check(ct::text::find_invalid_utf8(context) == std::string_view::npos, "a context with invalid UTF-8");
      for (const auto& a : e.answers) check_answer(context, a);
      for (const auto& a : e.plausible_answers) check_answer(context, a);
    }
  } catch (const ct::error&) {
    // Bad input, refused with our message: the expected outcome.
  }
  return 0;
}
