// CPUTRAIN_EXTERN_TEMPLATES(Policy) and CPUTRAIN_INSTANTIATE_TEMPLATES(Policy): the model and trainer of one policy
// compiled in one source file of a program instead of in each file that trains (core/separate_compilation.hpp,
// docs/build.md). The first, in a header every such file includes, tells the compiler an instance exists
// elsewhere; the second, in the one file, compiles it. Their members that do the work are defined outside the
// class, so an `extern template` really keeps their code out (members defined in the class are inline, and
// GCC and Clang instantiate those anyway, to inline them).
#pragma once

#include "cputrain/train/qa_trainer.hpp"

#include <filesystem>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/model_weights.hpp"
#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/train/model_files.hpp"

// `prefix` is `extern template` or `template`: one list for the declarations and the definitions.
#define CPUTRAIN_DETAIL_QA_TEMPLATES(prefix, Policy)                                                               \
  prefix class ::cputrain::nn::encoder_model<::cputrain::nn::qa_head, Policy::precision_policy,                     \
                                            Policy::allocator_policy>;                                             \
  prefix class ::cputrain::train::trainer<::cputrain::train::qa_task, Policy>;                                     \
  prefix auto ::cputrain::io::load_weights<::cputrain::nn::bert_qa<Policy>>(                                       \
      ::cputrain::nn::bert_qa<Policy>&, const ::std::filesystem::path&, ::cputrain::io::weight_loading,           \
      const ::cputrain::io::pretrained_options&)                                                                  \
      ->::cputrain::io::weight_load_report;                                                                        \
  prefix void ::cputrain::io::save_weights<::cputrain::nn::bert_qa<Policy>>(const ::cputrain::nn::bert_qa<Policy>&, \
                                                                            const ::std::filesystem::path&);        \
  prefix void ::cputrain::train::save_pretrained<::cputrain::nn::bert_qa<Policy>>(                                \
      const ::std::filesystem::path&, const ::cputrain::nn::bert_qa<Policy>&, const ::cputrain::text::tokenizer&)

#if defined(CPUTRAIN_SEPARATE_COMPILATION)
/// In a header of the program, after the policy's alias, at global scope: the instances are in one source file.
#define CPUTRAIN_EXTERN_TEMPLATES(Policy) CPUTRAIN_DETAIL_QA_TEMPLATES(extern template, Policy)
/// In that one source file, at global scope (after CPUTRAIN_EXTERN_TEMPLATES of the same policy, or without it).
#define CPUTRAIN_INSTANTIATE_TEMPLATES(Policy) CPUTRAIN_DETAIL_QA_TEMPLATES(template, Policy)
#else
// Header-only: every file compiles what it uses, so the same sources build either way.
#define CPUTRAIN_EXTERN_TEMPLATES(Policy) static_assert(true)
#define CPUTRAIN_INSTANTIATE_TEMPLATES(Policy) static_assert(true)
#endif
