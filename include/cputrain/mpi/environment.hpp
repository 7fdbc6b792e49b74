// cputrain::dist::mpi_environment — MPI's lifetime as an object in main(): it initialises MPI asking for
// MPI_THREAD_MULTIPLE (the gradient reducer calls MPI from its own communication thread, which needs at least
// MPI_THREAD_SERIALIZED) and finalises it when it goes, unless MPI was already running when it came. A program
// started without mpirun is a world of one process (an MPI "singleton"), so the same binary trains alone or as
// one rank of many (Open MPI's isolated singleton: no daemon). Also mpi_thread_level_name() for messages.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "cputrain/core/error.hpp"

namespace cputrain::dist {

/// "MPI_THREAD_SERIALIZED" for MPI_THREAD_SERIALIZED, and so on; the number for a level MPI does not define.
[[nodiscard]] inline std::string mpi_thread_level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
  return "thread level " + std::to_string(level);
}

/// Initialises MPI for the lifetime of the object (one per process, constructed first thing in main()).
class mpi_environment {
 public:
  /// Initialises MPI (MPI_Init_thread, asking for MPI_THREAD_MULTIPLE) unless it is already initialised, in which
  /// case it only checks the level. Throws cputrain::error when MPI provides less than MPI_THREAD_SERIALIZED, when
  /// initialisation fails, or when MPI was already finalised (MPI cannot start twice in one process).
  mpi_environment(int& argc, char**& argv) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0) {
      throw error("cputrain::dist::mpi_environment: MPI was already finalised in this process, and MPI cannot be "
                  "initialised twice; keep one mpi_environment alive for the whole program");
    }
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized != 0) {
      MPI_Query_thread(&provided_);
    } else {
      // Alone (no mpirun), Open MPI would fork its orted daemon for the world of one, 0.2 s and a process more at
      // every start; isolated, it does not. Under a launcher the setting is not read; MPICH ignores it; a value in
      // the environment (=0) wins.
      ::setenv("OMPI_MCA_ess_singleton_isolated", "1", /*overwrite=*/0);
      const int rc = MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided_);
      if (rc != MPI_SUCCESS) {
        throw error("cputrain::dist::mpi_environment: MPI_Init_thread failed (error code " + std::to_string(rc) +
                    "); under mpirun, check the launcher's own messages above");
      }
      initialized_here_ = true;
    }
    if (provided_ < MPI_THREAD_SERIALIZED) {
      const std::string got = mpi_thread_level_name(provided_);
      // Nothing will use an MPI we cannot use; finalising keeps the process from leaving it half-initialised.
      if (initialized_here_) MPI_Finalize();
      throw error("cputrain::dist::mpi_environment: MPI provides only " + got +
                  ", but gradient reduction runs on a communication thread and needs at least "
                  "MPI_THREAD_SERIALIZED (MPI_THREAD_MULTIPLE was asked for); use an MPI library built with "
                  "thread support (Open MPI 4, MPICH and Intel MPI all have it)");
    }
  }

  mpi_environment(const mpi_environment&) = delete;
  mpi_environment& operator=(const mpi_environment&) = delete;
  mpi_environment(mpi_environment&&) = delete;
  mpi_environment& operator=(mpi_environment&&) = delete;

  /// Finalises MPI if this object initialised it. When an exception is unwinding through it in a job of several
  /// processes it aborts the job instead (MPI_Abort, exit code 1): the other ranks may be waiting in a collective
  /// this rank will never join, and MPI_Finalize would leave the whole job hanging.
  ~mpi_environment() {
    if (!initialized_here_) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0) return;
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (std::uncaught_exceptions() > 0 && size > 1) {
      std::fputs("cputrain::dist::mpi_environment: an exception is leaving main() on this rank; aborting the MPI "
                 "job so that the other ranks do not wait for it forever\n",
                 stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
  }

  /// The thread level MPI provides (MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE, as the constructor checked).
  [[nodiscard]] int provided_level() const noexcept { return provided_; }

  /// Whether this object initialised MPI (and so finalises it), rather than finding it running.
  [[nodiscard]] bool initialized_here() const noexcept { return initialized_here_; }

  /// Ends every process of the job with `exit_code`: what a rank that cannot go on must do, since returning from
  /// main() alone would leave the others blocked in their next collective.
  [[noreturn]] static void abort(int exit_code) noexcept {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized != 0 && finalized == 0) MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // without a running MPI there is no job to end, only this process
  }

 private:
  int provided_ = MPI_THREAD_SINGLE;
  bool initialized_here_ = false;
};

}  // namespace cputrain::dist
