// cputrain_instances: the token-classification models of nn/prebuilt_models.hpp (fp32 and bf16_mixed,
// standard and NUMA-local memory), compiled here once for every program of the tree that links the component.
#include "cputrain/nn/prebuilt_models.hpp"

CPUTRAIN_INSTANTIATE_PREBUILT_MODELS(::cputrain::nn::token_classification_head);
