// Tests for include/cputrain/core/cpu_features.hpp.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "cputrain/core/cpu_features.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace cpu_features_test {

namespace {
std::string proc_cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) return line + " ";
  }
  return {};
}
}  // namespace

TEST_CASE("detect() agrees with the kernel's /proc/cpuinfo flags") {
  const std::string flags = proc_cpuinfo_flags();
  if (flags.empty()) {
    WARN("skipped: no /proc/cpuinfo flags line");
    return;
  }
  const auto f = cputrain::cpu_features::detect();
  CHECK(f.avx2 == (flags.find(" avx2 ") != std::string::npos));
  CHECK(f.fma == (flags.find(" fma ") != std::string::npos));
  CHECK(f.avx512f == (flags.find(" avx512f ") != std::string::npos));
  CHECK(f.avx512bf16 == (flags.find(" avx512_bf16 ") != std::string::npos));
}

TEST_CASE("this test binary's own build runs here, and a build for missing features is refused clearly") {
  CHECK_NOTHROW(cputrain::check_cpu_supports_build());
  cputrain::cpu_features old_cpu;  // a CPU with none of the features
  const auto compiled = cputrain::cpu_features::compiled();
  if (compiled.names().empty()) {
    WARN("skipped the refusal half: this test was compiled for baseline x86-64");
    return;
  }
  try {
    cputrain::check_cpu_supports_build(old_cpu);
    FAIL("expected an error");
  } catch (const cputrain::error& e) {
    CHECK_THAT(e.what(), Catch::Contains(compiled.names().front()));
    CHECK_THAT(e.what(), Catch::Contains("rebuild"));
  }
}

TEST_CASE("missing_from lists exactly the features the other set lacks") {
  cputrain::cpu_features want;
  want.avx2 = want.fma = want.avx512f = true;
  cputrain::cpu_features have;
  have.avx2 = have.fma = true;
  CHECK(want.missing_from(have) == std::vector<std::string>{"avx512f"});
  CHECK(have.missing_from(want).empty());
  CHECK(want.names() == std::vector<std::string>{"avx2", "fma", "avx512f"});
}

}  // namespace cpu_features_test
