# The dependencies of cputrain::cputrain and of its components (cputrain::mpi, cputrain::cli, cputrain::hwloc), found
# the same way by the project's own build and by the installed package config. The includer defines
# _cputrain_find_package(...) (the core's: find_package(... REQUIRED) or find_dependency(...)) and
# _cputrain_find_component_package(<ok-variable> ...) (a component's: REQUIRED in the project, QUIET in the package
# config, which then sets <ok-variable> FALSE when the package is missing), so there is one list to keep. The package recipes (vcpkg.json, the vcpkg port, conanfile.py)
# name the same dependencies; tests/packaging/check_recipes.py fails when one list changes alone.
#
# Inputs:  CPUTRAIN_USE_BLAS (ON/OFF), CPUTRAIN_WITH_ONEDNN (AUTO/ON/OFF); for _cputrain_component_dependencies
#          (hwloc): CPUTRAIN_WITH_HWLOC (AUTO/ON/OFF)
# Outputs: CPUTRAIN_HAVE_ONEDNN, cputrain_link_dependencies(target) for the core INTERFACE target,
#          _cputrain_component_dependencies(<component> <ok-variable>) and
#          cputrain_link_component_dependencies(<component> <target>) for a component's.

_cputrain_find_package(Threads)
_cputrain_find_package(Eigen3 3.4 NO_MODULE)
_cputrain_find_package(TBB 2021)
_cputrain_find_package(nlohmann_json 3.10)
if(CPUTRAIN_USE_BLAS)
  _cputrain_find_package(BLAS)
endif()

# utf8proc and hwloc: a CMake package where there is one (vcpkg's utf8proc port, Conan's utf8proc and hwloc recipes:
# utf8proc::utf8proc, hwloc::hwloc), else pkg-config (Debian ships only libutf8proc.pc and hwloc.pc, and so does
# vcpkg's hwloc port). Either way cputrain links cputrain_dep::utf8proc and cputrain_dep::hwloc, so the exported
# targets name the same thing whichever way the consumer's machine provides the library.
macro(_cputrain_require_pkg_config _cputrain_what)
  find_package(PkgConfig QUIET)
  if(NOT PKG_CONFIG_FOUND)
    message(FATAL_ERROR "cputrain: pkg-config is needed to find ${_cputrain_what} (Debian: apt-get install pkg-config)")
  endif()
endmacro()

if(NOT TARGET cputrain_dep::utf8proc)
  find_package(utf8proc CONFIG QUIET)
  if(TARGET utf8proc::utf8proc)
    set(_cputrain_utf8proc_target utf8proc::utf8proc)
  else()
    _cputrain_require_pkg_config(utf8proc)
    if(NOT TARGET PkgConfig::cputrain_utf8proc)
      pkg_check_modules(cputrain_utf8proc QUIET IMPORTED_TARGET libutf8proc)
      if(NOT cputrain_utf8proc_FOUND)
        message(FATAL_ERROR "cputrain: utf8proc not found (Debian: apt-get install libutf8proc-dev)")
      endif()
    endif()
    set(_cputrain_utf8proc_target PkgConfig::cputrain_utf8proc)
  endif()
  add_library(cputrain_dep::utf8proc INTERFACE IMPORTED)
  target_link_libraries(cputrain_dep::utf8proc INTERFACE ${_cputrain_utf8proc_target})
  unset(_cputrain_utf8proc_target)
endif()

# xxHash (the checksums of safetensors tensors, io/tensor_checksum.hpp): the same two ways as utf8proc — vcpkg's
# xxhash port and Conan's xxhash recipe give xxHash::xxhash, Debian ships libxxhash.pc — as cputrain_dep::xxhash.
if(NOT TARGET cputrain_dep::xxhash)
  find_package(xxHash CONFIG QUIET)
  if(TARGET xxHash::xxhash)
    set(_cputrain_xxhash_target xxHash::xxhash)
  else()
    _cputrain_require_pkg_config(xxHash)
    if(NOT TARGET PkgConfig::cputrain_xxhash)
      pkg_check_modules(cputrain_xxhash QUIET IMPORTED_TARGET libxxhash)
      if(NOT cputrain_xxhash_FOUND)
        message(FATAL_ERROR "cputrain: xxHash not found (Debian: apt-get install libxxhash-dev)")
      endif()
    endif()
    set(_cputrain_xxhash_target PkgConfig::cputrain_xxhash)
  endif()
  add_library(cputrain_dep::xxhash INTERFACE IMPORTED)
  target_link_libraries(cputrain_dep::xxhash INTERFACE ${_cputrain_xxhash_target})
  unset(_cputrain_xxhash_target)
