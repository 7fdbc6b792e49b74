// Fuzzes cputrain::text::load_tokenizer_json (include/cputrain/text/load_tokenizer.hpp: a WordPiece, byte-level
// BPE or Unigram tokenizer.json with its normalizers, pre-tokenizer, model, added tokens, post-processor and
// truncation/padding defaults) on arbitrary file contents; a tokenizer it accepts then encodes a text, a pair and
// words, truncated and padded by its defaults too, and each encoding's columns must agree.
// A finding: a crash or sanitizer report, a hang, a huge allocation, any exception that is not a cputrain::error,
// or an encoding whose columns differ in length or whose offsets leave the text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cputrain/text/load_tokenizer.hpp"
#include "fuzz_support.hpp"

namespace ct = cputrain;

namespace {

void check(const ct::text::encoding& e, std::size_t longest_text) {
  const std::size_t n = e.ids.size();
  cputrain_fuzz::fuzz_check(e.type_ids.size() == n && e.offsets.size() == n && e.byte_offsets.size() == n &&
                                e.special_tokens_mask.size() == n && e.sequence_ids.size() == n &&
                                e.word_ids.size() == n && e.attention_mask.size() == n,
                            "an encoding's columns differ in length");
  for (std::size_t i = 0; i < n; ++i)
    cputrain_fuzz::fuzz_check(e.byte_offsets[i].begin <= e.byte_offsets[i].end &&
                                  e.byte_offsets[i].end <= longest_text,
                              "a token's byte offsets leave its text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const cputrain_fuzz::fuzz_file file("tokenizer.json");
  const std::string path = file.path_with(data, size);
  try {
    const ct::text::tokenizer t = ct::text::load_tokenizer_json(path);
    const std::string a = "Hello, world! [CLS] <s> don't 北京 👩‍👩‍👧 e\u0301";
    const std::string b = " second  text\t<mask>";
    check(t.encode(a), a.size());
    check(t.encode_pair(a, b), a.size());
    check(t.encode_pair(a, b, false), a.size());
    if (const auto& truncation = t.defaults().truncation) {
      try {
        std::vector<ct::text::encoding> batch{t.encode(a, *truncation), t.encode_pair(a, b, *truncation)};
        for (const auto& e : batch)
          cputrain_fuzz::fuzz_check(e.size() <= truncation->max_length, "a truncated encoding is too long");
        if (const auto& padding = t.defaults().padding; padding && t.specials().pad) t.pad(batch, *padding);
        for (const auto& e : batch) check(e, a.size());
      } catch (const ct::error&) {
        // A max_length too short for the special tokens, or only_second on one text: refused, as expected.
      }
    }
    try {
      const std::vector<std::string> words{"New", "York", "", "x<pad>"};
      check(t.encode_words(words), 6);
    } catch (const ct::error&) {
      // A byte-level tokenizer without add_prefix_space refuses words: expected.
    }
  } catch (const ct::error&) {
    // Bad input, refused with our message: the expected outcome.
  }
  return 0;
}
