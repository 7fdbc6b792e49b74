// cputrain — one include for the whole library.
//
// A header-only C++20 library for training BERT-style transformers on CPUs: compile-time policies choose the
// precision (precision::fp32, precision::bf16_mixed), the parallelism (parallel::single, ...) and the allocator
// (alloc::standard, alloc::tbb_scalable, alloc::numa_local); the run time finds the machine's NUMA nodes and
// runs one oneTBB arena per node with the threads the Hugging Face CPU guide would choose.
#pragma once

#include "cputrain/version.hpp"  // IWYU pragma: export

#include "cputrain/core/bf16.hpp"          // IWYU pragma: export
#include "cputrain/core/bf16_convert.hpp"  // IWYU pragma: export
#include "cputrain/core/cpu_features.hpp"  // IWYU pragma: export
#include "cputrain/core/error.hpp"         // IWYU pragma: export

#include "cputrain/dist/arenas.hpp"          // IWYU pragma: export
#include "cputrain/dist/current_node.hpp"    // IWYU pragma: export
#include "cputrain/dist/gradient_reducer.hpp"  // IWYU pragma: export
#include "cputrain/dist/mpi_communicator.hpp"  // IWYU pragma: export
#include "cputrain/dist/mpi_discovery.hpp"   // IWYU pragma: export
#include "cputrain/dist/mpi_environment.hpp"  // IWYU pragma: export
#include "cputrain/dist/process_layout.hpp"  // IWYU pragma: export
#include "cputrain/dist/rank_placement.hpp"  // IWYU pragma: export
#include "cputrain/dist/sparse_row_reducer.hpp"  // IWYU pragma: export
#include "cputrain/dist/thread_plan.hpp"     // IWYU pragma: export
#include "cputrain/dist/topology.hpp"        // IWYU pragma: export

#include "cputrain/kernels/bias.hpp"        // IWYU pragma: export
#include "cputrain/kernels/dropout.hpp"     // IWYU pragma: export
#include "cputrain/kernels/gelu.hpp"        // IWYU pragma: export
#include "cputrain/kernels/gemm.hpp"        // IWYU pragma: export
#include "cputrain/kernels/layer_norm.hpp"  // IWYU pragma: export
#include "cputrain/kernels/row_blocks.hpp"  // IWYU pragma: export
#include "cputrain/kernels/softmax.hpp"     // IWYU pragma: export

#include "cputrain/io/atomic_file.hpp"       // IWYU pragma: export
#include "cputrain/io/bert_config_json.hpp"  // IWYU pragma: export
#include "cputrain/io/io_error.hpp"          // IWYU pragma: export
#include "cputrain/io/model_weights.hpp"     // IWYU pragma: export
#include "cputrain/io/read_file.hpp"         // IWYU pragma: export
#include "cputrain/io/safetensors.hpp"       // IWYU pragma: export

#include "cputrain/data/data_error.hpp"      // IWYU pragma: export
#include "cputrain/data/demo_squad.hpp"      // IWYU pragma: export
#include "cputrain/data/python_text.hpp"     // IWYU pragma: export
#include "cputrain/data/qa_features.hpp"     // IWYU pragma: export
#include "cputrain/data/qa_postprocess.hpp"  // IWYU pragma: export
#include "cputrain/data/squad_example.hpp"   // IWYU pragma: export
#include "cputrain/data/squad_metrics.hpp"   // IWYU pragma: export
#include "cputrain/data/squad_reader.hpp"    // IWYU pragma: export

#include "cputrain/nn/attention.hpp"      // IWYU pragma: export
#include "cputrain/nn/bert_config.hpp"    // IWYU pragma: export
#include "cputrain/nn/bert_qa.hpp"        // IWYU pragma: export
#include "cputrain/nn/embeddings.hpp"     // IWYU pragma: export
#include "cputrain/nn/encoder_layer.hpp"  // IWYU pragma: export
#include "cputrain/nn/init.hpp"           // IWYU pragma: export
#include "cputrain/nn/linear.hpp"         // IWYU pragma: export
#include "cputrain/nn/parameters.hpp"     // IWYU pragma: export
#include "cputrain/nn/qa_batch.hpp"       // IWYU pragma: export
#include "cputrain/nn/qa_loss.hpp"        // IWYU pragma: export

#include "cputrain/optim/adamw.hpp"         // IWYU pragma: export
#include "cputrain/optim/grad_clip.hpp"     // IWYU pragma: export
#include "cputrain/optim/lr_schedule.hpp"   // IWYU pragma: export
#include "cputrain/optim/param_ranges.hpp"  // IWYU pragma: export

#include "cputrain/policy/allocator.hpp"  // IWYU pragma: export
#include "cputrain/policy/parallel.hpp"   // IWYU pragma: export
#include "cputrain/policy/policy.hpp"     // IWYU pragma: export
#include "cputrain/policy/precision.hpp"  // IWYU pragma: export

#include "cputrain/text/bert_tokenizer.hpp"       // IWYU pragma: export
#include "cputrain/text/char_classes.hpp"         // IWYU pragma: export
#include "cputrain/text/load_bert_tokenizer.hpp"  // IWYU pragma: export
#include "cputrain/text/text_error.hpp"           // IWYU pragma: export
#include "cputrain/text/utf8.hpp"                 // IWYU pragma: export
#include "cputrain/text/vocabulary.hpp"           // IWYU pragma: export

#include "cputrain/train/checkpoint.hpp"    // IWYU pragma: export
#include "cputrain/train/metrics_files.hpp" // IWYU pragma: export
#include "cputrain/train/model_files.hpp"   // IWYU pragma: export
#include "cputrain/train/output_dir.hpp"    // IWYU pragma: export
#include "cputrain/train/progress.hpp"      // IWYU pragma: export
#include "cputrain/train/qa_trainer.hpp"    // IWYU pragma: export
#include "cputrain/train/sampler.hpp"       // IWYU pragma: export
#include "cputrain/train/termination.hpp"   // IWYU pragma: export
#include "cputrain/train/trainer_state.hpp" // IWYU pragma: export
#include "cputrain/train/training_args.hpp" // IWYU pragma: export
