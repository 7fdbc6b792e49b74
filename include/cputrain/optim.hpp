// cputrain/optim.hpp — the optimizer over flat buffers: AdamW, learning-rate schedules, gradient clipping, parameter
// ranges.
#pragma once

#include "cputrain/optim/adamw.hpp"         // IWYU pragma: export
#include "cputrain/optim/grad_clip.hpp"     // IWYU pragma: export
#include "cputrain/optim/lr_schedule.hpp"   // IWYU pragma: export
#include "cputrain/optim/param_ranges.hpp"  // IWYU pragma: export
