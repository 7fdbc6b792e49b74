// cputrain::dist::gradient_reducer — the bucketed, overlapped gradient reducer (distributed/gradient_reducer.hpp)
// over MPI.
#pragma once

#include "cputrain/mpi/communicator.hpp"
#include "cputrain/distributed/gradient_reducer.hpp"

namespace cputrain::dist {

// MPI can carry the reducer's bf16 wire format.
static_assert(bf16_exchanging_communicator<mpi_communicator>);

using gradient_reducer = basic_gradient_reducer<mpi_communicator>;

}  // namespace cputrain::dist
