# Builds and runs a downstream project against cputrain, from CTest:
#   cmake -DMODE=install|subdirectory -DSOURCE_DIR=<cputrain source> -DBUILD_DIR=<cputrain build>
#         -DWORK_DIR=<scratch> -DGENERATOR=<generator> -DCXX=<compiler> -P check_consumer.cmake
# install:      installs BUILD_DIR into WORK_DIR/prefix, checks the installed files, checks that an impossible
#               version is refused, then builds tests/packaging/consumer against the prefix alone.
# subdirectory: builds tests/packaging/subdirectory, which add_subdirectory()s SOURCE_DIR.
foreach(_var MODE SOURCE_DIR BUILD_DIR WORK_DIR GENERATOR CXX)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "check_consumer.cmake: -D${_var}=... is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(_common -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release)

if(MODE STREQUAL "install")
  set(_prefix "${WORK_DIR}/prefix")
  run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${_prefix}")
  foreach(_file include/cputrain/cputrain.hpp include/cputrain/core/bf16.hpp
                lib/cmake/cputrain/cputrain-config.cmake lib/cmake/cputrain/cputrain-config-version.cmake
                lib/cmake/cputrain/cputrain-targets.cmake lib/cmake/cputrain/cputrain-dependencies.cmake)
    if(NOT EXISTS "${_prefix}/${_file}")
      message(FATAL_ERROR "the installed tree lacks ${_file}")
    endif()
  endforeach()

  # The version file must refuse a version we are not.
  file(MAKE_DIRECTORY "${WORK_DIR}/too-new")
  file(WRITE "${WORK_DIR}/too-new/CMakeLists.txt"
       "cmake_minimum_required(VERSION 3.22)\nproject(p LANGUAGES CXX)\nfind_package(cputrain 99.0 CONFIG REQUIRED)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} ${_common} -S "${WORK_DIR}/too-new" -B "${WORK_DIR}/too-new/build"
                          -DCMAKE_PREFIX_PATH=${_prefix}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "cputrain")
    message(FATAL_ERROR "find_package(cputrain 99.0) should have failed naming cputrain, got rc=${rc}: ${err}")
  endif()

  # Only the prefix: the consumer must not see the source tree.
  run(${CMAKE_COMMAND} ${_common} -S "${SOURCE_DIR}/tests/packaging/consumer" -B "${WORK_DIR}/build"
      -DCMAKE_PREFIX_PATH=${_prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
elseif(MODE STREQUAL "subdirectory")
  run(${CMAKE_COMMAND} ${_common} -S "${SOURCE_DIR}/tests/packaging/subdirectory" -B "${WORK_DIR}/build"
      -DCPUTRAIN_SOURCE_DIR=${SOURCE_DIR})
else()
  message(FATAL_ERROR "MODE must be install or subdirectory, not '${MODE}'")
endif()

run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
message(STATUS "${last_output}")
if(NOT last_output MATCHES "cputrain [0-9]+\\.[0-9]+\\.[0-9]+ consumer: bf16/single, last weight 1.976562")
  message(FATAL_ERROR "unexpected consumer output: ${last_output}")
endif()
