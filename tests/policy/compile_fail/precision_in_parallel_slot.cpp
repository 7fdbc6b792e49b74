// Must not compile, saying: "the second parameter is a precision or allocator policy".
#include "cputrain/policy/policy.hpp"

namespace ct = cputrain;
[[maybe_unused]] ct::policy<ct::precision::fp32, ct::precision::bf16_mixed> instance;
