// Main for the tests that need MPI (tests/mpi/CMakeLists.txt): MPI is initialised before Catch runs and finalised
// after, so the same executable runs as a singleton (a world of one, as CTest runs each test case) and under
// mpirun. Rank 0 prints Catch's report; the other ranks write theirs to a file and print it, on stderr, only when
// they failed. Every rank then learns how many ranks failed and exits non-zero if any did, so one rank's failure
// fails the whole run (and rank 0's exit status alone tells).
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "catch_runtime.hpp"
#include "cputrain/mpi/environment.hpp"

int main(int argc, char* argv[]) {
  try {
    cputrain::dist::mpi_environment mpi(argc, argv);
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    std::filesystem::path report;
    if (rank != 0) {
      report = std::filesystem::temp_directory_path() /
               ("cputrain-mpi-test-" + std::to_string(::getpid()) + "-rank" + std::to_string(rank) + ".txt");
    }
    const auto outcome = cputrain::test_support::run_catch_session(argc, argv, report.string());
    if (!outcome.ran) return outcome.status;
    if (!outcome.wrote_default_output) report.clear();
    const int failures = outcome.status;

    if (!report.empty()) {
      if (failures != 0) {
        std::ifstream in(report);
        std::ostringstream text;
        text << in.rdbuf();
        std::cerr << "---- rank " << rank << " of " << size << " failed; its report: ----\n" << text.str() << std::flush;
      }
      std::error_code ignored;
      std::filesystem::remove(report, ignored);
    }
    int my_failed = failures != 0 ? 1 : 0;
    int ranks_failed = my_failed;
    if (size > 1) MPI_Allreduce(&my_failed, &ranks_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && ranks_failed > my_failed) {
      std::cerr << ranks_failed - my_failed << " other rank(s) of " << size << " failed (their reports are above)\n";
    }
    if (failures != 0) return failures;
    return ranks_failed != 0 ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test main: %s\n", e.what());
    return 1;
  }
}
