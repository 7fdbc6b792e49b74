// Must not compile: bf16 is a storage type with no arithmetic (convert to float first).
#include "cputrain/core/bf16.hpp"

[[maybe_unused]] float sum(cputrain::bf16 a, cputrain::bf16 b) { return static_cast<float>(a + b); }
