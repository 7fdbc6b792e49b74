// cputrain::train::termination_signal — SIGTERM (what Kubernetes, Slurm and mpirun send before killing a job) and
// SIGINT turned into a request the training loop sees between steps: the trainer agrees with the other ranks,
// writes a checkpoint if it fits in the grace period and stops with training_interrupted, so the rerun resumes.
// Later signals only print a line on stderr: no number of SIGTERMs ends the process (an orchestrator insists with
// SIGKILL), and a third SIGINT ends it at once without a checkpoint, as a user pressing Ctrl-C thrice expects.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <string>
#include <string_view>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"

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
// The handler touches only these: lock-free atomics and a name written before the handler is installed.
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");
struct termination_state {
  std::atomic<int> first{0};
  std::atomic<int> sigints{0};
  std::atomic<int> sigterms{0};
  char program[64] = "cputrain";
};
inline termination_state termination;

/// Appends `text` to `line` at `n`, up to `cap` bytes; returns the new length. Async-signal-safe.
inline std::size_t append_text(char* line, std::size_t n, std::size_t cap, const char* text) noexcept {
  while (*text != '\0' && n < cap) line[n++] = *text++;
  return n;
}

inline std::size_t append_number(char* line, std::size_t n, std::size_t cap, int value) noexcept {
  char digits[12];
  int k = 0;
  do {
    digits[k++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && k < 12);
  while (k > 0 && n < cap) line[n++] = digits[--k];
  return n;
}

// A handler may not allocate nor use stdio, so the line is put together on the stack and sent by one write(2).
inline void report_repeated_signal(int signal, int count) noexcept {
  char line[512];
  const std::size_t cap = sizeof line - 1;
  std::size_t n = append_text(line, 0, cap, termination.program);
  n = append_text(line, n, cap, signal == SIGINT ? ": SIGINT" : ": SIGTERM");
  n = append_text(line, n, cap, signal == termination.first.load(std::memory_order_relaxed) ? " again (" : " (");
  n = append_number(line, n, cap, count);
  n = append_text(line, n, cap,
                  "): still stopping: the checkpoint of this step is written first if it fits in the grace period, "
                  "then the process ends; ");
  if (signal == SIGINT)
    n = append_text(line, n, cap, count == 1 ? "press Ctrl-C twice more to stop at once without a checkpoint"
                                             : "press Ctrl-C once more to stop at once without a checkpoint");
  else
    n = append_text(line, n, cap, "more SIGTERMs do not cut it short (SIGKILL would, losing the checkpoint)");
  line[n++] = '\n';
  (void)!::write(STDERR_FILENO, line, n);
}

extern "C" inline void cputrain_on_termination_signal(int signal) {
  const int saved_errno = errno;  // write(2) may change it under the interrupted code
  int before = 0;
  const bool first = termination.first.compare_exchange_strong(before, signal, std::memory_order_relaxed);
  const int count = (signal == SIGINT ? termination.sigints : termination.sigterms).fetch_add(1) + 1;
  if (signal == SIGINT && count >= 3) {
    char line[160];
    std::size_t n = append_text(line, 0, sizeof line - 1, termination.program);
    n = append_text(line, n, sizeof line - 1, ": SIGINT a third time: stopping at once, without a checkpoint\n");
    (void)!::write(STDERR_FILENO, line, n);
    // Delivered again when this handler returns, now with the default action: the shell sees death by SIGINT.
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(SIGINT, &fallback, nullptr);
    raise(SIGINT);
  } else if (!first) {
    report_repeated_signal(signal, count);
  }
  errno = saved_errno;
}
}  // namespace detail

/// Process-wide: install() once in main(), naming the program for the lines repeated signals print; the trainer
/// polls received() between steps.
struct termination_signal {
  static void install(std::string_view program = "cputrain");
  /// The first signal received (SIGTERM, SIGINT), or 0.
  [[nodiscard]] static int received() noexcept { return detail::termination.first.load(std::memory_order_relaxed); }
  /// How many of `signal` (SIGTERM or SIGINT) arrived since install() or reset().
  [[nodiscard]] static int count(int signal) noexcept {
    return (signal == SIGINT ? detail::termination.sigints : detail::termination.sigterms).load();
  }
  /// For tests: forget the signals received.
  static void reset() noexcept {
    detail::termination.first.store(0, std::memory_order_relaxed);
    detail::termination.sigints.store(0);
    detail::termination.sigterms.store(0);
  }
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void termination_signal::install(std::string_view program) {
  auto& name = detail::termination.program;
  const std::size_t length = program.size() < sizeof name - 1 ? program.size() : sizeof name - 1;
  program.copy(name, length);
  name[length] = '\0';
  struct sigaction action {};
  action.sa_handler = detail::cputrain_on_termination_signal;
  // SA_RESTART: a signal that lands in a blocking call (a checkpoint's write, MPI waiting on a socket) resumes
  // the call instead of failing it with EINTR. A thread in the handler holds the other signal until it is done.
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGTERM);
  sigaddset(&action.sa_mask, SIGINT);
  for (const int s : {SIGTERM, SIGINT}) {
    if (sigaction(s, &action, nullptr) != 0)
      throw error("cputrain: cannot install a handler for signal " + std::to_string(s));
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
