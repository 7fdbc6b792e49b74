// How a program compiles cputrain's heavy entry points once instead of in every file (docs/build.md, "Compiling
// cputrain once"). Header-only by default. With CPUTRAIN_SEPARATE_COMPILATION defined for the whole program, the
// headers only declare the functions marked CPUTRAIN_DECL (reading SQuAD, making features, the metrics, loading
// configs and tokenizers), and one source file of the program defines CPUTRAIN_SOURCE_FILE before including
// cputrain.hpp to compile them; CPUTRAIN_EXTERN_TEMPLATES / CPUTRAIN_INSTANTIATE_TEMPLATES (train/
// explicit_instantiation.hpp) do the same for the model and trainer of the program's policies.
#pragma once

#if defined(CPUTRAIN_SEPARATE_COMPILATION) && !defined(CPUTRAIN_SOURCE_FILE)
#define CPUTRAIN_DEFINE_FUNCTIONS 0
#else
#define CPUTRAIN_DEFINE_FUNCTIONS 1
#endif

// Defined once (in the source file) under separate compilation, so not inline there; inline when header-only.
#if defined(CPUTRAIN_SEPARATE_COMPILATION)
#define CPUTRAIN_DECL
#else
#define CPUTRAIN_DECL inline
#endif
