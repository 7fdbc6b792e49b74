// cputrain::text::wordpiece_tokenizer — a WordPiece tokenizer.json as Hugging Face's tokenizer runs it, whatever
// its normalizers, pre-tokenizers, continuing-subword prefix, unknown token and added tokens: the WordPiece model on
// each word of tokenizer_pipeline.hpp. (BERT's own files take bert_tokenizer.hpp's one-pass path.)
#pragma once

#include "cputrain/text/model_tokenizer.hpp"
#include "cputrain/text/wordpiece_model.hpp"

namespace cputrain::text {

using wordpiece_tokenizer = model_tokenizer<wordpiece_model>;

}  // namespace cputrain::text
