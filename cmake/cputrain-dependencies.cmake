# The dependencies of cputrain::cputrain, found the same way by the project's own build and by the installed
# package config. The includer defines _cputrain_find_package(...) as find_package(... REQUIRED) or as
# find_dependency(...), so there is one list to keep.
#
# Inputs:  CPUTRAIN_USE_BLAS (ON/OFF), CPUTRAIN_WITH_HWLOC (AUTO/ON/OFF)
# Outputs: CPUTRAIN_HAVE_HWLOC, and cputrain_link_dependencies(target) for the INTERFACE target.

_cputrain_find_package(Threads)
_cputrain_find_package(Eigen3 3.4 NO_MODULE)
_cputrain_find_package(TBB 2021)
_cputrain_find_package(MPI COMPONENTS CXX)
_cputrain_find_package(Boost 1.74 COMPONENTS mpi program_options)
_cputrain_find_package(nlohmann_json 3.10)
if(CPUTRAIN_USE_BLAS)
  _cputrain_find_package(BLAS)
endif()

# utf8proc and hwloc ship pkg-config files, not CMake packages, on Debian.
find_package(PkgConfig QUIET)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "cputrain: pkg-config is needed to find utf8proc (Debian: apt-get install pkg-config)")
endif()
if(NOT TARGET PkgConfig::cputrain_utf8proc)
  pkg_check_modules(cputrain_utf8proc QUIET IMPORTED_TARGET libutf8proc)
  if(NOT cputrain_utf8proc_FOUND)
    message(FATAL_ERROR "cputrain: utf8proc not found (Debian: apt-get install libutf8proc-dev)")
  endif()
endif()

set(CPUTRAIN_HAVE_HWLOC OFF)
if(NOT CPUTRAIN_WITH_HWLOC STREQUAL "OFF")
  if(NOT TARGET PkgConfig::cputrain_hwloc)
    pkg_check_modules(cputrain_hwloc QUIET IMPORTED_TARGET hwloc>=2.0)
  endif()
  if(TARGET PkgConfig::cputrain_hwloc)
    set(CPUTRAIN_HAVE_HWLOC ON)
  elseif(CPUTRAIN_WITH_HWLOC STREQUAL "ON")
    message(FATAL_ERROR "cputrain: CPUTRAIN_WITH_HWLOC=ON but hwloc >= 2.0 was not found "
                        "(Debian: apt-get install libhwloc-dev)")
  endif()
endif()

function(cputrain_link_dependencies target)
  target_link_libraries(${target} INTERFACE
    Eigen3::Eigen TBB::tbb TBB::tbbmalloc Boost::mpi Boost::program_options MPI::MPI_CXX
    nlohmann_json::nlohmann_json PkgConfig::cputrain_utf8proc Threads::Threads)
  # All threading goes through oneTBB: Eigen must never start an OpenMP team of its own.
  target_compile_definitions(${target} INTERFACE EIGEN_DONT_PARALLELIZE)
  if(CPUTRAIN_USE_BLAS)
    target_link_libraries(${target} INTERFACE BLAS::BLAS)
    target_compile_definitions(${target} INTERFACE EIGEN_USE_BLAS CPUTRAIN_USE_BLAS=1)
  endif()
  if(CPUTRAIN_HAVE_HWLOC)
    target_link_libraries(${target} INTERFACE PkgConfig::cputrain_hwloc)
    target_compile_definitions(${target} INTERFACE CPUTRAIN_HAVE_HWLOC=1)
  endif()
endfunction()
