// Must not compile, saying: "Alloc must be an allocator policy".
#include "cputrain/policy/policy.hpp"

namespace ct = cputrain;
[[maybe_unused]] ct::policy<ct::precision::fp32, ct::parallel::single, int> instance;
