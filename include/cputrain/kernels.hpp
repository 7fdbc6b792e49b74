// cputrain/kernels.hpp — the compute kernels on row-major buffers: GEMM (Eigen or oneDNN, chosen at run time),
// softmax, LayerNorm, GELU, bias, dropout and their fused passes.
#pragma once

#include "cputrain/kernels/bias.hpp"           // IWYU pragma: export
#include "cputrain/kernels/dropout.hpp"        // IWYU pragma: export
#include "cputrain/kernels/fused.hpp"          // IWYU pragma: export
#include "cputrain/kernels/gelu.hpp"           // IWYU pragma: export
#include "cputrain/kernels/gemm.hpp"           // IWYU pragma: export
#include "cputrain/kernels/gemm_backend.hpp"   // IWYU pragma: export
#include "cputrain/kernels/layer_norm.hpp"     // IWYU pragma: export
#include "cputrain/kernels/onednn_matmul.hpp"  // IWYU pragma: export
#include "cputrain/kernels/row_blocks.hpp"     // IWYU pragma: export
#include "cputrain/kernels/softmax.hpp"        // IWYU pragma: export
