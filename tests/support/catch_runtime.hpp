// Catch's session behind one function, so that the test programs' mains (catch_main.cpp, mpi_main.cpp,
// isa_main.cpp) compile without Catch's implementation, which catch_runtime.cpp holds once for all of them.
#pragma once

#include <string>

namespace cputrain::test_support {

struct catch_outcome {
  int status = 0;               // the exit status: the command line's error, or the number of failed tests
  bool ran = false;             // false: the command line was refused (status says why) and no test ran
  bool wrote_default_output = false;  // the report went to `default_output` (the command line named no file)
};

/// Runs the tests the command line selects. With `default_output` not empty, the report goes to that file unless
/// the command line names one itself (-o).
catch_outcome run_catch_session(int argc, char* argv[], const std::string& default_output = {});

}  // namespace cputrain::test_support
