// cputrain — one include for the library's core (the cputrain::cputrain target): the machine, the policies, the
// kernels, the model, the optimizer, files, the tokenizer, SQuAD and the trainer. Needs Eigen, oneTBB,
// nlohmann_json and utf8proc (oneDNN where built with it); no MPI, Boost or hwloc. The MPI runtime and the
// per_socket / multi_node policies are in cputrain/mpi.hpp (cputrain::mpi), the command line in cputrain/cli.hpp
// (cputrain::cli). Each folder has its own include (cputrain/nn.hpp, ...); docs/overview.md draws the layers.
#pragma once

#include "cputrain/version.hpp"  // IWYU pragma: export

#include "cputrain/core.hpp"         // IWYU pragma: export
#include "cputrain/machine.hpp"      // IWYU pragma: export
#include "cputrain/policy.hpp"       // IWYU pragma: export
#include "cputrain/kernels.hpp"      // IWYU pragma: export
#include "cputrain/optim.hpp"        // IWYU pragma: export
#include "cputrain/nn.hpp"           // IWYU pragma: export
#include "cputrain/io.hpp"           // IWYU pragma: export
#include "cputrain/text.hpp"         // IWYU pragma: export
#include "cputrain/data.hpp"         // IWYU pragma: export
#include "cputrain/distributed.hpp"  // IWYU pragma: export
#include "cputrain/train.hpp"        // IWYU pragma: export
