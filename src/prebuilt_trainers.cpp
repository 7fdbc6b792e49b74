// cputrain_instances: the trainers of train/prebuilt_trainers.hpp (the four tasks in fp32 and bf16_mixed, standard
// and NUMA-local memory, one process) and their models' weight files, compiled here once for every program that
// links the component. One file for all of them, as for the models (src/prebuilt_models.cpp).
#include "cputrain/train/prebuilt_trainers.hpp"

#include "cputrain/train/classification_task.hpp"
#include "cputrain/train/masked_lm_task.hpp"
#include "cputrain/train/qa_task.hpp"
#include "cputrain/train/token_classification_task.hpp"

CPUTRAIN_INSTANTIATE_PREBUILT_TRAINERS(::cputrain::train::qa_task);
CPUTRAIN_INSTANTIATE_PREBUILT_TRAINERS(::cputrain::train::classification_task);
CPUTRAIN_INSTANTIATE_PREBUILT_TRAINERS(::cputrain::train::token_classification_task);
CPUTRAIN_INSTANTIATE_PREBUILT_TRAINERS(::cputrain::train::masked_lm_task);
