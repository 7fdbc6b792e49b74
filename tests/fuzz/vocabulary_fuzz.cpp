// Fuzzes cputrain::text::vocabulary::parse (include/cputrain/text/vocabulary.hpp: vocab.txt as Hugging Face
// reads it) on arbitrary bytes, then a bert_tokenizer (text/bert_tokenizer.hpp) built on whatever vocabulary it
// accepted, tokenizing arbitrary text. Input layout: the bytes up to the first 0xFF (never in UTF-8) are
// vocab.txt — so a real vocab.txt is a seed as it is; after the 0xFF, one byte sets the tokenizer's switches
// (bit 0 lower_case, bits 1-2 strip_accents unset/false/true, bit 3 tokenize_chinese_chars, bit 4
// match_special_tokens, bits 5-7 a max_input_chars_per_word of 1-7, or 100 for 0) and the rest is the text.
// A finding: a crash or sanitizer report, a hang, a huge allocation, any exception that is not a cputrain::error,
// a vocabulary whose lookups disagree with its lines, or a tokenization that breaks tokenizer_invariants.hpp.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/vocabulary.hpp"
#include "fuzz_support.hpp"
#include "tokenizer_invariants.hpp"

namespace ct = cputrain;
using cputrain_fuzz::fuzz_check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t separator = input.find('\xFF');
  const std::string_view vocab_text = input.substr(0, separator);
  std::string_view text;
  std::uint8_t switches = 1 | 8 | 16;  // bert-base-uncased's
  if (separator != std::string_view::npos && separator + 1 < size) {
    switches = data[separator + 1];
    text = input.substr(separator + 2);
  }

  ct::text::bert_tokenizer_options options;
  options.lower_case = (switches & 1) != 0;
  if (((switches >> 1) & 3) == 1) options.strip_accents = false;
  if (((switches >> 1) & 3) >= 2) options.strip_accents = true;
  options.handle_chinese_chars = (switches & 8) != 0;
  options.match_special_tokens = (switches & 16) != 0;
  const unsigned max_chars = switches >> 5;
  options.max_input_chars_per_word = max_chars == 0 ? 100 : max_chars;
  try {
    ct::text::vocabulary vocab = ct::text::vocabulary::parse(vocab_text, "fuzz/vocab.txt");
    for (const std::string_view special : {"[UNK]", "[CLS]", "[SEP]", "[PAD]"}) {
      const auto id = vocab.find(special);
      fuzz_check(id && vocab.token(*id) == special, "a special token's id does not name it");
    }
    for (std::size_t id = 0; id < vocab.size(); ++id) {
      const std::string& token = vocab.token(static_cast<std::int32_t>(id));
      const auto found = vocab.find(token);
      fuzz_check(found.has_value() && vocab.token(*found) == token, "a token of the file is not found by find()");
    }
    const ct::text::bert_tokenizer tokenizer(std::move(vocab), options);
    cputrain_fuzz::encode_and_check(tokenizer, text);
  } catch (const ct::error&) {
    // Bad input, refused with our message: the expected outcome.
  }
  return 0;
}
