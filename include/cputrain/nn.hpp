// cputrain/nn.hpp — the model: the encoder (embeddings, layers) and the heads composed with it, with explicit
// forward and backward, and the description of their memory.
#pragma once

#include "cputrain/nn/attention.hpp"                      // IWYU pragma: export
#include "cputrain/nn/bert_config.hpp"                    // IWYU pragma: export
#include "cputrain/nn/bert_qa.hpp"                        // IWYU pragma: export
#include "cputrain/nn/classification_loss.hpp"            // IWYU pragma: export
#include "cputrain/nn/embeddings.hpp"                     // IWYU pragma: export
#include "cputrain/nn/encoder.hpp"                        // IWYU pragma: export
#include "cputrain/nn/encoder_batch.hpp"                  // IWYU pragma: export
#include "cputrain/nn/encoder_layer.hpp"                  // IWYU pragma: export
#include "cputrain/nn/encoder_model.hpp"                  // IWYU pragma: export
#include "cputrain/nn/init.hpp"                           // IWYU pragma: export
#include "cputrain/nn/linear.hpp"                         // IWYU pragma: export
#include "cputrain/nn/masked_lm_head.hpp"                 // IWYU pragma: export
#include "cputrain/nn/model_memory.hpp"                   // IWYU pragma: export
#include "cputrain/nn/parameters.hpp"                     // IWYU pragma: export
#include "cputrain/nn/prebuilt_models.hpp"                // IWYU pragma: export
#include "cputrain/nn/qa_batch.hpp"                       // IWYU pragma: export
#include "cputrain/nn/qa_head.hpp"                        // IWYU pragma: export
#include "cputrain/nn/qa_loss.hpp"                        // IWYU pragma: export
#include "cputrain/nn/sequence_classification_batch.hpp"  // IWYU pragma: export
#include "cputrain/nn/sequence_classification_head.hpp"   // IWYU pragma: export
#include "cputrain/nn/token_classification_batch.hpp"     // IWYU pragma: export
#include "cputrain/nn/token_classification_head.hpp"      // IWYU pragma: export
#include "cputrain/nn/workspace_layout.hpp"               // IWYU pragma: export
