// Fuzzes cputrain::text::bert_tokenizer::encode (include/cputrain/text/bert_tokenizer.hpp) with a real-size
// vocabulary on arbitrary bytes, invalid UTF-8 included. The vocabulary is built once per process from the file
// that CPUTRAIN_FUZZ_VOCAB names (CTest sets it to bert-base-uncased/vocab.txt when CPUTRAIN_TEST_DATA_DIR has
// it), else from a built-in one (the special tokens, every printable ASCII character, alone and as "##"
// continuation, and a few hundred words). Byte 0 picks one of four tokenizers (uncased, cased, uncased without
// the Chinese-character split, uncased without special-token matching); the rest is the text.
// A finding: a crash or sanitizer report, a hang, a huge allocation, any exception that is not a cputrain::error,
// or a tokenization that breaks tokenizer_invariants.hpp (ids inside the vocabulary, offsets inside the text and
// on character boundaries, code-point offsets agreeing with the byte offsets, text_error for invalid UTF-8 only).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/vocabulary.hpp"
#include "fuzz_support.hpp"
#include "tokenizer_invariants.hpp"

namespace ct = cputrain;

namespace {

ct::text::vocabulary make_vocabulary() {
  if (const char* file = std::getenv("CPUTRAIN_FUZZ_VOCAB"); file != nullptr && *file != '\0') {
    return ct::text::vocabulary::load(file);
  }
  std::vector<std::string> tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (char c = '!'; c <= '~'; ++c) tokens.emplace_back(1, c);
  for (char c = '!'; c <= '~'; ++c) tokens.push_back("##" + std::string(1, c));
  for (const char* w : {"the", "of", "and", "in", "to", "was", "is", "for", "on", "as", "with", "by", "he", "at",
                        "from", "his", "an", "were", "are", "which", "this", "also", "be", "has", "or", "had",
                        "first", "one", "their", "its", "new", "after", "but", "who", "not", "they", "have", "her",
                        "she", "two", "been", "other", "when", "there", "all", "during", "into", "school", "time",
                        "may", "years", "more", "most", "only", "over", "city", "some", "world", "would", "where",
                        "later", "up", "such", "used", "many", "can", "state", "about", "national", "out", "known",
                        "university", "united", "then", "made", "##s", "##ed", "##ing", "##ly", "##er", "##es",
                        "é", "##é", "ü", "中", "国", "日", "本", "ß", "æ", "ø", "å", "ñ", "ç", "α", "β", "γ"}) {
    tokens.emplace_back(w);
  }
  return ct::text::vocabulary(std::move(tokens), "built-in fuzz vocabulary");
}

const ct::text::bert_tokenizer& tokenizer(unsigned which) {
  static const std::vector<ct::text::bert_tokenizer> tokenizers = [] {
    const ct::text::vocabulary vocab = make_vocabulary();
    std::vector<ct::text::bert_tokenizer> out;
    ct::text::bert_tokenizer_options uncased;
    ct::text::bert_tokenizer_options cased;
    cased.lower_case = false;
    ct::text::bert_tokenizer_options no_chinese;
    no_chinese.handle_chinese_chars = false;
    ct::text::bert_tokenizer_options no_specials;
    no_specials.match_special_tokens = false;
    for (const auto& options : {uncased, cased, no_chinese, no_specials}) out.emplace_back(vocab, options);
    return out;
  }();
  return tokenizers[which % tokenizers.size()];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    cputrain_fuzz::encode_and_check(tokenizer(data[0]), text);
  } catch (const ct::error&) {
    // encode_and_check already asserted that only invalid UTF-8 throws; nothing else reaches here.
  }
  return 0;
}
