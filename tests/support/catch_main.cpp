// The one Catch2 main shared by the test executables (compiling it once saves most of the build time).
// A wide console keeps long test names on one line when CTest lists them (catch_discover_tests): a wrapped name
// would become a filter that matches nothing.
#define CATCH_CONFIG_CONSOLE_WIDTH 400
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
