// Must not compile, saying: "the first parameter is a parallel or allocator policy".
#include "cputrain/policy/policy.hpp"

namespace ct = cputrain;
[[maybe_unused]] ct::policy<ct::parallel::single, ct::precision::fp32> instance;
