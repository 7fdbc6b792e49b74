// Tests for include/cputrain/optim/adamw.hpp: torch.optim.AdamW's numbers bit for bit (reference from
// scripts/make_optim_reference.py), results independent of the thread count, checkpoint state that resumes
// bit-identically, and the errors a caller can provoke.
#include <catch2/catch.hpp>

#include "support/checks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ios>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "cputrain/optim/adamw.hpp"
#include "cputrain/optim/lr_schedule.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace adamw_test {

using cputrain::usage_error;
using cputrain::optim::adamw;
using cputrain::optim::adamw_options;
using cputrain::optim::lr_schedule;
using cputrain::optim::param_range;
using cputrain::optim::schedule_kind;

using cputrain::test::says;

namespace {

// ---- the inputs of scripts/make_optim_reference.py, same formulas ----
constexpr std::size_t n_ref = 37;
const std::vector<param_range> ref_ranges = {{0, 20, true}, {20, 5, false}, {25, 12, true}};

float initial_param(std::size_t i) { return static_cast<float>(static_cast<int>((i * 7) % 19) - 9) / 16.0f; }

float grad(int step, std::size_t i) {
  const int k = static_cast<int>((i * 13 + static_cast<std::size_t>(step) * 7) % 29) - 14;
  return std::ldexp(static_cast<float>(k), -(6 + static_cast<int>((i + static_cast<std::size_t>(step)) % 5)));
}

adamw_options ref_options() {
  adamw_options o;
  o.lr = 2e-3;
  o.weight_decay = 0.01;
  return o;  // betas, eps: the defaults, which the script passes explicitly
}

lr_schedule ref_schedule() { return lr_schedule{schedule_kind::linear, 2e-3, 2, 5}; }

// ---- output of /usr/bin/python3 scripts/make_optim_reference.py (torch 1.13), pasted ----
// torch 1.13.0a0, AdamW {'base_lr': 0.002, 'weight_decay': 0.01, 'betas': (0.9, 0.999), 'eps': 1e-08, 'warmup': 2,
// 'total': 5, 'steps': 5}, params and grads from initial_param()/grad()
// param_groups[0]["lr"] of each step
constexpr std::array<double, 5> torch_lrs = {
    0x0p+0, 0x1.0624dd2f1a9fcp-10, 0x1.0624dd2f1a9fcp-9, 0x1.5d867c3ece2a5p-10, 0x1.5d867c3ece2a5p-11,
};
// fused: CPU capability usage: AVX2
constexpr std::array<std::array<float, 37>, 5> torch_params_fused = {{
    {  // after step 1
        -0x1.2p-1f, -0x1p-3f, 0x1.4p-2f, -0x1.cp-2f,
        0x0p+0f, 0x1.cp-2f, -0x1.4p-2f, 0x1p-3f,
        0x1.2p-1f, -0x1.8p-3f, 0x1p-2f, -0x1p-1f,
        -0x1p-4f, 0x1.8p-2f, -0x1.8p-2f, 0x1p-4f,
        0x1p-1f, -0x1p-2f, 0x1.8p-3f, -0x1.2p-1f,
        -0x1p-3f, 0x1.4p-2f, -0x1.cp-2f, 0x0p+0f,
        0x1.cp-2f, -0x1.4p-2f, 0x1p-3f, 0x1.2p-1f,
        -0x1.8p-3f, 0x1p-2f, -0x1p-1f, -0x1p-4f,
        0x1.8p-2f, -0x1.8p-2f, 0x1p-4f, 0x1p-1f,
        -0x1p-2f,
    },
    {  // after step 2
        -0x1.1fa77p-1f, -0x1.020c4ep-3f, 0x1.40c9d6p-2f, -0x1.c0c52ep-2f,
        0x1.ae1132p-11f, 0x1.bf3bc8p-2f, -0x1.406552p-2f, 0x1.004b1ep-3f,
        0x1.205c1ap-1f, -0x1.7ec158p-3f, 0x1.fdf266p-3f, -0x1.ff3a9p-2f,
        -0x1.04139ep-4f, 0x1.80d9fap-2f, -0x1.80e6dap-2f, 0x1.fc6482p-5f,
        0x1.ffd408p-2f, -0x1.00452ap-2f, 0x1.7eb3cp-3f, -0x1.20011ap-1f,
        -0x1.fd121p-4f, 0x1.3ef9b2p-2f, -0x1.bf3046p-2f, -0x1.8afb1p-11f,
        0x1.c0d9bcp-2f, -0x1.4080bap-2f, 0x1.fea26ap-4f, 0x1.202f3cp-1f,
        -0x1.7e886ap-3f, 0x1.00aefep-2f, -0x1.008296p-1f, -0x1.f9a96ep-5f,
        0x1.7efd62p-2f, -0x1.7f2626p-2f, 0x1.f9e61ep-5f, 0x1.ff988cp-2f,
        -0x1.ffb2eap-3f,
    },
    {  // after step 3
        -0x1.1f4ae6p-1f, -0x1.047844p-3f, 0x1.3fe71ep-2f, -0x1.c11d6ap-2f,
        0x1.0e9108p-9f, 0x1.bd776ap-2f, -0x1.40f55p-2f, 0x1.fb62ap-4f,
        0x1.210944p-1f, -0x1.7dc0b4p-3f, 0x1.fb5a0cp-3f, -0x1.fe396cp-2f,
        -0x1.feadc4p-5f, 0x1.81e30ep-2f, -0x1.811d3ep-2f, 0x1.f6fe76p-5f,
        0x1.febc34p-2f, -0x1.fe63c2p-3f, 0x1.7b7cd8p-3f, -0x1.1fe734p-1f,
        -0x1.f99524p-4f, 0x1.3dddaap-2f, -0x1.bfd86cp-2f, -0x1.f1a7dp-11f,
        0x1.c22a5cp-2f, -0x1.41fad4p-2f, 0x1.fcd37ep-4f, 0x1.1f8a7cp-1f,
        -0x1.7bbb94p-3f, 0x1.0163cep-2f, -0x1.011c98p-1f, -0x1.f0f07ep-5f,
        0x1.803198p-2f, -0x1.7df1ap-2f, 0x1.ebd2ep-5f, 0x1.ff044ap-2f,
        -0x1.0074dp-2f,
    },
    {  // after step 4
        -0x1.1f319p-1f, -0x1.046a72p-3f, 0x1.3ef9fap-2f, -0x1.c13762p-2f,
        0x1.5fc102p-9f, 0x1.bcad3cp-2f, -0x1.41c8a8p-2f, 0x1.fa42f8p-4f,
        0x1.21637p-1f, -0x1.7ccd2ep-3f, 0x1.f9f402p-3f, -0x1.fee542p-2f,
        -0x1.f87434p-5f, 0x1.821608p-2f, -0x1.8119dap-2f, 0x1.f3b8bep-5f,
        0x1.ff73e2p-2f, -0x1.fdcde6p-3f, 0x1.7ae4c2p-3f, -0x1.1fd8e2p-1f,
        -0x1.f855f6p-4f, 0x1.3e2dfap-2f, -0x1.c0b47ep-2f, -0x1.f2c8f8p-11f,
        0x1.c2d58ap-2f, -0x1.42920cp-2f, 0x1.f9bcb4p-4f, 0x1.1f713ep-1f,
        -0x1.7a3b94p-3f, 0x1.0193a2p-2f, -0x1.016db8p-1f, -0x1.f60c86p-5f,
        0x1.80ff7cp-2f, -0x1.7d90e4p-2f, 0x1.e58becp-5f, 0x1.fea9dep-2f,
        -0x1.ff654cp-3f,
    },
    {  // after step 5
        -0x1.1f017ep-1f, -0x1.04df1cp-3f, 0x1.3ebffap-2f, -0x1.c14446p-2f,
        0x1.851b5ep-9f, 0x1.bc80cap-2f, -0x1.424afap-2f, 0x1.f9e894p-4f,
        0x1.2184f4p-1f, -0x1.7c59b8p-3f, 0x1.f9004cp-3f, -0x1.ff0424p-2f,
        -0x1.f60712p-5f, 0x1.82451ap-2f, -0x1.811852p-2f, 0x1.f071d6p-5f,
        0x1.ffce94p-2f, -0x1.fdf23ep-3f, 0x1.7abcecp-3f, -0x1.1fd4b2p-1f,
        -0x1.f6c332p-4f, 0x1.3e1db6p-2f, -0x1.c0dcfap-2f, -0x1.f5646ep-11f,
        0x1.c317fap-2f, -0x1.428452p-2f, 0x1.f7c192p-4f, 0x1.1f6ba2p-1f,
        -0x1.79a7e6p-3f, 0x1.01ae26p-2f, -0x1.01a7dap-1f, -0x1.f6af0ap-5f,
        0x1.815272p-2f, -0x1.7d5028p-2f, 0x1.e2ee3p-5f, 0x1.fe43a6p-2f,
        -0x1.fea1b6p-3f,
    },
}};
constexpr std::array<float, 37> torch_exp_avg_fused = {
    -0x1.c290acp-7f, 0x1.ee368cp-9f, 0x1.cb1412p-8f, 0x1.57a87cp-9f,
    -0x1.0c8364p-6f, 0x1.fd3c36p-10f, 0x1.2bcce2p-6f, 0x1.28927ap-8f,
    -0x1.c1f142p-7f, -0x1.95f99ap-8f, 0x1.ff0ed4p-7f, 0x1.c2032p-8f,
    -0x1.d37ebap-7f, -0x1.2bbb82p-8f, -0x1.4a4d84p-14f, 0x1.a318a8p-6f,
    -0x1.f3f6d2p-7f, 0x1.9e15c8p-10f, 0x1.f4ed88p-10f, -0x1.55b038p-10f,
    -0x1.0bfa6ep-6f, 0x1.21bdap-10f, 0x1.236408p-8f, 0x1.f563f4p-13f,
    -0x1.01e796p-6f, -0x1.5bcaap-11f, 0x1.0021eap-6f, 0x1.01c4d8p-9f,
    -0x1.0802e6p-6f, -0x1.ae1efp-9f, 0x1.a9aaa4p-7f, 0x1.13574p-8f,
    -0x1.13ab62p-6f, -0x1.c7e4a2p-8f, 0x1.c50482p-8f, 0x1.78669p-6f,
    -0x1.25a66p-6f,
};
constexpr std::array<float, 37> torch_exp_avg_sq_fused = {
    0x1.3e61d8p-16f, 0x1.f9ca58p-19f, 0x1.c55bb4p-17f, 0x1.1929d4p-15f,
    0x1.6ed91ep-15f, 0x1.e24f16p-20f, 0x1.2a13cp-16f, 0x1.37aa48p-15f,
    0x1.36b3fp-15f, 0x1.631c02p-17f, 0x1.f71f3ep-17f, 0x1.64788ep-15f,
    0x1.021f9ep-15f, 0x1.180396p-17f, 0x1.ea82dep-18f, 0x1.c68cep-15f,
    0x1.a7522ap-16f, 0x1.b76b94p-18f, 0x1.22129p-17f, 0x1.da80ap-16f,
    0x1.924e62p-16f, 0x1.197ba8p-18f, 0x1.6fd728p-17f, 0x1.0069c6p-15f,
    0x1.abf3bap-15f, 0x1.357374p-19f, 0x1.d13b48p-17f, 0x1.19d3ap-15f,
    0x1.6e4a8cp-15f, 0x1.c3f42p-17f, 0x1.76fa34p-17f, 0x1.42ad0cp-15f,
    0x1.34b4c4p-15f, 0x1.67481ep-17f, 0x1.a0d64p-18f, 0x1.87c246p-15f,
    0x1.02604ap-15f,
};
// unfused: CPU capability usage: NO AVX
constexpr std::array<std::array<float, 37>, 5> torch_params_unfused = {{
    {  // after step 1
        -0x1.2p-1f, -0x1p-3f, 0x1.4p-2f, -0x1.cp-2f,
        0x0p+0f, 0x1.cp-2f, -0x1.4p-2f, 0x1p-3f,
        0x1.2p-1f, -0x1.8p-3f, 0x1p-2f, -0x1p-1f,
        -0x1p-4f, 0x1.8p-2f, -0x1.8p-2f, 0x1p-4f,
        0x1p-1f, -0x1p-2f, 0x1.8p-3f, -0x1.2p-1f,
        -0x1p-3f, 0x1.4p-2f, -0x1.cp-2f, 0x0p+0f,
        0x1.cp-2f, -0x1.4p-2f, 0x1p-3f, 0x1.2p-1f,
        -0x1.8p-3f, 0x1p-2f, -0x1p-1f, -0x1p-4f,
        0x1.8p-2f, -0x1.8p-2f, 0x1p-4f, 0x1p-1f,
        -0x1p-2f,
    },
    {  // after step 2
        -0x1.1fa77p-1f, -0x1.020c4ep-3f, 0x1.40c9d6p-2f, -0x1.c0c52ep-2f,
        0x1.ae1132p-11f, 0x1.bf3bc8p-2f, -0x1.406552p-2f, 0x1.004b1ep-3f,
        0x1.205c1ap-1f, -0x1.7ec158p-3f, 0x1.fdf266p-3f, -0x1.ff3a9p-2f,
        -0x1.04139ep-4f, 0x1.80d9fap-2f, -0x1.80e6dap-2f, 0x1.fc6482p-5f,
        0x1.ffd408p-2f, -0x1.00452ap-2f, 0x1.7eb3cp-3f, -0x1.20011ap-1f,
        -0x1.fd121p-4f, 0x1.3ef9b2p-2f, -0x1.bf3046p-2f, -0x1.8afb12p-11f,
        0x1.c0d9bcp-2f, -0x1.4080bap-2f, 0x1.fea26ap-4f, 0x1.202f3cp-1f,
        -0x1.7e886ap-3f, 0x1.00aefep-2f, -0x1.008296p-1f, -0x1.f9a96ep-5f,
        0x1.7efd62p-2f, -0x1.7f2626p-2f, 0x1.f9e61ep-5f, 0x1.ff988cp-2f,
        -0x1.ffb2eap-3f,
    },
    {  // after step 3
        -0x1.1f4ae6p-1f, -0x1.047844p-3f, 0x1.3fe71ep-2f, -0x1.c11d6ap-2f,
        0x1.0e9108p-9f, 0x1.bd776ap-2f, -0x1.40f55p-2f, 0x1.fb62ap-4f,
        0x1.210944p-1f, -0x1.7dc0b4p-3f, 0x1.fb5a0cp-3f, -0x1.fe396cp-2f,
        -0x1.feadc4p-5f, 0x1.81e30ep-2f, -0x1.811d3ep-2f, 0x1.f6fe76p-5f,
        0x1.febc34p-2f, -0x1.fe63c2p-3f, 0x1.7b7cd8p-3f, -0x1.1fe734p-1f,
        -0x1.f99524p-4f, 0x1.3dddaap-2f, -0x1.bfd86cp-2f, -0x1.f1a7d4p-11f,
        0x1.c22a5cp-2f, -0x1.41fad4p-2f, 0x1.fcd37ep-4f, 0x1.1f8a7cp-1f,
        -0x1.7bbb94p-3f, 0x1.0163cep-2f, -0x1.011c98p-1f, -0x1.f0f07ep-5f,
        0x1.803198p-2f, -0x1.7df1ap-2f, 0x1.ebd2ep-5f, 0x1.ff044ap-2f,
        -0x1.0074dp-2f,
    },
    {  // after step 4
        -0x1.1f319p-1f, -0x1.046a72p-3f, 0x1.3ef9fap-2f, -0x1.c13762p-2f,
        0x1.5fc102p-9f, 0x1.bcad3cp-2f, -0x1.41c8a8p-2f, 0x1.fa42f8p-4f,
        0x1.21637p-1f, -0x1.7ccd2ep-3f, 0x1.f9f402p-3f, -0x1.fee542p-2f,
        -0x1.f87434p-5f, 0x1.821608p-2f, -0x1.8119dap-2f, 0x1.f3b8bep-5f,
        0x1.ff73e2p-2f, -0x1.fdcde6p-3f, 0x1.7ae4c2p-3f, -0x1.1fd8e2p-1f,
        -0x1.f855f6p-4f, 0x1.3e2dfap-2f, -0x1.c0b47ep-2f, -0x1.f2c8fcp-11f,
        0x1.c2d58ap-2f, -0x1.42920cp-2f, 0x1.f9bcb4p-4f, 0x1.1f713ep-1f,
        -0x1.7a3b94p-3f, 0x1.0193a2p-2f, -0x1.016db8p-1f, -0x1.f60c86p-5f,
        0x1.80ff7cp-2f, -0x1.7d90e4p-2f, 0x1.e58becp-5f, 0x1.fea9dep-2f,
        -0x1.ff654cp-3f,
    },
    {  // after step 5
        -0x1.1f017ep-1f, -0x1.04df1cp-3f, 0x1.3ebffap-2f, -0x1.c14446p-2f,
        0x1.851b5ep-9f, 0x1.bc80cap-2f, -0x1.424afap-2f, 0x1.f9e894p-4f,
        0x1.2184f4p-1f, -0x1.7c59b8p-3f, 0x1.f9004cp-3f, -0x1.ff0424p-2f,
        -0x1.f60712p-5f, 0x1.82451ap-2f, -0x1.811852p-2f, 0x1.f071d6p-5f,
        0x1.ffce94p-2f, -0x1.fdf23ep-3f, 0x1.7abcecp-3f, -0x1.1fd4b2p-1f,
        -0x1.f6c332p-4f, 0x1.3e1db6p-2f, -0x1.c0dcfap-2f, -0x1.f56472p-11f,
        0x1.c317fap-2f, -0x1.428452p-2f, 0x1.f7c192p-4f, 0x1.1f6ba2p-1f,
        -0x1.79a7e6p-3f, 0x1.01ae26p-2f, -0x1.01a7dap-1f, -0x1.f6af0ap-5f,
        0x1.815272p-2f, -0x1.7d5028p-2f, 0x1.e2ee3p-5f, 0x1.fe43a6p-2f,
        -0x1.fea1b6p-3f,
    },
}};
constexpr std::array<float, 37> torch_exp_avg_unfused = {
    -0x1.c290acp-7f, 0x1.ee368cp-9f, 0x1.cb1412p-8f, 0x1.57a87cp-9f,
    -0x1.0c8364p-6f, 0x1.fd3c2ep-10f, 0x1.2bcce2p-6f, 0x1.28927ap-8f,
    -0x1.c1f142p-7f, -0x1.95f99ap-8f, 0x1.ff0ed4p-7f, 0x1.c2032p-8f,
    -0x1.d37ebep-7f, -0x1.2bbb82p-8f, -0x1.4a4d4p-14f, 0x1.a318aap-6f,
    -0x1.f3f6d4p-7f, 0x1.9e15c8p-10f, 0x1.f4ed84p-10f, -0x1.55b034p-10f,
    -0x1.0bfa6ep-6f, 0x1.21bdap-10f, 0x1.236408p-8f, 0x1.f56426p-13f,
    -0x1.01e796p-6f, -0x1.5bcaap-11f, 0x1.0021eap-6f, 0x1.01c4dp-9f,
    -0x1.0802e8p-6f, -0x1.ae1efp-9f, 0x1.a9aaa4p-7f, 0x1.13574p-8f,
    -0x1.13ab62p-6f, -0x1.c7e4ap-8f, 0x1.c5047ep-8f, 0x1.78669p-6f,
    -0x1.25a66p-6f,
};
constexpr std::array<float, 37> torch_exp_avg_sq_unfused = {
    0x1.3e61d8p-16f, 0x1.f9ca58p-19f, 0x1.c55bb4p-17f, 0x1.1929d4p-15f,
    0x1.6ed91ep-15f, 0x1.e24f18p-20f, 0x1.2a13cp-16f, 0x1.37aa48p-15f,
    0x1.36b3eep-15f, 0x1.631c02p-17f, 0x1.f71f3ep-17f, 0x1.64788cp-15f,
    0x1.021f9ep-15f, 0x1.180396p-17f, 0x1.ea82dep-18f, 0x1.c68cep-15f,
    0x1.a7522ap-16f, 0x1.b76b94p-18f, 0x1.22129p-17f, 0x1.da80ap-16f,
    0x1.924e64p-16f, 0x1.197ba8p-18f, 0x1.6fd728p-17f, 0x1.0069c6p-15f,
    0x1.abf3bap-15f, 0x1.357374p-19f, 0x1.d13b48p-17f, 0x1.19d39ep-15f,
    0x1.6e4a8ap-15f, 0x1.c3f42p-17f, 0x1.76fa34p-17f, 0x1.42ad0cp-15f,
    0x1.34b4c4p-15f, 0x1.67481cp-17f, 0x1.a0d642p-18f, 0x1.87c246p-15f,
    0x1.02604ap-15f,
};
// ---- end of the pasted output ----

// Distance in representable floats (0 for equal values, +0 and -0 included).
std::int64_t ulp_distance(float a, float b) {
  const auto key = [](float x) {
    std::int32_t i = 0;
    std::memcpy(&i, &x, sizeof i);
    return i < 0 ? -static_cast<std::int64_t>(i & 0x7fffffff) : static_cast<std::int64_t>(i);
  };
  const std::int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

void check_same(std::span<const float> got, std::span<const float> want, const std::string& what) {
  REQUIRE(got.size() == want.size());
  std::int64_t worst = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::int64_t d = ulp_distance(got[i], want[i]);
    if (d > worst) {
      worst = d;
      at = i;
    }
  }
  std::ostringstream msg;
  msg << what << ": worst element " << at << ", got " << std::hexfloat << got[at] << ", torch " << want[at]
      << std::defaultfloat << ", " << worst << " ulp apart";
  INFO(msg.str());
  CHECK(worst == 0);
}

bool bitwise_equal(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

// A few million parameters in ranges of awkward sizes (not multiples of the chunk or of a vector), alternating
// decay, with gradients over several orders of magnitude and some zeros.
struct big_problem {
  std::vector<param_range> ranges;
  std::vector<float> params;
  std::vector<std::vector<float>> grads;  // one per step

  big_problem(std::size_t n, int steps) {
    const std::size_t pattern[] = {589'824, 768, 768, 100'003, 1, 16'384, 7, 2'359'296};
    std::size_t at = 0;
    for (std::size_t k = 0; at < n; ++k) {
      const std::size_t size = std::min(pattern[k % std::size(pattern)], n - at);
      ranges.push_back({at, size, k % 3 != 1});
      at += size;
    }
    std::mt19937 rng(20240611);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    params.resize(n);
    for (float& p : params) p = uniform(rng) * 0.05f;
    for (int s = 0; s < steps; ++s) {
      std::vector<float> g(n);
      for (std::size_t i = 0; i < n; ++i) {
        g[i] = i % 101 == 0 ? 0.0f : std::ldexp(uniform(rng), -static_cast<int>(i % 17));
      }
      grads.push_back(std::move(g));
    }
  }
};

}  // namespace

TEST_CASE("adamw: defaults are Hugging Face TrainingArguments'", "[optim][adamw]") {
  const adamw_options o;
  CHECK(o.lr == 5e-5);
  CHECK(o.beta1 == 0.9);
  CHECK(o.beta2 == 0.999);
  CHECK(o.eps == 1e-8);
  CHECK(o.weight_decay == 0.0);
}

TEST_CASE("adamw: five steps under a linear warmup match torch.optim.AdamW bit for bit", "[optim][adamw]") {
  const auto& want_params = cputrain::optim::detail::adamw_fused ? torch_params_fused : torch_params_unfused;
  const auto& want_m = cputrain::optim::detail::adamw_fused ? torch_exp_avg_fused : torch_exp_avg_unfused;
  const auto& want_v = cputrain::optim::detail::adamw_fused ? torch_exp_avg_sq_fused : torch_exp_avg_sq_unfused;
  INFO("this build " << (cputrain::optim::detail::adamw_fused ? "fuses" : "does not fuse") << " multiply-adds");

  std::vector<float> params(n_ref);
  for (std::size_t i = 0; i < n_ref; ++i) params[i] = initial_param(i);
  adamw opt(n_ref, ref_ranges, ref_options());
  const lr_schedule schedule = ref_schedule();
  for (int step = 1; step <= 5; ++step) {
    std::vector<float> g(n_ref);
    for (std::size_t i = 0; i < n_ref; ++i) g[i] = grad(step, i);
    const double lr = schedule.lr(step - 1);
    CHECK(lr == torch_lrs[static_cast<std::size_t>(step - 1)]);
    opt.step(params, g, lr);
    check_same(params, want_params[static_cast<std::size_t>(step - 1)], "params after step " + std::to_string(step));
  }
  CHECK(opt.step_count() == 5);
  check_same(opt.exp_avg(), want_m, "exp_avg after step 5");
  check_same(opt.exp_avg_sq(), want_v, "exp_avg_sq after step 5");
}

TEST_CASE("adamw: the order and the splitting of ranges change nothing", "[optim][adamw]") {
  const auto run = [](const std::vector<param_range>& ranges) {
    std::vector<float> params(n_ref);
    for (std::size_t i = 0; i < n_ref; ++i) params[i] = initial_param(i);
    adamw opt(n_ref, ranges, ref_options());
    for (int step = 1; step <= 3; ++step) {
      std::vector<float> g(n_ref);
      for (std::size_t i = 0; i < n_ref; ++i) g[i] = grad(step, i);
      opt.step(params, g, 1e-2);
    }
    return params;
  };
  const std::vector<float> in_order = run(ref_ranges);
  CHECK(bitwise_equal(run({{25, 12, true}, {0, 20, true}, {20, 5, false}}), in_order));
  CHECK(bitwise_equal(run({{0, 3, true}, {3, 0, false}, {3, 17, true}, {20, 4, false}, {24, 1, false}, {25, 12, true}}),
                      in_order));
  CHECK_FALSE(bitwise_equal(run({{0, 37, true}}), in_order));  // the no-decay range matters
}

TEST_CASE("adamw: weight decay touches the decay ranges only", "[optim][adamw]") {
  const auto run = [](double weight_decay) {
    std::vector<float> params(n_ref);
    for (std::size_t i = 0; i < n_ref; ++i) params[i] = initial_param(i);
    adamw_options o = ref_options();
    o.weight_decay = weight_decay;
    adamw opt(n_ref, ref_ranges, o);
    std::vector<float> g(n_ref);
    for (std::size_t i = 0; i < n_ref; ++i) g[i] = grad(1, i);
    opt.step(params, g, 1e-2);
    return params;
  };
  const std::vector<float> without = run(0.0), with = run(0.5);
  for (std::size_t i = 0; i < n_ref; ++i) {
    INFO("element " << i);
    const bool decays = i < 20 || i >= 25;
    if (decays && initial_param(i) != 0.0f) {
      CHECK(with[i] != without[i]);
    } else {
      CHECK(ulp_distance(with[i], without[i]) == 0);
    }
  }
}

TEST_CASE("adamw: step() without an lr uses options().lr", "[optim][adamw]") {
  std::vector<float> a(n_ref), b(n_ref), g(n_ref);
  for (std::size_t i = 0; i < n_ref; ++i) {
    a[i] = b[i] = initial_param(i);
    g[i] = grad(1, i);
  }
  adamw opt_a(n_ref, ref_ranges, ref_options()), opt_b(n_ref, ref_ranges, ref_options());
  opt_a.step(a, g);
  opt_b.step(b, g, 2e-3);
  CHECK(bitwise_equal(a, b));
  CHECK(a[2] != initial_param(2));
}

TEST_CASE("adamw: results are identical with one thread and with two", "[optim][adamw][threads]") {
  const std::size_t n = 3'000'000;
  const big_problem problem(n, 3);
  const lr_schedule schedule{schedule_kind::linear, 1e-3, 1, 10};
  adamw_options o;
  o.weight_decay = 0.01;
  const auto run = [&](int threads) {
    std::vector<float> params = problem.params;
    adamw opt(n, problem.ranges, o);
    tbb::task_arena arena(threads);
    arena.execute([&] {
      for (int s = 0; s < 3; ++s) opt.step(params, problem.grads[static_cast<std::size_t>(s)], schedule.lr(s + 1));
    });
    return std::tuple{params, std::vector<float>(opt.exp_avg().begin(), opt.exp_avg().end()),
                      std::vector<float>(opt.exp_avg_sq().begin(), opt.exp_avg_sq().end())};
  };
  const auto [p1, m1, v1] = run(1);
  const auto [p2, m2, v2] = run(2);
  CHECK_FALSE(bitwise_equal(p1, problem.params));
  CHECK(bitwise_equal(p1, p2));
  CHECK(bitwise_equal(m1, m2));
  CHECK(bitwise_equal(v1, v2));
}

TEST_CASE("adamw: an optimizer reloaded from saved state continues bit-identically", "[optim][adamw][state]") {
  const std::size_t n = 100'000;  // several chunks
  const big_problem problem(n, 5);
  const lr_schedule schedule{schedule_kind::cosine, 1e-3, 2, 5};
  adamw_options o;
  o.weight_decay = 0.01;

  std::vector<float> params = problem.params;
  adamw original(n, problem.ranges, o);
  for (int s = 0; s < 3; ++s) original.step(params, problem.grads[static_cast<std::size_t>(s)], schedule.lr(s));
  // The checkpoint: parameters, step count and both moments.
  const std::vector<float> saved_params = params;
  const std::uint64_t saved_step = original.step_count();
  const std::vector<float> saved_m(original.exp_avg().begin(), original.exp_avg().end());
  const std::vector<float> saved_v(original.exp_avg_sq().begin(), original.exp_avg_sq().end());
  for (int s = 3; s < 5; ++s) original.step(params, problem.grads[static_cast<std::size_t>(s)], schedule.lr(s));

  std::vector<float> resumed_params = saved_params;
  adamw resumed(n, problem.ranges, o);
  resumed.load_state(saved_step, saved_m, saved_v);
  CHECK(resumed.step_count() == 3);
  for (int s = 3; s < 5; ++s) resumed.step(resumed_params, problem.grads[static_cast<std::size_t>(s)], schedule.lr(s));

  CHECK(resumed.step_count() == original.step_count());
  CHECK(bitwise_equal(resumed_params, params));
  CHECK(bitwise_equal(resumed.exp_avg(), original.exp_avg()));
  CHECK(bitwise_equal(resumed.exp_avg_sq(), original.exp_avg_sq()));

  // Without the step count the bias corrections differ, so the state really is all of it.
  std::vector<float> wrong_params = saved_params;
  adamw wrong(n, problem.ranges, o);
  wrong.load_state(0, saved_m, saved_v);
  for (int s = 3; s < 5; ++s) wrong.step(wrong_params, problem.grads[static_cast<std::size_t>(s)], schedule.lr(s));
  CHECK_FALSE(bitwise_equal(wrong_params, params));
}

TEST_CASE("adamw: options out of range are usage errors naming the option", "[optim][adamw][errors]") {
  const auto make = [](auto edit) {
    adamw_options o;
    edit(o);
    return adamw(4, o);
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_MATCHES(make([](adamw_options& o) { o.lr = -1e-5; }), usage_error, says("option lr = -1e-05"));
  CHECK_THROWS_MATCHES(make([&](adamw_options& o) { o.lr = nan; }), usage_error, says("option lr"));
  CHECK_THROWS_MATCHES(make([](adamw_options& o) { o.beta1 = 1.0; }), usage_error, says("option beta1 = 1 "));
  CHECK_THROWS_MATCHES(make([](adamw_options& o) { o.beta1 = -0.1; }), usage_error, says("option beta1"));
  CHECK_THROWS_MATCHES(make([](adamw_options& o) { o.beta2 = 1.5; }), usage_error, says("option beta2"));
  CHECK_THROWS_MATCHES(make([](adamw_options& o) { o.eps = -1e-8; }), usage_error, says("option eps"));
  CHECK_THROWS_MATCHES(make([](adamw_options& o) { o.weight_decay = -0.01; }), usage_error,
                       says("option weight_decay"));
  CHECK_NOTHROW(make([](adamw_options& o) { o.beta1 = 0.0, o.beta2 = 0.0, o.eps = 0.0, o.lr = 0.0; }));
}

TEST_CASE("adamw: ranges that do not tile the buffer are usage errors naming the range", "[optim][adamw][errors]") {
  const auto make = [](std::vector<param_range> ranges) { return adamw(10, std::move(ranges)); };
  CHECK_THROWS_MATCHES(make({{0, 4, true}, {5, 5, false}}), usage_error,
                       says("gap: elements [4, 5) belong to no range"));
  CHECK_THROWS_MATCHES(make({{0, 4, true}, {4, 5, false}}), usage_error,
                       says("gap: elements [9, 10) belong to no range"));
  CHECK_THROWS_MATCHES(make({}), usage_error, says("gap: elements [0, 10)"));
  CHECK_THROWS_MATCHES(make({{0, 6, true}, {4, 6, false}}), usage_error,
                       says("range 1 (offset 4, size 6) overlaps range 0 (offset 0, size 6)"));
  CHECK_THROWS_MATCHES(make({{4, 6, false}, {0, 6, true}}), usage_error,
                       says("range 0 (offset 4, size 6) overlaps range 1 (offset 0, size 6)"));
  CHECK_THROWS_MATCHES(make({{0, 5, true}, {5, 6, false}}), usage_error,
                       says("range 1 (offset 5, size 6) ends past the end of the buffer of 10 elements"));
  CHECK_THROWS_MATCHES(make({{0, 10, true}, {std::numeric_limits<std::size_t>::max(), 2, true}}), usage_error,
                       says("range 1 (offset 18446744073709551615, size 2) ends past the end"));
  CHECK_THROWS_MATCHES(make({{0, 10, true}, {4, std::numeric_limits<std::size_t>::max(), true}}), usage_error,
                       says("range 1 (offset 4, size 18446744073709551615) ends past the end"));
  CHECK_NOTHROW(make({{6, 4, true}, {10, 0, false}, {0, 6, false}}));
  CHECK_NOTHROW(adamw(0, std::vector<param_range>{}));
}

TEST_CASE("adamw: size mismatches and a bad lr are usage errors", "[optim][adamw][errors]") {
  adamw opt(8);
  std::vector<float> p(8), g(8), short_buffer(7);
  CHECK_THROWS_MATCHES(opt.step(short_buffer, g, 1e-3), usage_error,
                       says("adamw::step: params has 7 elements, but the optimizer was built for 8"));
  CHECK_THROWS_MATCHES(opt.step(p, short_buffer, 1e-3), usage_error, says("adamw::step: grads has 7 elements"));
  CHECK_THROWS_MATCHES(opt.step(p, g, -1.0), usage_error, says("adamw::step: lr = -1 must be >= 0"));
  CHECK_THROWS_MATCHES(opt.step(p, g, std::numeric_limits<double>::infinity()), usage_error,
                       says("adamw::step: lr = inf"));
  CHECK_THROWS_MATCHES(opt.load_state(1, short_buffer, g), usage_error,
                       says("adamw::load_state: exp_avg has 7 elements"));
  CHECK_THROWS_MATCHES(opt.load_state(1, g, short_buffer), usage_error,
                       says("adamw::load_state: exp_avg_sq has 7 elements"));
  CHECK(opt.step_count() == 0);  // failed calls change nothing
}

}  // namespace adamw_test
