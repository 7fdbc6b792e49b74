# Warning and instruction-set flags for the project's own programs, tests and benchmarks. The installed
# cputrain::cputrain target carries none of these: a consumer's flags are the consumer's choice.
# cputrain_project_flags(<target> [NO_ARCH]): NO_ARCH for targets that set their own instruction set.
function(cputrain_project_flags target)
  cmake_parse_arguments(ARG "NO_ARCH" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  # GCC 12 reports -W(maybe-)uninitialized inside its own AVX-512 intrinsics (the `__m512 __Y = __Y;` of
  # _mm512_undefined_ps) when Eigen's packet code is inlined with -march=native on an AVX-512 CPU: false
  # positives located in the compiler's headers, which no pragma in ours can reach. The Clang build, also with
  # warnings as errors, keeps checking our code for uninitialised reads.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized -Wno-uninitialized)
  endif()
  if(CPUTRAIN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(CPUTRAIN_ARCH_FLAGS AND NOT ARG_NO_ARCH)
    separate_arguments(_arch UNIX_COMMAND "${CPUTRAIN_ARCH_FLAGS}")
    target_compile_options(${target} PRIVATE ${_arch})
  endif()
endfunction()
