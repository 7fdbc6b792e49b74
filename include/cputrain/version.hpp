// cputrain version. CMake reads these three lines for the package version, so this is its one source.
#pragma once

#define CPUTRAIN_VERSION_MAJOR 0
#define CPUTRAIN_VERSION_MINOR 1
#define CPUTRAIN_VERSION_PATCH 0

namespace cputrain {
inline constexpr int version_major = CPUTRAIN_VERSION_MAJOR;
inline constexpr int version_minor = CPUTRAIN_VERSION_MINOR;
inline constexpr int version_patch = CPUTRAIN_VERSION_PATCH;
inline constexpr const char* version_string = "0.1.0";
}  // namespace cputrain
