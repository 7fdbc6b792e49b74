// The encoder_model instances that cputrain's compiled component holds: each of the four heads (question
// answering, sequence and token classification, masked LM) in fp32 and bf16_mixed, on the standard and the
// NUMA-local allocator. A program that links the component gets CPUTRAIN_PREBUILT_MODELS with it; then the
// `extern template` declarations below keep every file from compiling these models again (docs/build.md,
// "Compiling cputrain once"). Without the macro (header-only) this header declares nothing, and a model of any
// other policy is compiled where it is used, as always.
#pragma once

#include "cputrain/nn/encoder_model.hpp"
#include "cputrain/nn/masked_lm_head.hpp"
#include "cputrain/nn/qa_head.hpp"
#include "cputrain/nn/sequence_classification_head.hpp"
#include "cputrain/nn/token_classification_head.hpp"
#include "cputrain/policy/policy.hpp"

// `prefix` is `extern template` or `template`: one list for the declarations and the definitions (the component's
// src/prebuilt_models.cpp says it for each head).
#define CPUTRAIN_DETAIL_MODELS_OF_HEAD(prefix, Head)                                                            \
  prefix class ::cputrain::nn::encoder_model<Head, ::cputrain::precision::fp32, ::cputrain::alloc::standard>;     \
  prefix class ::cputrain::nn::encoder_model<Head, ::cputrain::precision::bf16_mixed, ::cputrain::alloc::standard>; \
  prefix class ::cputrain::nn::encoder_model<Head, ::cputrain::precision::fp32, ::cputrain::alloc::numa_local>;   \
  prefix class ::cputrain::nn::encoder_model<Head, ::cputrain::precision::bf16_mixed, ::cputrain::alloc::numa_local>

/// In the component's source file, at global scope: compiles `Head`'s four models.
#define CPUTRAIN_INSTANTIATE_PREBUILT_MODELS(Head) CPUTRAIN_DETAIL_MODELS_OF_HEAD(template, Head)

#if defined(CPUTRAIN_PREBUILT_MODELS)
CPUTRAIN_DETAIL_MODELS_OF_HEAD(extern template, ::cputrain::nn::qa_head);
CPUTRAIN_DETAIL_MODELS_OF_HEAD(extern template, ::cputrain::nn::sequence_classification_head);
CPUTRAIN_DETAIL_MODELS_OF_HEAD(extern template, ::cputrain::nn::token_classification_head);
CPUTRAIN_DETAIL_MODELS_OF_HEAD(extern template, ::cputrain::nn::masked_lm_head);
#endif
