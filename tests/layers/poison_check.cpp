// Must not compile against cputrain::cputrain with the poison headers first on the include path
// (tests/layers/CMakeLists.txt): the MPI runtime needs cputrain::mpi.
#include "cputrain/mpi/environment.hpp"
