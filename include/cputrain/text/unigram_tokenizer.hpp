// cputrain::text::unigram_tokenizer — XLM-RoBERTa's tokenizer (SentencePiece Unigram) as Hugging Face's
// tokenizer.json sets it up: the Unigram model on each word of tokenizer_pipeline.hpp (added tokens, the normalizers
// such as SentencePiece's Precompiled rules, Strip and Replace, and Metaspace's or any other pre-tokenizers' words).
#pragma once

#include "cputrain/text/model_tokenizer.hpp"
#include "cputrain/text/unigram_model.hpp"

namespace cputrain::text {

using unigram_tokenizer = model_tokenizer<unigram_model>;

}  // namespace cputrain::text
