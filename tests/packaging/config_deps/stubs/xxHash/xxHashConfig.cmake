# Test stand-in for the xxHash CMake package that vcpkg's xxhash port and Conan's xxhash recipe provide: the same
# package and target names (find_package(xxHash CONFIG), xxHash::xxhash), wrapping the system library. The compile
# definition and the global property let tests/packaging (config-deps) prove cputrain used it. The file name is
# xxHash's own (xxHashConfig.cmake): find_package looks for <Name>Config.cmake or <lower-case name>-config.cmake.
find_library(CPUTRAIN_STUB_XXHASH_LIBRARY NAMES xxhash)
find_path(CPUTRAIN_STUB_XXHASH_INCLUDE_DIR NAMES xxhash.h)
if(NOT CPUTRAIN_STUB_XXHASH_LIBRARY OR NOT CPUTRAIN_STUB_XXHASH_INCLUDE_DIR)
  set(xxHash_FOUND FALSE)
  set(xxHash_NOT_FOUND_MESSAGE "the stub wraps the system xxHash, which is missing")
  return()
endif()
if(NOT TARGET xxHash::xxhash)
  add_library(xxHash::xxhash UNKNOWN IMPORTED)
  set_target_properties(xxHash::xxhash PROPERTIES
    IMPORTED_LOCATION "${CPUTRAIN_STUB_XXHASH_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CPUTRAIN_STUB_XXHASH_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS CPUTRAIN_STUB_XXHASH_PACKAGE=1)
endif()
set_property(GLOBAL APPEND PROPERTY CPUTRAIN_STUB_PACKAGES xxHash)
