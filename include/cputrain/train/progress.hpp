// cputrain::train::progress_bar — what a person watching training sees: on a terminal, one line redrawn in place
// as tqdm draws it for Hugging Face's Trainer (" 120/400 [00:41<01:36, 2.90it/s, loss=1.23]"); when the output is
// not a terminal (a log file, kubectl logs), nothing, because the log entries printed every logging_steps are
// the record there and a carriage-return bar would only clutter it.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::train {

class progress_bar {
 public:
  /// `total` steps; drawn on `out` only when `enabled` and `out` is a terminal.
  progress_bar(std::int64_t total, std::int64_t first, bool enabled, std::FILE* out = stderr)
      : total_(total), first_(first), out_(out), start_(std::chrono::steady_clock::now()) {
    active_ = enabled && out_ != nullptr && ::isatty(::fileno(out_)) == 1;
  }
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;
  ~progress_bar() { finish(); }

  [[nodiscard]] bool active() const noexcept { return active_; }

  /// Redraws for `step` steps done, with the latest loss (NaN: not shown).
  void update(std::int64_t step, double loss);

  /// Ends the bar's line, so what is printed next starts on a fresh one.
  void finish() {
    if (active_ && drawn_) {
      std::fputc('\n', out_);
      std::fflush(out_);
    }
    drawn_ = false;
  }

  /// Prints `text` on its own line above the bar (a log entry while the bar is drawn).
  void print_above(const std::string& text, std::FILE* stream = stdout);

 private:
  static std::string clock(double seconds) {
    const auto s = static_cast<long long>(std::llround(seconds));
    char buffer[32];
    if (s >= 3600) std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else std::snprintf(buffer, sizeof buffer, "%02lld:%02lld", s / 60, s % 60);
    return buffer;
  }
  static std::string rate_text(double rate) {
    char buffer[32];
    if (rate >= 1.0 || rate == 0.0) std::snprintf(buffer, sizeof buffer, "%.2fit/s", rate);
    else std::snprintf(buffer, sizeof buffer, "%.2fs/it", 1.0 / rate);
    return buffer;
  }

  std::int64_t total_, first_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_, last_draw_{};
  bool active_ = false, drawn_ = false;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void progress_bar::update(std::int64_t step, double loss) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (step < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;  // tqdm's redraw pace
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(step - first_) / elapsed : 0.0;
  const double remaining = rate > 0 ? static_cast<double>(total_ - step) / rate : 0.0;
  std::string line = "\r" + std::to_string(step) + "/" + std::to_string(total_) + " [" + clock(elapsed) + "<" +
                     clock(remaining) + ", " + rate_text(rate);
  if (!std::isnan(loss)) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, ", loss=%.4g", loss);
    line += buffer;
  }
  line += "]   ";
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
  drawn_ = true;
}

CPUTRAIN_DECL void progress_bar::print_above(const std::string& text, std::FILE* stream) {
  if (active_ && drawn_) {  // clear the bar's line; the next update draws it again below the text
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
  std::fputs((text + "\n").c_str(), stream);
  std::fflush(stream);
  drawn_ = false;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
