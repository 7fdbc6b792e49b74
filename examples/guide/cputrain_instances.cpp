// Where the guide example compiles cputrain's heavy parts when built with CPUTRAIN_SEPARATE_COMPILATION: the
// functions the headers then only declare, and the model and trainer of its policy. Changes only when cputrain or
// the policy does, so a build tool compiles it once.
#define CPUTRAIN_SOURCE_FILE  // before any cputrain header
#include "guide_policy.hpp"

CPUTRAIN_INSTANTIATE_TEMPLATES(guide::policy);
