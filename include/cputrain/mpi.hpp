// cputrain/mpi.hpp — the MPI runtime (the cputrain::mpi component): environment, communicator, rank discovery, the
// per_socket and multi_node policies, the reducer over MPI.
#pragma once

#include "cputrain/mpi/gradient_reducer.hpp"  // IWYU pragma: export
#include "cputrain/mpi/communicator.hpp"      // IWYU pragma: export
#include "cputrain/mpi/discovery.hpp"         // IWYU pragma: export
#include "cputrain/mpi/environment.hpp"       // IWYU pragma: export
#include "cputrain/mpi/multi_node.hpp"        // IWYU pragma: export
#include "cputrain/mpi/per_socket.hpp"        // IWYU pragma: export

// Linked with cputrain_instances_mpi (the programs' library of their MPI trainers), the four tasks' trainers over
// parallel::multi_node are compiled there, not in each program (train/prebuilt_trainers.hpp).
#if defined(CPUTRAIN_PREBUILT_MPI_TRAINERS)
#include "cputrain/train/classification_task.hpp"         // IWYU pragma: export
#include "cputrain/train/masked_lm_task.hpp"              // IWYU pragma: export
#include "cputrain/train/prebuilt_trainers.hpp"           // IWYU pragma: export
#include "cputrain/train/qa_task.hpp"                     // IWYU pragma: export
#include "cputrain/train/token_classification_task.hpp"   // IWYU pragma: export
CPUTRAIN_DETAIL_MPI_TRAINERS_OF_TASK(extern template, ::cputrain::train::qa_task, ::cputrain::parallel::multi_node);
CPUTRAIN_DETAIL_MPI_TRAINERS_OF_TASK(extern template, ::cputrain::train::classification_task,
                                     ::cputrain::parallel::multi_node);
CPUTRAIN_DETAIL_MPI_TRAINERS_OF_TASK(extern template, ::cputrain::train::token_classification_task,
                                     ::cputrain::parallel::multi_node);
CPUTRAIN_DETAIL_MPI_TRAINERS_OF_TASK(extern template, ::cputrain::train::masked_lm_task,
                                     ::cputrain::parallel::multi_node);
#endif
