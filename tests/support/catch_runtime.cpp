// Catch2's implementation, compiled once per build for every test program's main (catch_main.cpp, mpi_main.cpp,
// isa_main.cpp and the TSan runners) instead of in each: it is the largest translation unit of the suite. A wide
// console keeps long test names on one line when CTest lists them (catch_discover_tests): a wrapped name would
// become a filter that matches nothing.
#define CATCH_CONFIG_CONSOLE_WIDTH 400
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch_runtime.hpp"

namespace cputrain::test_support {

catch_outcome run_catch_session(int argc, char* argv[], const std::string& default_output) {
  Catch::Session session;
  catch_outcome outcome;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) {
    outcome.status = rc;
    return outcome;
  }
  if (!default_output.empty() && session.configData().outputFilename.empty()) {
    session.configData().outputFilename = default_output;
    outcome.wrote_default_output = true;
  }
  outcome.ran = true;
  outcome.status = session.run();
  return outcome;
}

}  // namespace cputrain::test_support
