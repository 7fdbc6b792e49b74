// cputrain/text.hpp — the BERT WordPiece tokenizer with character offsets, and its vocabulary.
#pragma once

#include "cputrain/text/bert_tokenizer.hpp"       // IWYU pragma: export
#include "cputrain/text/char_classes.hpp"         // IWYU pragma: export
#include "cputrain/text/load_bert_tokenizer.hpp"  // IWYU pragma: export
#include "cputrain/text/text_error.hpp"           // IWYU pragma: export
#include "cputrain/text/utf8.hpp"                 // IWYU pragma: export
#include "cputrain/text/vocabulary.hpp"           // IWYU pragma: export
