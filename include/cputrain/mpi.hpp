// cputrain/mpi.hpp — the MPI runtime (the cputrain::mpi component): environment, communicator, rank discovery, the
// per_socket and multi_node policies, the reducer over MPI.
#pragma once

#include "cputrain/mpi/gradient_reducer.hpp"  // IWYU pragma: export
#include "cputrain/mpi/communicator.hpp"      // IWYU pragma: export
#include "cputrain/mpi/discovery.hpp"         // IWYU pragma: export
#include "cputrain/mpi/environment.hpp"       // IWYU pragma: export
#include "cputrain/mpi/multi_node.hpp"        // IWYU pragma: export
#include "cputrain/mpi/per_socket.hpp"        // IWYU pragma: export
