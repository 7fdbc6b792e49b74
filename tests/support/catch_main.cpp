// The one Catch2 main shared by the test executables (compiling it once saves most of the build time).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
