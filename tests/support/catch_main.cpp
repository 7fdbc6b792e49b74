// The main of the test programs that need nothing before Catch runs (Catch itself: catch_runtime.cpp).
#include "catch_runtime.hpp"

int main(int argc, char* argv[]) { return cputrain::test_support::run_catch_session(argc, argv).status; }
