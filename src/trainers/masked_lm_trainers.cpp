// cputrain_instances: the masked-LM trainers of train/prebuilt_trainers.hpp (fp32 and bf16_mixed, standard and
// NUMA-local memory, one process) and their models' weight files, compiled here once for every program that links
// the component.
#include "cputrain/train/prebuilt_trainers.hpp"
#include "cputrain/train/masked_lm_task.hpp"

CPUTRAIN_INSTANTIATE_PREBUILT_TRAINERS(::cputrain::train::masked_lm_task);
