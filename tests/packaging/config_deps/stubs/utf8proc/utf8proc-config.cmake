# Test stand-in for the utf8proc CMake package that vcpkg's utf8proc port and Conan's utf8proc recipe provide: the
# same package and target names (find_package(utf8proc CONFIG), utf8proc::utf8proc), wrapping the system library.
# The compile definition and the global property let tests/packaging (config-deps) prove cputrain used it.
find_library(CPUTRAIN_STUB_UTF8PROC_LIBRARY NAMES utf8proc)
find_path(CPUTRAIN_STUB_UTF8PROC_INCLUDE_DIR NAMES utf8proc.h)
if(NOT CPUTRAIN_STUB_UTF8PROC_LIBRARY OR NOT CPUTRAIN_STUB_UTF8PROC_INCLUDE_DIR)
  set(utf8proc_FOUND FALSE)
  set(utf8proc_NOT_FOUND_MESSAGE "the stub wraps the system utf8proc, which is missing")
  return()
endif()
if(NOT TARGET utf8proc::utf8proc)
  add_library(utf8proc::utf8proc UNKNOWN IMPORTED)
  set_target_properties(utf8proc::utf8proc PROPERTIES
    IMPORTED_LOCATION "${CPUTRAIN_STUB_UTF8PROC_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CPUTRAIN_STUB_UTF8PROC_INCLUDE_DIR}"
    INTERFACE_COMPILE_DEFINITIONS CPUTRAIN_STUB_UTF8PROC_PACKAGE=1)
endif()
set_property(GLOBAL APPEND PROPERTY CPUTRAIN_STUB_PACKAGES utf8proc)
