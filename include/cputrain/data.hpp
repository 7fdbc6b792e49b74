// cputrain/data.hpp — SQuAD: reading (official and flat JSON) and writing, features with doc_stride, answer post-
// processing, EM/F1; the classification metrics run_glue reports; run_ner's token classification features and
// seqeval's NER metrics; run_mlm's masked-LM features and masking; the CSV and JSON files those scripts load, as
// columns typed the way Hugging Face datasets types them (dataset_table).
#pragma once

#include "cputrain/data/classification_features.hpp"  // IWYU pragma: export
#include "cputrain/data/classification_metrics.hpp"  // IWYU pragma: export
#include "cputrain/data/data_error.hpp"      // IWYU pragma: export
#include "cputrain/data/dataset_table.hpp"   // IWYU pragma: export
#include "cputrain/data/mlm_features.hpp"    // IWYU pragma: export
#include "cputrain/data/python_text.hpp"     // IWYU pragma: export
#include "cputrain/data/qa_features.hpp"     // IWYU pragma: export
#include "cputrain/data/qa_postprocess.hpp"  // IWYU pragma: export
#include "cputrain/data/seqeval.hpp"         // IWYU pragma: export
#include "cputrain/data/squad_example.hpp"   // IWYU pragma: export
#include "cputrain/data/squad_metrics.hpp"   // IWYU pragma: export
#include "cputrain/data/squad_reader.hpp"    // IWYU pragma: export
#include "cputrain/data/squad_writer.hpp"    // IWYU pragma: export
#include "cputrain/data/text_classification.hpp"  // IWYU pragma: export
#include "cputrain/data/token_classification_features.hpp"  // IWYU pragma: export
