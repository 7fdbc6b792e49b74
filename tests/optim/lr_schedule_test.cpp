// Tests for include/cputrain/optim/lr_schedule.hpp: every schedule equals LambdaLR's lr, as Hugging Face's Trainer
// drives it, bit for bit (reference from scripts/make_optim_reference.py), the warmup_ratio rounding, the names,
// and the errors.
#include <catch2/catch.hpp>

#include "support/checks.hpp"

#include <array>
#include <cstdint>
#include <ios>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "cputrain/optim/lr_schedule.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace lr_schedule_test {

using cputrain::usage_error;
using cputrain::optim::lr_schedule;
using cputrain::optim::parse_schedule;
using cputrain::optim::schedule_kind;
using cputrain::optim::warmup_steps_from_ratio;

using cputrain::test::says;

namespace {

struct warmup_case {
  double ratio;
  std::int64_t total, warmup;
};

// ---- output of /usr/bin/python3 scripts/make_optim_reference.py (torch 1.13 LambdaLR), pasted ----
// case 0: base_lr 3e-05, warmup 10, total 100
constexpr std::array<std::int64_t, 13> steps_0 = {
    0, 1, 5, 9, 10, 11, 37, 50, 99, 100, 101, 150, 200,
};
//   linear: [0.0, 3e-06, 1.5e-05, 2.7000000000000002e-05, 3e-05, 2.966666666666667e-05, 2.1e-05,
//   1.6666666666666667e-05, 3.3333333333333335e-07, 0.0, 0.0, 0.0, 0.0]
constexpr std::array<double, 13> torch_linear_0 = {
    0x0p+0, 0x1.92a737110e454p-19, 0x1.f75104d551d69p-17,
    0x1.c4fc1df3300dfp-16, 0x1.f75104d551d69p-16, 0x1.f1b95cf515321p-16,
    0x1.6052502eec7c9p-16, 0x1.179ec9cbd821ep-16, 0x1.65e9f80f29212p-22,
    0x0p+0, 0x0p+0, 0x0p+0,
    0x0p+0,
};
//   cosine: [0.0, 3e-06, 1.5e-05, 2.7000000000000002e-05, 3e-05, 2.9990862405286438e-05, 2.3816778784387097e-05,
//   1.760472266500396e-05, 9.137594713563569e-09, 0.0, 9.137594713563569e-09, 1.7604722665003952e-05,
//   2.9095389311788626e-05]
constexpr std::array<double, 13> torch_cosine_0 = {
    0x0p+0, 0x1.92a737110e454p-19, 0x1.f75104d551d69p-17,
    0x1.c4fc1df3300dfp-16, 0x1.f75104d551d69p-16, 0x1.f729c5f10f7c3p-16,
    0x1.8f944935a8801p-16, 0x1.275bb546212ap-16, 0x1.39f72212d31bap-27,
    0x0p+0, 0x1.39f72212d31bap-27, 0x1.275bb5462129ep-16,
    0x1.e823bedcec551p-16,
};
//   constant: [3e-05, 3e-05, 3e-05, 3e-05, 3e-05, 3e-05, 3e-05, 3e-05, 3e-05, 3e-05, 3e-05, 3e-05, 3e-05]
constexpr std::array<double, 13> torch_constant_0 = {
    0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16,
    0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16,
    0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16,
    0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16,
    0x1.f75104d551d69p-16,
};
//   constant_with_warmup: [0.0, 3e-06, 1.5e-05, 2.7000000000000002e-05, 3e-05, 3e-05, 3e-05, 3e-05, 3e-05, 3e-05,
//   3e-05, 3e-05, 3e-05]
constexpr std::array<double, 13> torch_constant_with_warmup_0 = {
    0x0p+0, 0x1.92a737110e454p-19, 0x1.f75104d551d69p-17,
    0x1.c4fc1df3300dfp-16, 0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16,
    0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16,
    0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16, 0x1.f75104d551d69p-16,
    0x1.f75104d551d69p-16,
};
// case 1: base_lr 5e-05, warmup 0, total 7
constexpr std::array<std::int64_t, 6> steps_1 = {
    0, 1, 3, 6, 7, 8,
};
//   linear: [5e-05, 4.2857142857142856e-05, 2.857142857142857e-05, 7.142857142857143e-06, 0.0, 0.0]
constexpr std::array<double, 6> torch_linear_1 = {
    0x1.a36e2eb1c432dp-15, 0x1.67830373ccbddp-15, 0x1.df5959efbba7cp-16,
    0x1.df5959efbba7cp-18, 0x0p+0, 0x0p+0,
};
//   cosine: [5e-05, 4.752422169756048e-05, 3.056302334890786e-05, 2.475778302439524e-06, 0.0, 2.4757783024395215e-06]
constexpr std::array<double, 6> torch_cosine_1 = {
    0x1.a36e2eb1c432dp-15, 0x1.8ea97d2dc1a65p-15, 0x1.006197c6aba86p-15,
    0x1.4c4b184028c7ep-19, 0x0p+0, 0x1.4c4b184028c78p-19,
};
//   constant: [5e-05, 5e-05, 5e-05, 5e-05, 5e-05, 5e-05]
constexpr std::array<double, 6> torch_constant_1 = {
    0x1.a36e2eb1c432dp-15, 0x1.a36e2eb1c432dp-15, 0x1.a36e2eb1c432dp-15,
    0x1.a36e2eb1c432dp-15, 0x1.a36e2eb1c432dp-15, 0x1.a36e2eb1c432dp-15,
};
//   constant_with_warmup: [5e-05, 5e-05, 5e-05, 5e-05, 5e-05, 5e-05]
constexpr std::array<double, 6> torch_constant_with_warmup_1 = {
    0x1.a36e2eb1c432dp-15, 0x1.a36e2eb1c432dp-15, 0x1.a36e2eb1c432dp-15,
    0x1.a36e2eb1c432dp-15, 0x1.a36e2eb1c432dp-15, 0x1.a36e2eb1c432dp-15,
};
// warmup_steps = math.ceil(num_training_steps * warmup_ratio), TrainingArguments.get_warmup_steps
constexpr std::array<warmup_case, 7> python_warmup_cases = {{
    {0.07, 100, 8},
    {0.06, 50, 3},
    {0.1, 1000, 100},
    {0.0, 100, 0},
    {1.0, 33, 33},
    {0.5, 0, 0},
    {0.333, 10, 4},
}};
// ---- end of the pasted output ----

template <std::size_t N>
void check_schedule(const lr_schedule& s, const std::array<std::int64_t, N>& steps,
                    const std::array<double, N>& want) {
  for (std::size_t i = 0; i < N; ++i) {
    std::ostringstream msg;
    msg << to_string(s.kind) << " at step " << steps[i] << ": got " << std::hexfloat << s.lr(steps[i])
        << ", LambdaLR " << want[i];
    INFO(msg.str());
    CHECK(s.lr(steps[i]) == want[i]);
    CHECK(s.multiplier(steps[i]) * s.base_lr == want[i]);
  }
}

}  // namespace

