# Test stand-in for the hwloc CMake package that Conan's hwloc recipe provides (CMakeDeps: find_package(hwloc),
# hwloc::hwloc), wrapping the system library; see utf8proc-config.cmake next door.
find_library(CPUTRAIN_STUB_HWLOC_LIBRARY NAMES hwloc)
find_path(CPUTRAIN_STUB_HWLOC_INCLUDE_DIR NAMES hwloc.h)
if(NOT CPUTRAIN_STUB_HWLOC_LIBRARY OR NOT CPUTRAIN_STUB_HWLOC_INCLUDE_DIR)
  set(hwloc_FOUND FALSE)
  set(hwloc_NOT_FOUND_MESSAGE "the stub wraps the system hwloc, which is missing")
  return()
endif()
if(NOT TARGET hwloc::hwloc)
  add_library(hwloc::hwloc UNKNOWN IMPORTED)
  set_target_properties(hwloc::hwloc PROPERTIES
    IMPORTED_LOCATION "${CPUTRAIN_STUB_HWLOC_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CPUTRAIN_STUB_HWLOC_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS CPUTRAIN_STUB_HWLOC_PACKAGE=1)
endif()
set_property(GLOBAL APPEND PROPERTY CPUTRAIN_STUB_PACKAGES hwloc)
