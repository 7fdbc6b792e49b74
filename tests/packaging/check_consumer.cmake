# Builds and runs a downstream project against cputrain, from CTest:
#   cmake -DMODE=install|subdirectory|test-package|config-deps -DSOURCE_DIR=<cputrain source>
#         -DBUILD_DIR=<cputrain build> -DWORK_DIR=<scratch> -DGENERATOR=<generator> -DCXX=<compiler> -P check_consumer.cmake
# install:      installs BUILD_DIR into WORK_DIR/prefix, checks the installed files, checks that an impossible
#               version is refused, builds the lean consumer with MPI and Boost hidden (and checks that the mpi
#               component is then refused), then builds tests/packaging/consumer's mpi and cli programs against
#               the prefix (its core program is the lean one), and the user guide's example over the installed
#               compiled component (cputrain::instances), whose own object must define none of cputrain's heavy code.
# subdirectory: builds tests/packaging/subdirectory, which add_subdirectory()s SOURCE_DIR, and its mpi and cli
#               consumers, unoptimised (what it proves is CMake's usage requirements, not the compiler's code).
# test-package: builds test_package/ (the Conan recipe's test program) against the installed prefix alone; its
#               products run on oneDNN when the package was installed with it, on Eigen otherwise, and its topology
#               comes from hwloc when the package has the hwloc component, from /sys otherwise.
# config-deps:  with pkg-config disabled and utf8proc, xxHash and hwloc offered only as CMake packages (the stand-ins in
#               tests/packaging/config_deps/stubs, named as vcpkg and Conan name them), builds
#               tests/packaging/config_deps against the installed prefix, then as a vendored tree.
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
# What the mpi, cli, test_package and config-deps consumers prove is CMake's usage requirements and the link, not
# the compiler's code: unoptimised they compile in about 60% of the time (consumer_cli 23 -> 16 CPU-s, test_package
# 16 -> 8, GCC). The lean consumer (the whole lean core, parsing-bound: no faster) and the guide example (whose
# object is checked for the code it must not define) stay Release, as a user's would be.
set(_unoptimised -DCMAKE_BUILD_TYPE=)

