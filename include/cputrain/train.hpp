// cputrain/train.hpp — the training loop: the question-answering trainer and its options, checkpoints, trainer
// state, output directories, progress. The command line that fills the options is cputrain/cli.hpp.
#pragma once

#include "cputrain/train/best_model.hpp"              // IWYU pragma: export
#include "cputrain/train/checkpoint.hpp"              // IWYU pragma: export
#include "cputrain/train/classification_task.hpp"     // IWYU pragma: export
#include "cputrain/train/checkpoint_dirs.hpp"         // IWYU pragma: export
#include "cputrain/train/checkpoint_integrity.hpp"    // IWYU pragma: export
#include "cputrain/train/explicit_instantiation.hpp"  // IWYU pragma: export
#include "cputrain/train/masked_lm_task.hpp"           // IWYU pragma: export
#include "cputrain/train/metrics_files.hpp"           // IWYU pragma: export
#include "cputrain/train/model_files.hpp"             // IWYU pragma: export
#include "cputrain/train/option_checks.hpp"           // IWYU pragma: export
#include "cputrain/train/output_dir.hpp"              // IWYU pragma: export
#include "cputrain/train/prebuilt_trainers.hpp"       // IWYU pragma: export
#include "cputrain/train/progress.hpp"                // IWYU pragma: export
#include "cputrain/train/qa_task.hpp"                 // IWYU pragma: export
#include "cputrain/train/qa_trainer.hpp"              // IWYU pragma: export
#include "cputrain/train/sampler.hpp"                 // IWYU pragma: export
#include "cputrain/train/termination.hpp"             // IWYU pragma: export
#include "cputrain/train/token_classification_task.hpp"  // IWYU pragma: export
#include "cputrain/train/trainer.hpp"                 // IWYU pragma: export
#include "cputrain/train/trainer_state.hpp"           // IWYU pragma: export
#include "cputrain/train/training_memory.hpp"         // IWYU pragma: export
#include "cputrain/train/training_options.hpp"        // IWYU pragma: export
