// cputrain::data::data_error — what the data/ headers throw when a dataset file cannot be read or breaks its
// format. The message names the file, the record (id and place), the field, then the problem; mistakes of the
// calling code are cputrain::usage_error instead.
#pragma once

#include "cputrain/core/error.hpp"

namespace cputrain::data {

/// A dataset file could not be read, or its contents break its format.
class data_error : public cputrain::error {
 public:
  using cputrain::error::error;
};

}  // namespace cputrain::data
