// cputrain::train::qa_trainer<Policy> — the trainer (trainer.hpp) of a question-answering model: train() on
// data::qa_features with answer positions, predict() the start and end logits data::postprocess_qa_predictions
// reads.
#pragma once

#include "cputrain/train/qa_task.hpp"
#include "cputrain/train/trainer.hpp"

namespace cputrain::train {

template <class Policy>
using qa_trainer = trainer<qa_task, Policy>;

}  // namespace cputrain::train
