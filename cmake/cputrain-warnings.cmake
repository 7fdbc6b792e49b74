# Warning and instruction-set flags for the project's own programs, tests and benchmarks. The installed
# cputrain::cputrain target carries none of these: a consumer's flags are the consumer's choice.
function(cputrain_project_flags target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(CPUTRAIN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(CPUTRAIN_ARCH_FLAGS)
    separate_arguments(_arch UNIX_COMMAND "${CPUTRAIN_ARCH_FLAGS}")
    target_compile_options(${target} PRIVATE ${_arch})
  endif()
endfunction()
