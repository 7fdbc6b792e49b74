// cputrain::data::data_error — what the data/ headers throw when a dataset file cannot be read or breaks its
// format. The message starts with the file's path, then names the record (its id and where it sits: a data index
// or a line number) and the field, then the problem, so a user can fix a 30 MB training file without a debugger:
//
//   train.json: record "56dd..." (data[3].paragraphs[0].qas[2]): field "answers[0].answer_start": 912 is outside
//   the context (812 characters)
//
// Mistakes of the calling code (scoring predictions for questions the dataset does not have) are
// cputrain::usage_error instead.
#pragma once

#include "cputrain/core/error.hpp"

namespace cputrain::data {

/// A dataset file could not be read, or its contents break its format.
class data_error : public cputrain::error {
 public:
  using cputrain::error::error;
};

}  // namespace cputrain::data
