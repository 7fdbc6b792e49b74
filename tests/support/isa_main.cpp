// Main for tests built for one instruction set: on a CPU without it, say so and exit 77, which CTest reports as
// skipped, instead of dying of SIGILL. Compiled once, without any instruction-set flags (it runs before we know the
// CPU can take them); each test executable names its instruction set in `cputrain_test_isa`, a one-line source
// that tests/CMakeLists.txt writes for it.
#include <cstdio>
#include <cstring>

#include "catch_runtime.hpp"

namespace {
bool cpu_has(const char* isa) {
  __builtin_cpu_init();
  if (std::strcmp(isa, "scalar") == 0) return true;
  if (std::strcmp(isa, "avx2") == 0) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (std::strcmp(isa, "avx512") == 0)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
  if (std::strcmp(isa, "avx512bf16") == 0)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
  return false;
}
}  // namespace

extern const char* const cputrain_test_isa;

int main(int argc, char* argv[]) {
  if (!cpu_has(cputrain_test_isa)) {
    std::printf("skipped: this CPU lacks %s; the %s path was compiled but cannot run here\n", cputrain_test_isa,
                cputrain_test_isa);
    return 77;
  }
  return cputrain::test_support::run_catch_session(argc, argv).status;
}
