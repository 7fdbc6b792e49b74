// cputrain/distributed.hpp — data parallelism over any communicator: the bucketed gradient reducer overlapped with
// backward, the sparse row reducer.
#pragma once

#include "cputrain/distributed/bf16_bucket_exchange.hpp"
#include "cputrain/distributed/gradient_reducer.hpp"    // IWYU pragma: export
#include "cputrain/distributed/sparse_row_reducer.hpp"  // IWYU pragma: export
