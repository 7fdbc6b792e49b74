// cputrain/nn.hpp — the model: BERT embeddings, encoder layers and the question-answering head with explicit forward
// and backward.
#pragma once

#include "cputrain/nn/attention.hpp"      // IWYU pragma: export
#include "cputrain/nn/bert_config.hpp"    // IWYU pragma: export
#include "cputrain/nn/bert_qa.hpp"        // IWYU pragma: export
#include "cputrain/nn/embeddings.hpp"     // IWYU pragma: export
#include "cputrain/nn/encoder_layer.hpp"  // IWYU pragma: export
#include "cputrain/nn/init.hpp"           // IWYU pragma: export
#include "cputrain/nn/linear.hpp"         // IWYU pragma: export
#include "cputrain/nn/model_memory.hpp"   // IWYU pragma: export
#include "cputrain/nn/parameters.hpp"     // IWYU pragma: export
#include "cputrain/nn/qa_batch.hpp"       // IWYU pragma: export
#include "cputrain/nn/qa_loss.hpp"        // IWYU pragma: export
