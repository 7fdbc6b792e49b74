// cputrain::io::io_error — what the io/ headers throw when a file cannot be read or written, or holds something
// that is not what its format promises (a truncated safetensors file, a config.json with a string where a number
// belongs). The message starts with the file's path and then says what is wrong, down to the tensor or key, so a
// user pointing the trainer at the wrong checkpoint can act without a debugger.
//
// Mistakes of the calling code (a writer given a buffer of the wrong size) are cputrain::usage_error instead.
#pragma once

#include "cputrain/core/error.hpp"

namespace cputrain::io {

/// A file could not be opened, read, written or renamed, or its contents break its format.
class io_error : public cputrain::error {
 public:
  using cputrain::error::error;
};

}  // namespace cputrain::io
