// A Catch2 test that cannot run here (no conformance data, too few CPUs, a feature this build lacks) says so on
// stdout in a line CTest recognises, "CPUTRAIN-TEST-SKIPPED: <reason>", and ends without a passing assertion:
// tests/CMakeLists.txt gives the Catch2 tests SKIP_REGULAR_EXPRESSION "CPUTRAIN-TEST-SKIPPED: ", so CTest reports
// such a test as skipped, with the reason in its output, never as passed. Catch2 v2 has no skip of its own.
//   if (cpus.size() < 2) CPUTRAIN_SKIP("needs 2 CPUs, this process may use " << cpus.size());
#pragma once

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

namespace cputrain::test {

/// The line CTest's SKIP_REGULAR_EXPRESSION matches; keep the two in step.
inline constexpr const char* skipped_marker = "CPUTRAIN-TEST-SKIPPED: ";

/// Prints "CPUTRAIN-TEST-SKIPPED: <reason>" on stdout and flushes it. The caller must then end the test case
/// without a further assertion (CPUTRAIN_SKIP does both).
inline void report_skipped(const std::string& reason) {
  std::cout << skipped_marker << reason << std::endl;
  std::fflush(stdout);
}

}  // namespace cputrain::test

/// Reports the test case skipped (the reason is streamed, as in INFO) and returns from the enclosing function,
/// which must be the TEST_CASE's body (or a SECTION's) and return void.
#define CPUTRAIN_SKIP(reason)                                      \
  do {                                                             \
    std::ostringstream cputrain_skip_reason_;                      \
    cputrain_skip_reason_ << reason;                               \
    ::cputrain::test::report_skipped(cputrain_skip_reason_.str()); \
    return;                                                        \
  } while (false)
