// The trainers that cputrain's compiled component holds: trainer<Task, policy<P, parallel::single, A>> of each of
// the four tasks (question answering, sequence and token classification, masked LM) in fp32 and bf16_mixed, on the
// standard and the NUMA-local allocator, with the weight files of their models (load_weights, save_weights,
// save_pretrained). A program that links the component gets CPUTRAIN_PREBUILT_MODELS, and each task's header then
// declares its trainers `extern template` (docs/build.md, "Compiling cputrain once"). Header-only, nothing changes.
#pragma once

#include "cputrain/io/model_weights.hpp"

#include <filesystem>

#include "cputrain/nn/encoder_model.hpp"
#include "cputrain/policy/policy.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/train/model_files.hpp"
#include "cputrain/train/trainer.hpp"

// `prefix` is `extern template` or `template`. The model of `Task` under precision P and allocator A: its weight
// files, which any parallel policy's program uses.
#define CPUTRAIN_DETAIL_MODEL_FILES_OF(prefix, Task, P, A)                                                       \
  prefix auto ::cputrain::io::load_weights<::cputrain::nn::encoder_model<Task::head_type, P, A>>(               \
      ::cputrain::nn::encoder_model<Task::head_type, P, A>&, const ::std::filesystem::path&,                     \
      ::cputrain::io::weight_loading, const ::cputrain::io::pretrained_options&)                                 \
      ->::cputrain::io::weight_load_report;                                                                      \
  prefix void ::cputrain::io::save_weights<::cputrain::nn::encoder_model<Task::head_type, P, A>>(               \
      const ::cputrain::nn::encoder_model<Task::head_type, P, A>&, const ::std::filesystem::path&);             \
  prefix void ::cputrain::train::save_pretrained<::cputrain::nn::encoder_model<Task::head_type, P, A>>(         \
      const ::std::filesystem::path&, const ::cputrain::nn::encoder_model<Task::head_type, P, A>&,               \
      const ::cputrain::text::tokenizer&)

#define CPUTRAIN_DETAIL_TRAINER_OF(prefix, Task, P, A)                                   \
  prefix class ::cputrain::train::trainer<Task, ::cputrain::policy<P, ::cputrain::parallel::single, A>>; \
  CPUTRAIN_DETAIL_MODEL_FILES_OF(prefix, Task, P, A)

// The four trainers of one task (the component's src/prebuilt_trainers.cpp says it for each task).
#define CPUTRAIN_DETAIL_TRAINERS_OF_TASK(prefix, Task)                                                        \
  CPUTRAIN_DETAIL_TRAINER_OF(prefix, Task, ::cputrain::precision::fp32, ::cputrain::alloc::standard);         \
  CPUTRAIN_DETAIL_TRAINER_OF(prefix, Task, ::cputrain::precision::bf16_mixed, ::cputrain::alloc::standard);   \
  CPUTRAIN_DETAIL_TRAINER_OF(prefix, Task, ::cputrain::precision::fp32, ::cputrain::alloc::numa_local);       \
  CPUTRAIN_DETAIL_TRAINER_OF(prefix, Task, ::cputrain::precision::bf16_mixed, ::cputrain::alloc::numa_local)

/// In the component's source file, at global scope: compiles `Task`'s four trainers.
#define CPUTRAIN_INSTANTIATE_PREBUILT_TRAINERS(Task) CPUTRAIN_DETAIL_TRAINERS_OF_TASK(template, Task)

// The trainers of the programs run_qa, run_glue, run_ner and run_mlm: `Task` in fp32 and bf16_mixed over the MPI
// policy `Parallel` (parallel::multi_node), NUMA-local. Their models' files are among the ones above.
// `cputrain/mpi.hpp` declares them for the programs; cputrain_instances_mpi (src/prebuilt_mpi_trainers.cpp)
// compiles them.
#define CPUTRAIN_DETAIL_MPI_TRAINERS_OF_TASK(prefix, Task, Parallel)                                                 \
  prefix class ::cputrain::train::trainer<                                                                       \
      Task, ::cputrain::policy<::cputrain::precision::fp32, Parallel, ::cputrain::alloc::numa_local>>;           \
  prefix class ::cputrain::train::trainer<                                                                       \
      Task, ::cputrain::policy<::cputrain::precision::bf16_mixed, Parallel, ::cputrain::alloc::numa_local>>