TEST_CASE("lr_schedule: warmup 10 of 100 steps, each schedule equals LambdaLR exactly", "[optim][lr_schedule]") {
  check_schedule({schedule_kind::linear, 3e-5, 10, 100}, steps_0, torch_linear_0);
  check_schedule({schedule_kind::cosine, 3e-5, 10, 100}, steps_0, torch_cosine_0);
  check_schedule({schedule_kind::constant, 3e-5, 10, 100}, steps_0, torch_constant_0);
  check_schedule({schedule_kind::constant_with_warmup, 3e-5, 10, 100}, steps_0, torch_constant_with_warmup_0);
}

TEST_CASE("lr_schedule: no warmup, each schedule equals LambdaLR exactly", "[optim][lr_schedule]") {
  check_schedule({schedule_kind::linear, 5e-5, 0, 7}, steps_1, torch_linear_1);
  check_schedule({schedule_kind::cosine, 5e-5, 0, 7}, steps_1, torch_cosine_1);
  check_schedule({schedule_kind::constant, 5e-5, 0, 7}, steps_1, torch_constant_1);
  check_schedule({schedule_kind::constant_with_warmup, 5e-5, 0, 7}, steps_1, torch_constant_with_warmup_1);
}

TEST_CASE("lr_schedule: the shape at the edges", "[optim][lr_schedule]") {
  const lr_schedule linear{schedule_kind::linear, 1.0, 4, 8};
  CHECK(linear.multiplier(0) == 0.0);   // the first optimizer step has lr 0 under warmup
  CHECK(linear.multiplier(3) == 0.75);  // the last warmup step
  CHECK(linear.multiplier(4) == 1.0);   // the peak
  CHECK(linear.multiplier(8) == 0.0);   // the end
  CHECK(linear.multiplier(100) == 0.0); // clamped past it
  const lr_schedule cosine{schedule_kind::cosine, 1.0, 0, 8};
  CHECK(cosine.multiplier(4) == Approx(0.5).margin(1e-15));
  CHECK(cosine.multiplier(16) == 1.0);  // Hugging Face's formula comes back up past the end
  // warmup longer than the run: still warming up at the end
  CHECK(lr_schedule{schedule_kind::linear, 1.0, 10, 5}.multiplier(5) == 0.5);
  // zero steps (max(1, ...) guards every division)
  CHECK(lr_schedule{schedule_kind::linear, 1.0, 0, 0}.multiplier(0) == 0.0);
  CHECK(lr_schedule{schedule_kind::cosine, 1.0, 0, 0}.multiplier(0) == 1.0);
}

