// What every bert_tokenizer::encode result must satisfy, whatever the vocabulary and the text (the two
// tokenizer fuzz targets check it): ids inside the vocabulary, offsets inside the text, in order, on UTF-8
// boundaries, and code-point offsets that agree with the byte offsets; and invalid UTF-8 is the only thing
// that may make encode throw (a text_error, which the caller catches as any cputrain::error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/utf8.hpp"
#include "fuzz_support.hpp"

namespace cputrain_fuzz {

inline void encode_and_check(const cputrain::text::bert_tokenizer& tokenizer, std::string_view text) {
  namespace tx = cputrain::text;
  using cputrain_fuzz::fuzz_check;
  const bool valid = tx::find_invalid_utf8(text) == std::string_view::npos;
  tx::token_sequence seq;
  try {
    tokenizer.encode(text, seq);
  } catch (const tx::text_error&) {
    fuzz_check(!valid, "encode threw on valid UTF-8");
    return;
  }
  fuzz_check(valid, "encode accepted invalid UTF-8");
  fuzz_check(seq.ids.size() == seq.offsets.size() && seq.ids.size() == seq.byte_offsets.size(),
             "ids and offsets of different lengths");
  const std::size_t vocab_size = tokenizer.vocab().size();
  // chars_before[i]: code points before byte i (valid UTF-8 here).
  std::vector<std::uint32_t> chars_before(text.size() + 1, 0);
  for (std::size_t i = 0; i < text.size(); ++i) {
    chars_before[i + 1] = chars_before[i] + ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 ? 1u : 0u);
  }
  tx::text_span previous{};
  for (std::size_t i = 0; i < seq.size(); ++i) {
    fuzz_check(seq.ids[i] >= 0 && static_cast<std::size_t>(seq.ids[i]) < vocab_size, "id outside the vocabulary");
    const tx::text_span b = seq.byte_offsets[i];
    const tx::text_span c = seq.offsets[i];
    fuzz_check(b.begin < b.end && b.end <= text.size(), "byte offsets outside the text or empty");
    // Pieces of one character (the i and the dot of a lower-cased U+0130) share its span; otherwise in order.
    fuzz_check(b.begin >= previous.begin, "byte offsets going backwards");
    previous = b;
    fuzz_check((static_cast<unsigned char>(text[b.begin]) & 0xC0) != 0x80 &&
                   (b.end == text.size() || (static_cast<unsigned char>(text[b.end]) & 0xC0) != 0x80),
               "byte offsets not on a UTF-8 boundary");
    fuzz_check(c.begin == chars_before[b.begin] && c.end == chars_before[b.end],
               "code-point offsets disagree with the byte offsets");
  }
}

}  // namespace cputrain_fuzz
