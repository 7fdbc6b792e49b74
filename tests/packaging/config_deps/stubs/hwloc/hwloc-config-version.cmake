# Version file of the hwloc stand-in: a 2.x hwloc, compatible with any requested 2.y (like CMakeDeps' default).
set(PACKAGE_VERSION "2.9.0")
if(PACKAGE_FIND_VERSION_MAJOR STREQUAL "2" AND NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
else()
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