set(_prefix "${WORK_DIR}/prefix")
if(MODE STREQUAL "install")
  run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${_prefix}")
  foreach(_file include/cputrain/cputrain.hpp include/cputrain/core/bf16.hpp
                lib/cmake/cputrain/cputrain-config.cmake lib/cmake/cputrain/cputrain-config-version.cmake
                lib/cmake/cputrain/cputrain-targets.cmake lib/cmake/cputrain/cputrain-dependencies.cmake
                lib/cmake/cputrain/cputrain-mpi-targets.cmake lib/cmake/cputrain/cputrain-cli-targets.cmake
                lib/cmake/cputrain/cputrain-instances-targets.cmake lib/libcputrain_instances.a)
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

  # The lean core needs neither MPI nor Boost: with both hidden from CMake the package is found and the lean
  # consumer builds and runs, while asking for the mpi component fails, naming it.
  set(_hide_mpi_boost -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON)
  run(${CMAKE_COMMAND} ${_common} -S "${SOURCE_DIR}/tests/packaging/consumer" -B "${WORK_DIR}/lean"
      -DCMAKE_PREFIX_PATH=${_prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCONSUMER_LEAN_ONLY=ON ${_hide_mpi_boost})
  file(READ "${WORK_DIR}/lean/CMakeCache.txt" _cache)
  if(_cache MATCHES "MPI_CXX_COMPILER:|Boost_DIR:PATH=/")
    message(FATAL_ERROR "the lean consumer's configure looked for MPI or Boost")
  endif()
  run(${CMAKE_COMMAND} --build "${WORK_DIR}/lean")
  file(MAKE_DIRECTORY "${WORK_DIR}/no-mpi")
  file(WRITE "${WORK_DIR}/no-mpi/CMakeLists.txt"
       "cmake_minimum_required(VERSION 3.22)\nproject(p LANGUAGES CXX)\nfind_package(cputrain CONFIG REQUIRED COMPONENTS mpi)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} ${_common} -S "${WORK_DIR}/no-mpi" -B "${WORK_DIR}/no-mpi/build"
                          -DCMAKE_PREFIX_PATH=${_prefix} ${_hide_mpi_boost}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "mpi")
    message(FATAL_ERROR "find_package(cputrain COMPONENTS mpi) without MPI should have failed naming mpi, got rc=${rc}: ${err}")
  endif()

  # A tree installed without being built has no compiled component: find_package still finds the header-only
  # package, and asking for the component fails, saying how to build it.
  set(_unbuilt "${WORK_DIR}/unbuilt-prefix")
  file(COPY "${_prefix}/" DESTINATION "${_unbuilt}")
  file(REMOVE "${_unbuilt}/lib/libcputrain_instances.a")
  foreach(_ask "" "COMPONENTS instances")
    string(MAKE_C_IDENTIFIER "unbuilt ${_ask}" _dir)
    file(MAKE_DIRECTORY "${WORK_DIR}/${_dir}")
    file(WRITE "${WORK_DIR}/${_dir}/CMakeLists.txt"
         "cmake_minimum_required(VERSION 3.22)\nproject(p LANGUAGES CXX)\n"
         "find_package(cputrain CONFIG REQUIRED ${_ask})\n")
    execute_process(COMMAND ${CMAKE_COMMAND} ${_common} -S "${WORK_DIR}/${_dir}" -B "${WORK_DIR}/${_dir}/build"
                            -DCMAKE_PREFIX_PATH=${_unbuilt} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(_ask STREQUAL "" AND NOT rc EQUAL 0)
      message(FATAL_ERROR "find_package(cputrain) of a tree installed unbuilt should succeed: ${err}")
    elseif(NOT _ask STREQUAL "" AND (rc EQUAL 0 OR NOT err MATCHES "--target cputrain_instances"))
      message(FATAL_ERROR "find_package(cputrain COMPONENTS instances) of a tree installed unbuilt should fail saying "
                          "how to build the component, got rc=${rc}: ${err}")
    endif()
  endforeach()

  # Only the prefix: the consumer must not see the source tree. The lean consumer built above is the same program
  # (main.cpp, cputrain::cputrain, found with MPI and Boost hidden): it is checked below instead of being compiled
  # again here.
  run(${CMAKE_COMMAND} ${_common} -S "${SOURCE_DIR}/tests/packaging/consumer" -B "${WORK_DIR}/build"
      -DCMAKE_PREFIX_PATH=${_prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF ${_unoptimised})
  set(_build_targets --target consumer_mpi consumer_cli)
  set(_consumer_program "${WORK_DIR}/lean/consumer")

  # The guide example as its CMakeLists.txt builds it by default: its one file over cputrain::instances (found with
  # COMPONENTS instances). Its object must define none of the model's, the trainer's or the readers' code, and the
  # installed library all of it; the program must start (a usage error, exit 2).
  run(${CMAKE_COMMAND} ${_common} -S "${SOURCE_DIR}/examples/guide" -B "${WORK_DIR}/guide"
      -DCMAKE_PREFIX_PATH=${_prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  run(${CMAKE_COMMAND} --build "${WORK_DIR}/guide")
  run(sh "${SOURCE_DIR}/examples/guide/check_separate_compilation.sh"
      "${WORK_DIR}/guide/CMakeFiles/train_qa.dir/train_qa.cpp.o" "${_prefix}/lib/libcputrain_instances.a")
  message(STATUS "${last_output}")
  execute_process(COMMAND "${WORK_DIR}/guide/train_qa" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "usage: ")
    message(FATAL_ERROR "the guide example over the installed component should exit 2 with its usage, got rc=${rc}: "
                        "${err}")
  endif()
elseif(MODE STREQUAL "subdirectory")
  run(${CMAKE_COMMAND} ${_common} -S "${SOURCE_DIR}/tests/packaging/subdirectory" -B "${WORK_DIR}/build"
      -DCPUTRAIN_SOURCE_DIR=${SOURCE_DIR} ${_unoptimised})
  set(_consumer_program "")
elseif(MODE STREQUAL "test-package")
  run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${_prefix}")
  file(READ "${_prefix}/lib/cmake/cputrain/cputrain-config.cmake" _config)
  if(_config MATCHES "if\\(ON\\)[ \t\r\n]+set\\(CPUTRAIN_WITH_ONEDNN ON\\)")
    # Built with oneDNN, fp32 products still run on Eigen on a CPU without AVX-512 (there oneDNN's fp32 is the
    # slower of the two), and the line says so; only a package built without oneDNN says "built without".
    set(_products "oneDNN (or Eigen, saying oneDNN is slower on this CPU)")
    set(_products_regex "(oneDNN |Eigen \\(faster than oneDNN's fp32 without AVX-512\\))")
  else()
    set(_products Eigen)
    set(_products_regex "Eigen \\(built without oneDNN\\)")
  endif()
  run(${CMAKE_COMMAND} ${_common} -S "${SOURCE_DIR}/test_package" -B "${WORK_DIR}/build"
      -DCMAKE_PREFIX_PATH=${_prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF ${_unoptimised})
  run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
  # The package's own choice of backend, whatever CPUTRAIN_GEMM_BACKEND says in the environment of the test run.
  run(${CMAKE_COMMAND} -E env --unset=CPUTRAIN_GEMM_BACKEND "${WORK_DIR}/build/test_package")
  message(STATUS "${last_output}")
  if(NOT last_output MATCHES "cputrain [0-9]+\\.[0-9]+\\.[0-9]+ test_package: tokens 5 6 7 8 9, gemm 58 64 139 154, ")
    message(FATAL_ERROR "unexpected test_package output: ${last_output}")
  endif()
  if(NOT last_output MATCHES ", fp32 products on ${_products_regex}")
    message(FATAL_ERROR "test_package's products should run on ${_products}, as the package was installed: "
                        "${last_output}")
  endif()
  # test_package links cputrain::hwloc where the package has it, and then reads the topology through hwloc.
  if(_config MATCHES "set\\(_cputrain_installed_components [^)]*hwloc")
    set(_topology hwloc)
  else()
    set(_topology sysfs)
  endif()
  if(NOT last_output MATCHES ", topology from ${_topology}: ")
    message(FATAL_ERROR "test_package should read the topology from ${_topology}, as the package was installed: "
                        "${last_output}")
  endif()
  return()
elseif(MODE STREQUAL "config-deps")
  # pkg-config is needed nowhere on this path: disabling it makes any fallback to it fail the configure step.
  set(_project "${SOURCE_DIR}/tests/packaging/config_deps")
  set(_no_pkg_config -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${_prefix}")
  file(READ "${_prefix}/lib/cmake/cputrain/cputrain-config.cmake" _config)
  if(NOT _config MATCHES "set\\(_cputrain_installed_components [^)]*hwloc")
    message(FATAL_ERROR "config-deps needs a build of cputrain with hwloc (CPUTRAIN_HAVE_HWLOC): install libhwloc-dev")
  endif()
  foreach(_kind installed vendored)
    if(_kind STREQUAL "installed")
      set(_where -Dcputrain_DIR=${_prefix}/lib/cmake/cputrain "-DCMAKE_PREFIX_PATH=${_project}/stubs")
    else()
      set(_where -DCPUTRAIN_SOURCE_DIR=${SOURCE_DIR} "-DCMAKE_PREFIX_PATH=${_project}/stubs")
    endif()
    run(${CMAKE_COMMAND} ${_common} -S "${_project}" -B "${WORK_DIR}/${_kind}" ${_where} ${_no_pkg_config}
        ${_unoptimised})
    run(${CMAKE_COMMAND} --build "${WORK_DIR}/${_kind}")
    run("${WORK_DIR}/${_kind}/consumer")
    message(STATUS "${_kind}: ${last_output}")
    if(NOT last_output MATCHES
       "utf8proc, xxHash and hwloc packages used, utf8proc works, xxHash works, [1-9][0-9]* NUMA node")
      message(FATAL_ERROR "unexpected config-deps consumer output (${_kind}): ${last_output}")
    endif()
  endforeach()
  return()
else()
  message(FATAL_ERROR "MODE must be install, subdirectory, test-package or config-deps, not '${MODE}'")
endif()

run(${CMAKE_COMMAND} --build "${WORK_DIR}/build" ${_build_targets})
if(_consumer_program)
  run("${_consumer_program}")
  message(STATUS "${last_output}")
  if(NOT last_output MATCHES "cputrain [0-9]+\\.[0-9]+\\.[0-9]+ consumer: bf16/single, last weight 1.976562")
    message(FATAL_ERROR "unexpected consumer output: ${last_output}")
  endif()
endif()
run("${WORK_DIR}/build/consumer_mpi")
message(STATUS "${last_output}")
if(NOT last_output MATCHES "consumer_mpi: rank 0 of 1, sum 1.5 2.5, 1 host")
  message(FATAL_ERROR "unexpected consumer_mpi output: ${last_output}")
endif()
run("${WORK_DIR}/build/consumer_cli")
message(STATUS "${last_output}")
if(NOT last_output MATCHES "consumer_cli: lr 3e-05, batch 12, output_dir out; refused: --do_train needs --train_file")
  message(FATAL_ERROR "unexpected consumer_cli output: ${last_output}")
endif()
