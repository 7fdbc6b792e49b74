# vcpkg overlay port for cputrain. It builds the checkout it sits in (packaging/vcpkg/ports/cputrain, four levels
# below the repository root), so `vcpkg install cputrain --overlay-ports=<checkout>/packaging/vcpkg/ports` packages
# exactly that tree. A port in a registry would instead fetch a release with vcpkg_from_github (REPO, REF = the tag,
# SHA512 of the archive); docs/packaging.md says what else would change.
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)
if(NOT EXISTS "${SOURCE_PATH}/include/cputrain/version.hpp")
  message(FATAL_ERROR "cputrain port: ${SOURCE_PATH} is not a cputrain checkout; use the port from packaging/vcpkg/ports")
endif()

# The port's version must be the tree's (include/cputrain/version.hpp is the one source of the version).
file(STRINGS "${SOURCE_PATH}/include/cputrain/version.hpp" _version_lines REGEX "#define CPUTRAIN_VERSION_(MAJOR|MINOR|PATCH) ")
foreach(_line IN LISTS _version_lines)
  if(_line MATCHES "#define CPUTRAIN_VERSION_(MAJOR|MINOR|PATCH) ([0-9]+)")
    set(_tree_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  endif()
endforeach()
if(NOT "${_tree_MAJOR}.${_tree_MINOR}.${_tree_PATCH}" STREQUAL "${VERSION}")
  message(FATAL_ERROR "cputrain port: the port says ${VERSION} but the tree is "
                      "${_tree_MAJOR}.${_tree_MINOR}.${_tree_PATCH}; update packaging/vcpkg/ports/cputrain/vcpkg.json")
endif()

# Header-only, one configuration is enough; the compiled component (feature "instances") is an optimised static
# library, which a debug program links as well.
set(VCPKG_BUILD_TYPE release)

# Each feature turns on what it names, and each is ON or OFF (never AUTO): the components mpi, cli, hwloc and
# instances (cputrain::mpi, cputrain::cli, cputrain::hwloc, cputrain::instances, each with its own export file) and
# the core's oneDNN and BLAS.
vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    mpi       CPUTRAIN_WITH_MPI
    cli       CPUTRAIN_WITH_CLI
    hwloc     CPUTRAIN_WITH_HWLOC
    instances CPUTRAIN_WITH_INSTANCES
    onednn    CPUTRAIN_WITH_ONEDNN
    openblas  CPUTRAIN_USE_BLAS
)
# The compiled component is built for one instruction-set level, and the programs that link it are compiled for the
# same one (docs/build.md, "The compiled component"): x86-64-v3 (AVX2, FMA) runs on every x86 server of the last
# decade; a triplet for a newer fleet sets e.g. set(CPUTRAIN_ARCH_FLAGS "-march=x86-64-v4 -mavx512bf16").
if(NOT DEFINED CPUTRAIN_ARCH_FLAGS)
  set(CPUTRAIN_ARCH_FLAGS "-march=x86-64-v3")
endif()

# vcpkg's hwloc port installs hwloc.pc and no CMake package: cputrain finds it through pkg-config.
vcpkg_find_acquire_program(PKGCONFIG)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    -DCPUTRAIN_BUILD_TESTS=OFF
    -DCPUTRAIN_BUILD_EXAMPLES=OFF
    -DCPUTRAIN_BUILD_BENCHMARKS=OFF
    -DCPUTRAIN_INSTALL=ON
    "-DCPUTRAIN_ARCH_FLAGS=${CPUTRAIN_ARCH_FLAGS}"
    "-DPKG_CONFIG_EXECUTABLE=${PKGCONFIG}"
)
vcpkg_cmake_install()
# lib/cmake/cputrain -> share/cputrain, with the prefix computations rewritten for the new depth.
vcpkg_cmake_config_fixup(CONFIG_PATH lib/cmake/cputrain)
# Header-only, the CMake package was all there was under lib/; the compiled component's library stays.
if(NOT "instances" IN_LIST FEATURES)
  file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/lib")
endif()

file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
