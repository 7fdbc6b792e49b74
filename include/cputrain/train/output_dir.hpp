// The output directory of a run, as run_qa.py handles it: create_output_dir (a usage_error when a file is in the
// way, an io_error with the system's reason otherwise), prepare_output_dir (resume from the newest complete
// checkpoint, or refuse a non-empty directory without one, so finished work is never overwritten by accident), and
// output_dir_lock (an exclusive flock on output_dir/.cputrain.lock: a second run there stops at once).
#pragma once

#include "cputrain/train/checkpoint_dirs.hpp"

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
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/io_error.hpp"

namespace cputrain::train {

inline constexpr std::string_view output_lock_file = ".cputrain.lock";

class output_dir_lock {
 public:
  explicit output_dir_lock(const std::filesystem::path& dir);
  output_dir_lock(const output_dir_lock&) = delete;
  output_dir_lock& operator=(const output_dir_lock&) = delete;
  ~output_dir_lock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock; the file stays, harmlessly
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

/// Creates `dir` and its missing parents.
CPUTRAIN_DECL void create_output_dir(const std::filesystem::path& dir);

/// What run_qa.py's output-directory rule reads, under Hugging Face's names.
struct output_dir_options {
  std::string output_dir;
  /// A checkpoint directory to resume from, instead of the newest in output_dir.
  std::optional<std::string> resume_from_checkpoint;
  /// Only a training run resumes, or is refused a non-empty directory.
  bool do_train = false;
  /// Start afresh even if output_dir holds checkpoints.
  bool overwrite_output_dir = false;
};

/// Creates output_dir and decides where training starts: the checkpoint to resume from, if any.
CPUTRAIN_DECL std::optional<std::filesystem::path> prepare_output_dir(const output_dir_options& options);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL output_dir_lock::output_dir_lock(const std::filesystem::path& dir) : path_(dir / output_lock_file) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  // The first write into output_dir: on a read-only or full disk this is where the run stops, before any
  // work, so the message names the directory the user gave rather than our file alone.
  if (fd_ < 0)
    throw io::io_error("--output_dir " + dir.string() + ": cannot create the lock file " +
                       path_.filename().string() + " in it: " + std::strerror(errno));
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

CPUTRAIN_DECL void create_output_dir(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw usage_error("--output_dir " + dir.string() + ": exists and is not a directory");
  // Checked by hand so that the message names the file in the way, not only the system's "Not a directory".
  for (fs::path parent = dir.parent_path(); !parent.empty() && parent != parent.parent_path();
       parent = parent.parent_path()) {
    if (fs::exists(parent, ec) && !fs::is_directory(parent, ec))
      throw usage_error("--output_dir " + dir.string() + ": " + parent.string() + " is a file, not a directory");
  }
  fs::create_directories(dir, ec);
  if (ec) throw io::io_error("--output_dir " + dir.string() + ": cannot create the output directory: " + ec.message());
}

CPUTRAIN_DECL std::optional<std::filesystem::path> prepare_output_dir(const output_dir_options& options) {
  namespace fs = std::filesystem;
  const fs::path dir = options.output_dir;
  std::error_code ec;
  create_output_dir(dir);
  if (options.resume_from_checkpoint) {
    const fs::path from = *options.resume_from_checkpoint;
    if (!fs::exists(from / checkpoint_state_file, ec))
      throw usage_error("--resume_from_checkpoint " + from.string() + ": not a complete checkpoint (no " +
                        std::string(checkpoint_state_file) + ")");
    return from;
  }
  if (!options.do_train) return std::nullopt;
  // A re-save cut between its renames leaves a checkpoint to put in place, not content. The other leftovers wait
  // for the first save: removed here, the name of a killed write would vanish while the run starts up.
  finish_interrupted_replacements(dir);
  if (options.overwrite_output_dir) return std::nullopt;
  if (auto last = last_checkpoint(dir)) return last;
  std::string incomplete;  // checkpoint-N without trainer_state.json: a copy cut short, or another program's
  bool empty = true;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    // What a crash during the first save leaves (tmp-checkpoint-1) is not the user's content: the rerun of the
    // same command must start afresh, not be refused (found by tests/examples/fault_test.sh kill-during-save).
    if (it->path().filename() == output_lock_file || is_checkpoint_leftover(it->path().filename().string())) continue;
    empty = false;
    std::error_code kind_ec;  // not `ec`, which ends the listing
    if (checkpoint_step(it->path()) && it->is_directory(kind_ec) && incomplete.empty())
      incomplete = " (" + it->path().filename().string() + " has no " + std::string(checkpoint_state_file) +
                   ": an incomplete checkpoint is never resumed from)";
  }
  if (!empty)
    throw usage_error("--output_dir " + dir.string() +
                      ": already exists and is not empty, and holds no checkpoint to resume from" + incomplete +
                      "; use --overwrite_output_dir to train into it anyway, or choose another directory");
  return std::nullopt;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
