// cputrain/io.hpp — files: safetensors (with per-tensor checksums), config.json, model weights by Hugging Face
// names, atomic writes.
#pragma once

#include "cputrain/io/atomic_file.hpp"       // IWYU pragma: export
#include "cputrain/io/bert_config_json.hpp"  // IWYU pragma: export
#include "cputrain/io/io_error.hpp"          // IWYU pragma: export
#include "cputrain/io/model_weights.hpp"     // IWYU pragma: export
#include "cputrain/io/read_file.hpp"         // IWYU pragma: export
#include "cputrain/io/safetensors.hpp"       // IWYU pragma: export
#include "cputrain/io/tensor_checksum.hpp"   // IWYU pragma: export
