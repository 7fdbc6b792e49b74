# The project's programs built a second time against MPICH (CPUTRAIN_TEST_MPICH; docs/distributed.md, "MPICH and
# Intel MPI's syntax"), beside the Open MPI build that FindMPI and Debian's alternatives give. Debian's Boost.MPI is
# built for Open MPI only, and one process cannot hold two MPIs, so the MPICH programs link a Boost.MPI compiled
# here, once per build tree, from Debian's boost1.74 source package of the installed headers' exact version
# (scripts/boost-mpi-sources.sh), against MPICH's mpi.h and libmpich.
#
# Outputs: CPUTRAIN_HAVE_MPICH (ON/OFF), CPUTRAIN_MPICH_MPIEXEC (Hydra's mpiexec) and the INTERFACE target
# cputrain_all_mpich (cputrain_all's equivalent: the library, its cli and hwloc components, MPICH). Anything
# missing turns it OFF with a warning that names what to install, so a machine without MPICH still configures.

set(CPUTRAIN_HAVE_MPICH OFF)

function(_cputrain_mpich_skip why)
  message(WARNING "cputrain: CPUTRAIN_TEST_MPICH is ON, but the MPICH builds and tests are left out: ${why} "
                  "(scripts/install-deps.sh --test installs what they need)")
endfunction()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(cputrain_mpich QUIET IMPORTED_TARGET mpich)
endif()
find_program(CPUTRAIN_MPICH_MPIEXEC NAMES mpiexec.hydra mpiexec.mpich DOC "MPICH's launcher (Hydra)")
mark_as_advanced(CPUTRAIN_MPICH_MPIEXEC)
if(NOT TARGET PkgConfig::cputrain_mpich)
  _cputrain_mpich_skip("no MPICH (pkg-config mpich; Debian: libmpich-dev)")
  return()
endif()
if(NOT CPUTRAIN_MPICH_MPIEXEC)
  _cputrain_mpich_skip("no mpiexec.hydra (Debian: mpich)")
  return()
endif()
# Boost.MPI's headers only include <mpi.h>: it must be MPICH's, which the include path below makes it.
find_path(CPUTRAIN_MPICH_INCLUDE_DIR mpi.h PATHS ${cputrain_mpich_INCLUDE_DIRS} NO_DEFAULT_PATH)
mark_as_advanced(CPUTRAIN_MPICH_INCLUDE_DIR)
if(NOT CPUTRAIN_MPICH_INCLUDE_DIR)
  _cputrain_mpich_skip("pkg-config mpich names no directory with mpi.h")
  return()
endif()
find_package(Boost 1.74 QUIET COMPONENTS serialization)
if(NOT TARGET Boost::serialization)
  _cputrain_mpich_skip("no Boost.Serialization (Debian: libboost-serialization-dev), which Boost.MPI needs")
  return()
endif()
set(_cputrain_boost_mpi_script "${PROJECT_SOURCE_DIR}/scripts/boost-mpi-sources.sh")
execute_process(COMMAND bash "${_cputrain_boost_mpi_script}" --check
                RESULT_VARIABLE _cputrain_rc ERROR_VARIABLE _cputrain_why OUTPUT_QUIET)
if(NOT _cputrain_rc EQUAL 0)
  string(STRIP "${_cputrain_why}" _cputrain_why)
  _cputrain_mpich_skip("Boost.MPI's sources cannot be had: ${_cputrain_why}")
  return()
endif()

# Boost 1.74's libs/mpi/src, fetched and extracted at build time by one command whose outputs ninja knows, so it
# runs once per build tree. Only the 6 of its 23 sources that the MPICH programs' links take are compiled (saving
# 30 CPU seconds): cputrain calls Boost.MPI only in mpi/communicator.hpp (communicator, exceptions, collectives of
# built-in types). A link error naming boost::mpi after a change there says which source to add.
set(_cputrain_boost_mpi_sources communicator error_string exception group point_to_point request)
set(_cputrain_boost_mpi_dir "${CMAKE_BINARY_DIR}/boost-mpi-mpich")
list(TRANSFORM _cputrain_boost_mpi_sources PREPEND "${_cputrain_boost_mpi_dir}/src/")
list(TRANSFORM _cputrain_boost_mpi_sources APPEND ".cpp")
add_custom_command(OUTPUT ${_cputrain_boost_mpi_sources}
  COMMAND bash "${_cputrain_boost_mpi_script}" "${_cputrain_boost_mpi_dir}"
  DEPENDS "${_cputrain_boost_mpi_script}"
  COMMENT "Fetching Boost.MPI's sources (Debian's boost1.74 source package) to build it for MPICH"
  VERBATIM)
# Fails the build if anything put Open MPI's mpi.h ahead of MPICH's.
set(_cputrain_mpich_guard "${_cputrain_boost_mpi_dir}/mpich_guard.cpp")
file(CONFIGURE OUTPUT "${_cputrain_mpich_guard}" CONTENT [[
#include <mpi.h>
#if !defined(MPICH_VERSION) || defined(OMPI_MAJOR_VERSION)
#error "the MPICH build of Boost.MPI sees another MPI's mpi.h"
#endif
]])
add_library(cputrain_boost_mpi_mpich STATIC ${_cputrain_boost_mpi_sources} "${_cputrain_mpich_guard}")
# Boost's own code: built as Boost builds it (no -Werror from this project, no -march), optimised.
target_compile_features(cputrain_boost_mpi_mpich PUBLIC cxx_std_20)
target_compile_options(cputrain_boost_mpi_mpich PRIVATE -O2 -w)
target_include_directories(cputrain_boost_mpi_mpich BEFORE PUBLIC "${CPUTRAIN_MPICH_INCLUDE_DIR}")
target_link_libraries(cputrain_boost_mpi_mpich PUBLIC Boost::serialization PkgConfig::cputrain_mpich)

# cputrain_all without its mpi component (Open MPI's Boost.MPI and libmpi), with MPICH's instead.
add_library(cputrain_all_mpich INTERFACE)
target_link_libraries(cputrain_all_mpich INTERFACE cputrain cputrain_boost_mpi_mpich)
foreach(_component IN LISTS CPUTRAIN_COMPONENTS)
  if(NOT _component STREQUAL "mpi")
    target_link_libraries(cputrain_all_mpich INTERFACE cputrain_${_component})
  endif()
endforeach()

set(CPUTRAIN_HAVE_MPICH ON)
message(STATUS "cputrain: MPICH ${cputrain_mpich_VERSION} builds and tests on (${CPUTRAIN_MPICH_MPIEXEC})")
