// cputrain_instances: the models of nn/prebuilt_models.hpp (the four heads in fp32 and bf16_mixed, standard and
// NUMA-local memory), compiled here once for every program that links the component. One file for all of them:
// each head adds little to what they share, so four files cost three times as much (docs/build.md).
#include "cputrain/nn/prebuilt_models.hpp"

CPUTRAIN_INSTANTIATE_PREBUILT_MODELS(::cputrain::nn::qa_head);
CPUTRAIN_INSTANTIATE_PREBUILT_MODELS(::cputrain::nn::sequence_classification_head);
CPUTRAIN_INSTANTIATE_PREBUILT_MODELS(::cputrain::nn::token_classification_head);
CPUTRAIN_INSTANTIATE_PREBUILT_MODELS(::cputrain::nn::masked_lm_head);
