// The cputrain_instances library: the functions cputrain's headers mark CPUTRAIN_DECL (reading the datasets,
// making features, the metrics, loading configs and tokenizers, tokenizing, safetensors, checkpoints and the
// trainer's state files, the thread plan, the command line), compiled once per build for the project's programs,
// test programs and benchmarks instead of in each of them (core/separate_compilation.hpp, docs/build.md "Compiling
// cputrain once"). A target that links the library gets CPUTRAIN_SEPARATE_COMPILATION with it, so its own files
// only declare these functions. No MPI header reaches this file (cputrain.hpp and cli.hpp leave MPI to mpi.hpp),
// so the MPICH build of run_qa links the same object as the Open MPI one.
#define CPUTRAIN_SOURCE_FILE  // before any cputrain header

#include "cputrain/cli.hpp"
#include "cputrain/cputrain.hpp"
