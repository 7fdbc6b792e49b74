// cputrain/text.hpp — the tokenizers with character offsets: BERT's WordPiece and its vocabulary, GPT-2's and
// RoBERTa's byte-level BPE, XLM-RoBERTa's SentencePiece Unigram, one tokenizer type over them with the special
// tokens of each layout, loaded from a model directory's tokenizer.json or legacy files.
#pragma once

#include "cputrain/text/added_tokens.hpp"          // IWYU pragma: export
#include "cputrain/text/base64.hpp"                // IWYU pragma: export
#include "cputrain/text/bert_tokenizer.hpp"        // IWYU pragma: export
#include "cputrain/text/bpe_model.hpp"             // IWYU pragma: export
#include "cputrain/text/byte_level.hpp"            // IWYU pragma: export
#include "cputrain/text/byte_level_bpe.hpp"        // IWYU pragma: export
#include "cputrain/text/byte_level_bpe_files.hpp"  // IWYU pragma: export
#include "cputrain/text/byte_level_bpe_json.hpp"   // IWYU pragma: export
#include "cputrain/text/byte_trie.hpp"             // IWYU pragma: export
#include "cputrain/text/char_classes.hpp"          // IWYU pragma: export
#include "cputrain/text/char_positions.hpp"        // IWYU pragma: export
#include "cputrain/text/load_bert_tokenizer.hpp"   // IWYU pragma: export
#include "cputrain/text/load_tokenizer.hpp"        // IWYU pragma: export
#include "cputrain/text/metaspace.hpp"             // IWYU pragma: export
#include "cputrain/text/model_tokenizer.hpp"       // IWYU pragma: export
#include "cputrain/text/normalized_text.hpp"       // IWYU pragma: export
#include "cputrain/text/normalizer_json.hpp"       // IWYU pragma: export
#include "cputrain/text/normalizer_steps.hpp"      // IWYU pragma: export
#include "cputrain/text/padding.hpp"               // IWYU pragma: export
#include "cputrain/text/pre_tokenized_text.hpp"    // IWYU pragma: export
#include "cputrain/text/pre_tokenizer_char_classes.hpp"  // IWYU pragma: export
#include "cputrain/text/pre_tokenizer_json.hpp"    // IWYU pragma: export
#include "cputrain/text/pre_tokenizer_steps.hpp"   // IWYU pragma: export
#include "cputrain/text/precompiled_charsmap.hpp"  // IWYU pragma: export
#include "cputrain/text/sentencepiece_model.hpp"   // IWYU pragma: export
#include "cputrain/text/special_tokens.hpp"        // IWYU pragma: export
#include "cputrain/text/text_error.hpp"            // IWYU pragma: export
#include "cputrain/text/token_sequence.hpp"        // IWYU pragma: export
#include "cputrain/text/tokenizer.hpp"             // IWYU pragma: export
#include "cputrain/text/tokenizer_json.hpp"        // IWYU pragma: export
#include "cputrain/text/tokenizer_json_writer.hpp" // IWYU pragma: export
#include "cputrain/text/tokenizer_pipeline.hpp"    // IWYU pragma: export
#include "cputrain/text/truncation.hpp"            // IWYU pragma: export
#include "cputrain/text/unicode_forms.hpp"         // IWYU pragma: export
#include "cputrain/text/unigram_files.hpp"         // IWYU pragma: export
#include "cputrain/text/unigram_json.hpp"          // IWYU pragma: export
#include "cputrain/text/unigram_json_writer.hpp"   // IWYU pragma: export
#include "cputrain/text/unigram_model.hpp"         // IWYU pragma: export
#include "cputrain/text/unigram_tokenizer.hpp"     // IWYU pragma: export
#include "cputrain/text/utf8.hpp"                  // IWYU pragma: export
#include "cputrain/text/vocabulary.hpp"            // IWYU pragma: export
#include "cputrain/text/word_cache.hpp"            // IWYU pragma: export
#include "cputrain/text/wordpiece_json.hpp"        // IWYU pragma: export
#include "cputrain/text/wordpiece_json_writer.hpp" // IWYU pragma: export
#include "cputrain/text/wordpiece_model.hpp"       // IWYU pragma: export
#include "cputrain/text/wordpiece_tokenizer.hpp"   // IWYU pragma: export
