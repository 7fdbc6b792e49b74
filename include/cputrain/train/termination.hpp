// cputrain::train::termination_signal — SIGTERM (what Kubernetes, Slurm and mpirun send before killing a job) and
// SIGINT turned into a request the training loop sees between steps: the trainer then agrees with the other
// ranks, writes a checkpoint if it can within the grace period, and stops with training_interrupted, so that the
// rerun of the same command resumes from that step instead of the last periodic checkpoint. A second signal of
// the same kind is not caught: it ends the process at once, as the user pressing Ctrl-C twice expects.
#pragma once

#include <csignal>

#include <atomic>
#include <chrono>

#include "cputrain/core/error.hpp"

namespace cputrain::train {

/// Training stopped on request (a signal) after writing what it could; the program should exit 128 + signal.
class training_interrupted : public cputrain::error {
 public:
  training_interrupted(const std::string& what, int signal) : cputrain::error(what), signal_(signal) {}
  [[nodiscard]] int signal() const noexcept { return signal_; }

 private:
  int signal_;
};

namespace detail {
inline std::atomic<int> termination_signal_received{0};

extern "C" inline void cputrain_on_termination_signal(int signal) {
  termination_signal_received.store(signal, std::memory_order_relaxed);
  std::signal(signal, SIG_DFL);  // a second one is not caught
}
}  // namespace detail

/// Process-wide: install() once in main(); the trainer polls received() between steps.
struct termination_signal {
  static void install() {
    for (const int s : {SIGTERM, SIGINT}) {
      if (std::signal(s, detail::cputrain_on_termination_signal) == SIG_ERR)
        throw error("cputrain: cannot install a handler for signal " + std::to_string(s));
    }
  }
  /// The signal received (SIGTERM, SIGINT), or 0.
  [[nodiscard]] static int received() noexcept {
    return detail::termination_signal_received.load(std::memory_order_relaxed);
  }
  /// For tests: forget a received signal.
  static void reset() noexcept { detail::termination_signal_received.store(0, std::memory_order_relaxed); }
};

}  // namespace cputrain::train
