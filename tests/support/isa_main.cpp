// Main for tests built for one instruction set (CPUTRAIN_TEST_ISA): on a CPU without it, say so and exit 77,
// which CTest reports as skipped, instead of dying of SIGILL.
#define CATCH_CONFIG_CONSOLE_WIDTH 400
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>

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

int main(int argc, char* argv[]) {
  if (!cpu_has(CPUTRAIN_TEST_ISA)) {
    std::printf("skipped: this CPU lacks %s; the %s path was compiled but cannot run here\n", CPUTRAIN_TEST_ISA,
                CPUTRAIN_TEST_ISA);
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
