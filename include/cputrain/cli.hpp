// cputrain/cli.hpp — run_qa's command line (the cputrain::cli component, Boost.Program_options): the arguments,
// their JSON form and args.json files, validation, parsing, and what they hand the trainer.
#pragma once

#include "cputrain/cli/compat_flags.hpp"     // IWYU pragma: export
#include "cputrain/cli/args_fields.hpp"      // IWYU pragma: export
#include "cputrain/cli/args_file.hpp"        // IWYU pragma: export
#include "cputrain/cli/args_json.hpp"        // IWYU pragma: export
#include "cputrain/cli/flag_values.hpp"      // IWYU pragma: export
#include "cputrain/cli/parse_args.hpp"       // IWYU pragma: export
#include "cputrain/cli/trainer_options.hpp"  // IWYU pragma: export
#include "cputrain/cli/training_args.hpp"    // IWYU pragma: export
#include "cputrain/cli/validate_args.hpp"    // IWYU pragma: export
