// The cputrain_instances library: the functions cputrain's headers mark CPUTRAIN_DECL (reading the datasets,
// making features, the metrics, loading configs and tokenizers, saving a tokenizer), compiled once per build for
// the project's programs instead of in each of them (core/separate_compilation.hpp, docs/build.md "Compiling
// cputrain once"). A target that links the library gets CPUTRAIN_SEPARATE_COMPILATION with it, so its own files
// only declare these functions. It includes only the headers that define them: no MPI header reaches this file,
// so the MPICH build of run_qa links the same object as the Open MPI one.
#define CPUTRAIN_SOURCE_FILE  // before any cputrain header

#include "cputrain/data/dataset_table.hpp"
#include "cputrain/data/mlm_features.hpp"
#include "cputrain/data/qa_features.hpp"
#include "cputrain/data/qa_postprocess.hpp"
#include "cputrain/data/squad_metrics.hpp"
#include "cputrain/data/squad_reader.hpp"
#include "cputrain/data/token_classification_features.hpp"
#include "cputrain/io/bert_config_json.hpp"
#include "cputrain/text/load_bert_tokenizer.hpp"
#include "cputrain/text/load_tokenizer.hpp"
#include "cputrain/train/model_files.hpp"