TEST_CASE("lr_schedule: Hugging Face's names", "[optim][lr_schedule]") {
  CHECK(parse_schedule("linear") == schedule_kind::linear);
  CHECK(parse_schedule("cosine") == schedule_kind::cosine);
  CHECK(parse_schedule("constant") == schedule_kind::constant);
  CHECK(parse_schedule("constant_with_warmup") == schedule_kind::constant_with_warmup);
  for (const auto kind : {schedule_kind::linear, schedule_kind::cosine, schedule_kind::constant,
                          schedule_kind::constant_with_warmup}) {
    CHECK(parse_schedule(to_string(kind)) == kind);
  }
  const char* valid = "valid names: linear, cosine, constant, constant_with_warmup";
  CHECK_THROWS_MATCHES(parse_schedule("cosine_with_restarts"), usage_error,
                       says("unknown lr_scheduler_type \"cosine_with_restarts\"") && says(valid));
  CHECK_THROWS_MATCHES(parse_schedule("Linear"), usage_error, says("\"Linear\"") && says(valid));
  CHECK_THROWS_MATCHES(parse_schedule(""), usage_error, says("\"\"") && says(valid));
}

TEST_CASE("lr_schedule: warmup_ratio rounds up as TrainingArguments.get_warmup_steps does", "[optim][lr_schedule]") {
  for (const warmup_case& c : python_warmup_cases) {
    INFO("ratio " << c.ratio << " of " << c.total << " steps");
    CHECK(warmup_steps_from_ratio(c.ratio, c.total) == c.warmup);
  }
  CHECK_THROWS_MATCHES(warmup_steps_from_ratio(-0.1, 100), usage_error, says("warmup_ratio = -0.1 must lie in [0, 1]"));
  CHECK_THROWS_MATCHES(warmup_steps_from_ratio(1.5, 100), usage_error, says("warmup_ratio = 1.5"));
  CHECK_THROWS_MATCHES(warmup_steps_from_ratio(std::numeric_limits<double>::quiet_NaN(), 100), usage_error,
                       says("warmup_ratio = nan"));
  CHECK_THROWS_MATCHES(warmup_steps_from_ratio(0.1, -1), usage_error, says("total_steps = -1 must be >= 0"));
}

TEST_CASE("lr_schedule: fields out of range are usage errors naming the field", "[optim][lr_schedule][errors]") {
  CHECK_THROWS_MATCHES((lr_schedule{schedule_kind::linear, 1e-3, -1, 10}.lr(0)), usage_error,
                       says("warmup_steps = -1 must be >= 0"));
  CHECK_THROWS_MATCHES((lr_schedule{schedule_kind::linear, 1e-3, 0, -5}.lr(0)), usage_error,
                       says("total_steps = -5 must be >= 0"));
  CHECK_THROWS_MATCHES((lr_schedule{schedule_kind::linear, -1e-3, 0, 10}.lr(0)), usage_error,
                       says("base_lr = -0.001 must be >= 0"));
  CHECK_THROWS_MATCHES((lr_schedule{schedule_kind::linear, 1e-3, 0, 10}.lr(-1)), usage_error,
                       says("step = -1 must be >= 0"));
  CHECK_THROWS_MATCHES((lr_schedule{static_cast<schedule_kind>(42), 1e-3, 0, 10}.lr(0)), usage_error,
                       says("kind 42 is not a schedule"));
}

}  // namespace lr_schedule_test
