// The output directory of a run, handled as run_qa.py handles it, plus a lock:
//
//   prepare_output_dir(args)  creates output_dir; with --do_train and without --overwrite_output_dir, a directory
//                             that has a complete checkpoint resumes from the newest one (unless
//                             --resume_from_checkpoint names another), and a non-empty one without checkpoints is
//                             refused (usage_error), so finished work is never overwritten by accident
//   output_dir_lock           an exclusive flock on output_dir/.cputrain.lock for the life of the run: a second
//                             run pointed at the same directory stops at once with a message instead of both
//                             writing checkpoints over each other
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "cputrain/core/error.hpp"
#include "cputrain/io/io_error.hpp"
#include "cputrain/train/checkpoint.hpp"
#include "cputrain/train/training_args.hpp"

namespace cputrain::train {

inline constexpr std::string_view output_lock_file = ".cputrain.lock";

class output_dir_lock {
 public:
  explicit output_dir_lock(const std::filesystem::path& dir) : path_(dir / output_lock_file) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw io::io_error(path_.string() + ": cannot create the lock file: " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      if (err == EWOULDBLOCK)
        throw usage_error("--output_dir " + dir.string() +
                          ": another run is using this directory (it holds " + path_.filename().string() +
                          "); give each run its own --output_dir");
      throw io::io_error(path_.string() + ": cannot lock: " + std::strerror(err));
    }
  }
  output_dir_lock(const output_dir_lock&) = delete;
  output_dir_lock& operator=(const output_dir_lock&) = delete;
  ~output_dir_lock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock; the file stays, harmlessly
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

/// Creates output_dir and decides where training starts: the checkpoint to resume from, if any.
inline std::optional<std::filesystem::path> prepare_output_dir(const training_args& args) {
  namespace fs = std::filesystem;
  const fs::path dir = args.output_dir;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw usage_error("--output_dir " + dir.string() + ": exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw io::io_error(dir.string() + ": cannot create the output directory: " + ec.message());
  if (args.resume_from_checkpoint) {
    const fs::path from = *args.resume_from_checkpoint;
    if (!fs::exists(from / checkpoint_state_file, ec))
      throw usage_error("--resume_from_checkpoint " + from.string() + ": not a complete checkpoint (no " +
                        std::string(checkpoint_state_file) + ")");
    return from;
  }
  if (!args.do_train || args.overwrite_output_dir) return std::nullopt;
  if (auto last = last_checkpoint(dir)) return last;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == output_lock_file) continue;
    throw usage_error("--output_dir " + dir.string() +
                      ": already exists and is not empty, and holds no checkpoint to resume from; use "
                      "--overwrite_output_dir to train into it anyway, or choose another directory");
  }
  return std::nullopt;
}

}  // namespace cputrain::train