endif()

# oneDNN (the GEMM kernels for bf16 on AVX512-BF16/AMX, and for fp32): its CMake package where OpenCL is found
# (Debian's config insists on OpenCL, the library being also built for GPUs), else the library and header found
# directly (Debian without OpenCL's headers, vcpkg's and Conan's onednn). Either way cputrain links
# cputrain_dep::dnnl. Without it every product runs on Eigen's kernels.
if(NOT DEFINED CPUTRAIN_WITH_ONEDNN)
  set(CPUTRAIN_WITH_ONEDNN AUTO)
endif()
set(CPUTRAIN_HAVE_ONEDNN OFF)
if(NOT CPUTRAIN_WITH_ONEDNN STREQUAL "OFF")
  if(NOT TARGET cputrain_dep::dnnl)
    # Debian's config calls find_package(OpenCL REQUIRED), a fatal error without OpenCL's headers: ask for it
    # only where OpenCL is found; elsewhere (vcpkg's and Conan's onednn too) the library itself is enough.
    find_package(OpenCL QUIET)
    if(OpenCL_FOUND)
      find_package(dnnl 2.6 CONFIG QUIET)
    endif()
    if(TARGET DNNL::dnnl)
      set(_cputrain_dnnl_target DNNL::dnnl)
    else()
      find_path(CPUTRAIN_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
      find_library(CPUTRAIN_DNNL_LIBRARY NAMES dnnl)
      mark_as_advanced(CPUTRAIN_DNNL_INCLUDE_DIR CPUTRAIN_DNNL_LIBRARY)
      if(CPUTRAIN_DNNL_INCLUDE_DIR AND CPUTRAIN_DNNL_LIBRARY)
        set(_cputrain_dnnl_target "${CPUTRAIN_DNNL_LIBRARY}")
        # A static oneDNN (vcpkg's default triplet) brings neither its OpenMP runtime nor libdl.
        if(CPUTRAIN_DNNL_LIBRARY MATCHES "\\.a$")
          _cputrain_find_package(OpenMP COMPONENTS CXX)
          list(APPEND _cputrain_dnnl_target OpenMP::OpenMP_CXX ${CMAKE_DL_LIBS})
        endif()
      endif()
    endif()
    if(DEFINED _cputrain_dnnl_target)
      add_library(cputrain_dep::dnnl INTERFACE IMPORTED)
      target_link_libraries(cputrain_dep::dnnl INTERFACE ${_cputrain_dnnl_target})
      if(CPUTRAIN_DNNL_INCLUDE_DIR AND NOT TARGET DNNL::dnnl)
        target_include_directories(cputrain_dep::dnnl INTERFACE "${CPUTRAIN_DNNL_INCLUDE_DIR}")
      endif()
      unset(_cputrain_dnnl_target)
    endif()
  endif()
  if(TARGET cputrain_dep::dnnl)
    set(CPUTRAIN_HAVE_ONEDNN ON)
  elseif(CPUTRAIN_WITH_ONEDNN STREQUAL "ON")
    message(FATAL_ERROR "cputrain: CPUTRAIN_WITH_ONEDNN=ON but oneDNN >= 2.6 was not found "
                        "(Debian: apt-get install libdnnl-dev)")
  endif()
endif()

macro(_cputrain_find_hwloc)
set(CPUTRAIN_HAVE_HWLOC OFF)
if(NOT CPUTRAIN_WITH_HWLOC STREQUAL "OFF")
  if(NOT TARGET cputrain_dep::hwloc)
    find_package(hwloc 2.0 CONFIG QUIET)
    if(TARGET hwloc::hwloc)
      set(_cputrain_hwloc_target hwloc::hwloc)
    else()
      if(NOT TARGET PkgConfig::cputrain_hwloc)
        if(CPUTRAIN_WITH_HWLOC STREQUAL "ON")
          _cputrain_require_pkg_config(hwloc)
        else()
          find_package(PkgConfig QUIET)
        endif()
        if(PKG_CONFIG_FOUND)
          pkg_check_modules(cputrain_hwloc QUIET IMPORTED_TARGET hwloc>=2.0)
        endif()
      endif()
      if(TARGET PkgConfig::cputrain_hwloc)
        set(_cputrain_hwloc_target PkgConfig::cputrain_hwloc)
      endif()
    endif()
    if(DEFINED _cputrain_hwloc_target)
      add_library(cputrain_dep::hwloc INTERFACE IMPORTED)
      target_link_libraries(cputrain_dep::hwloc INTERFACE ${_cputrain_hwloc_target})
      unset(_cputrain_hwloc_target)
    endif()
  endif()
  if(TARGET cputrain_dep::hwloc)
    set(CPUTRAIN_HAVE_HWLOC ON)
  elseif(CPUTRAIN_WITH_HWLOC STREQUAL "ON")
    message(FATAL_ERROR "cputrain: CPUTRAIN_WITH_HWLOC=ON but hwloc >= 2.0 was not found "
                        "(Debian: apt-get install libhwloc-dev)")
  endif()
endif()
endmacro()

# A component's dependencies: <ok-variable> ends FALSE (the package config) when one is missing.
#   mpi    MPI (C++ bindings) and Boost.MPI built for that MPI
#   cli    Boost.Program_options
#   hwloc  hwloc >= 2.0 (a CMake package, else pkg-config); CPUTRAIN_WITH_HWLOC=OFF leaves it out
macro(_cputrain_component_dependencies _cputrain_component _cputrain_ok)
  set(${_cputrain_ok} TRUE)
  if("${_cputrain_component}" STREQUAL "mpi")
    _cputrain_find_component_package(${_cputrain_ok} MPI COMPONENTS CXX)
    _cputrain_find_component_package(${_cputrain_ok} Boost 1.74 COMPONENTS mpi)
  elseif("${_cputrain_component}" STREQUAL "cli")
    _cputrain_find_component_package(${_cputrain_ok} Boost 1.74 COMPONENTS program_options)
  elseif("${_cputrain_component}" STREQUAL "hwloc")
    _cputrain_find_hwloc()
    if(NOT CPUTRAIN_HAVE_HWLOC)
      set(${_cputrain_ok} FALSE)
    endif()
  else()
    set(${_cputrain_ok} FALSE)
  endif()
endmacro()

function(cputrain_link_dependencies target)
  target_link_libraries(${target} INTERFACE
    Eigen3::Eigen TBB::tbb TBB::tbbmalloc nlohmann_json::nlohmann_json cputrain_dep::utf8proc cputrain_dep::xxhash
    Threads::Threads)
  # All threading goes through oneTBB: Eigen must never start an OpenMP team of its own.
  target_compile_definitions(${target} INTERFACE EIGEN_DONT_PARALLELIZE)
  if(CPUTRAIN_USE_BLAS)
    target_link_libraries(${target} INTERFACE BLAS::BLAS)
    target_compile_definitions(${target} INTERFACE EIGEN_USE_BLAS CPUTRAIN_USE_BLAS=1)
  endif()
  if(CPUTRAIN_HAVE_ONEDNN)
    target_link_libraries(${target} INTERFACE cputrain_dep::dnnl)
    target_compile_definitions(${target} INTERFACE CPUTRAIN_HAVE_ONEDNN=1)
  endif()
endfunction()

function(cputrain_link_component_dependencies component target)
  if(component STREQUAL "mpi")
    target_link_libraries(${target} INTERFACE Boost::mpi MPI::MPI_CXX)
  elseif(component STREQUAL "cli")
    target_link_libraries(${target} INTERFACE Boost::program_options)
  elseif(component STREQUAL "hwloc")
    target_link_libraries(${target} INTERFACE cputrain_dep::hwloc)
    target_compile_definitions(${target} INTERFACE CPUTRAIN_HAVE_HWLOC=1)
  endif()
endfunction()
