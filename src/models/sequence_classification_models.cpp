// cputrain_instances: the sequence-classification models of nn/prebuilt_models.hpp (fp32 and bf16_mixed,
// standard and NUMA-local memory), compiled here once for every program of the tree that links the component.
#include "cputrain/nn/prebuilt_models.hpp"

CPUTRAIN_INSTANTIATE_PREBUILT_MODELS(::cputrain::nn::sequence_classification_head);
