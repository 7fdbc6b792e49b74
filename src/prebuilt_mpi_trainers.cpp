// cputrain_instances_mpi: the trainers of the programs run_qa, run_glue, run_ner and run_mlm (each task in fp32 and
// bf16_mixed over parallel::multi_node, NUMA-local memory; train/prebuilt_trainers.hpp), compiled here once for the
// programs that link the library instead of in each of them.
#include "cputrain/mpi.hpp"
#include "cputrain/train/prebuilt_trainers.hpp"

CPUTRAIN_DETAIL_MPI_TRAINERS_OF_TASK(template, ::cputrain::train::qa_task, ::cputrain::parallel::multi_node);
CPUTRAIN_DETAIL_MPI_TRAINERS_OF_TASK(template, ::cputrain::train::classification_task,
                                     ::cputrain::parallel::multi_node);
CPUTRAIN_DETAIL_MPI_TRAINERS_OF_TASK(template, ::cputrain::train::token_classification_task,
                                     ::cputrain::parallel::multi_node);
CPUTRAIN_DETAIL_MPI_TRAINERS_OF_TASK(template, ::cputrain::train::masked_lm_task, ::cputrain::parallel::multi_node);
