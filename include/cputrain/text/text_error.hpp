// cputrain::text::text_error — what the text/ headers throw for a vocabulary or tokenizer file that cannot be read
// or breaks its format (no [UNK] token, invalid UTF-8 on line 812), and for text that is not valid UTF-8. The
// message starts with the file (or says "text") and then says what is wrong and where, so a user can act on it.
#pragma once

#include "cputrain/core/error.hpp"

namespace cputrain::text {

/// A vocabulary or tokenizer configuration is unusable, or input text is not valid UTF-8.
class text_error : public cputrain::error {
 public:
  using cputrain::error::error;
};

}  // namespace cputrain::text
