// cputrain/train.hpp — the training loop: the question-answering trainer, checkpoints, trainer state, output
// directories, progress.
#pragma once

#include "cputrain/train/checkpoint.hpp"     // IWYU pragma: export
#include "cputrain/train/metrics_files.hpp"  // IWYU pragma: export
#include "cputrain/train/model_files.hpp"    // IWYU pragma: export
#include "cputrain/train/output_dir.hpp"     // IWYU pragma: export
#include "cputrain/train/progress.hpp"       // IWYU pragma: export
#include "cputrain/train/qa_trainer.hpp"     // IWYU pragma: export
#include "cputrain/train/sampler.hpp"        // IWYU pragma: export
#include "cputrain/train/termination.hpp"    // IWYU pragma: export
#include "cputrain/train/trainer_state.hpp"  // IWYU pragma: export
#include "cputrain/train/training_args.hpp"  // IWYU pragma: export
