// cputrain/core.hpp — the scalar types and helpers every layer uses: bf16 and its bulk conversions, errors, CPU
// features, JSON nesting limits, hostile JSON shown in messages.
#pragma once

#include "cputrain/core/bf16.hpp"                  // IWYU pragma: export
#include "cputrain/core/bf16_convert.hpp"          // IWYU pragma: export
#include "cputrain/core/cpu_features.hpp"          // IWYU pragma: export
#include "cputrain/core/error.hpp"                 // IWYU pragma: export
#include "cputrain/core/json_message.hpp"          // IWYU pragma: export
#include "cputrain/core/json_nesting.hpp"          // IWYU pragma: export
#include "cputrain/core/separate_compilation.hpp"  // IWYU pragma: export
#include "cputrain/core/splitmix64.hpp"            // IWYU pragma: export
