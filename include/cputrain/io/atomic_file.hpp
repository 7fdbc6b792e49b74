// Crash-safe file replacement: write_file_atomically(path, bytes or text) and write_file_atomically(path,
// producer) (streams through an atomic_file_sink) leave at `path` the old file or the whole new one, never a mix:
// a temporary file in the same directory, fsync'd, renamed over `path`, then the directory fsync'd. Failures throw
// io::io_error naming the path and the system's reason.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/io_error.hpp"

namespace cputrain::io {

namespace detail {

[[noreturn]] inline void throw_write_errno(const std::string& what, int err) {
  throw io_error(what + ": " + std::strerror(err));
}

}  // namespace detail

/// fsync()s directory `dir`, so that renames and new entries in it survive a power cut. `what` starts the
/// message of the io_error thrown when that fails ("checkpoint-500 was written, but its directory").
CPUTRAIN_DECL void sync_directory(const std::filesystem::path& dir, const std::string& what);

class atomic_file_sink;
CPUTRAIN_DECL void write_file_atomically(const std::filesystem::path& path,
                                         const std::function<void(atomic_file_sink&)>& produce);

/// Where a producer writes the new file's bytes. Small writes are buffered, large ones go straight to the file.
class atomic_file_sink {
 public:
  atomic_file_sink(const atomic_file_sink&) = delete;
  atomic_file_sink& operator=(const atomic_file_sink&) = delete;

  void write(std::span<const std::byte> bytes);
  void write(std::string_view text) { write(std::as_bytes(std::span<const char>(text.data(), text.size()))); }

  /// Bytes handed to write() so far.
  [[nodiscard]] std::uint64_t bytes_written() const noexcept { return written_; }

 private:
  friend void write_file_atomically(const std::filesystem::path&, const std::function<void(atomic_file_sink&)>&);

  static constexpr std::size_t buffer_capacity = std::size_t{1} << 20;

  atomic_file_sink(int fd, const std::filesystem::path& target) : fd_(fd), target_(target) {
    buffer_.reserve(buffer_capacity);
  }

  void flush() {
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }

  void write_all(const std::byte* data, std::size_t size) {
    while (size > 0) {
      // Linux moves at most about 2 GiB per write(); a short write is not an error, just more to do.
      const ::ssize_t n = ::write(fd_, data, std::min<std::size_t>(size, std::size_t{1} << 30));
      if (n < 0) {
        const int err = errno;
        if (err == EINTR) continue;
        detail::throw_write_errno("cannot write " + target_.string(), err);
      }
      data += n;
      size -= static_cast<std::size_t>(n);
    }
  }

  int fd_;
  const std::filesystem::path& target_;
  std::vector<std::byte> buffer_;
  std::uint64_t written_ = 0;
};

/// Replaces (or creates) `path` with what `produce` writes, atomically (see the header comment). An exception
/// from `produce` propagates unchanged after the temporary file is removed.
CPUTRAIN_DECL void write_file_atomically(const std::filesystem::path& path,
                                         const std::function<void(atomic_file_sink&)>& produce);

/// Replaces (or creates) `path` with exactly `bytes`, atomically.
CPUTRAIN_DECL void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes);

/// Replaces (or creates) `path` with exactly `text` (no newline added), atomically.
CPUTRAIN_DECL void write_file_atomically(const std::filesystem::path& path, std::string_view text);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void sync_directory(const std::filesystem::path& dir, const std::string& what) {
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    const int err = errno;
    detail::throw_write_errno(what + " cannot be opened to sync it", err);
  }
  int rc = 0;
  while ((rc = ::fsync(dir_fd)) != 0 && errno == EINTR) {
  }
  const int fsync_errno = errno;
  ::close(dir_fd);
  // Some file systems cannot sync a directory and say so with EINVAL; there is nothing more we could do there.
  if (rc != 0 && fsync_errno != EINVAL) detail::throw_write_errno(what + " could not be synced", fsync_errno);
}

CPUTRAIN_DECL void atomic_file_sink::write(std::span<const std::byte> bytes) {
  if (bytes.size() >= buffer_capacity) {
    flush();
    write_all(bytes.data(), bytes.size());
  } else {
    if (buffer_.size() + bytes.size() > buffer_capacity) flush();
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  }
  written_ += bytes.size();
}

CPUTRAIN_DECL void write_file_atomically(const std::filesystem::path& path,
                                         const std::function<void(atomic_file_sink&)>& produce) {
  namespace fs = std::filesystem;
  if (!path.has_filename()) {
    throw io_error("write_file_atomically: \"" + path.string() + "\" does not name a file");
  }
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");

  // pid + a process-wide counter keep concurrent writers (threads or processes) off each other's temporary file;
  // O_EXCL makes a clash (a stale file from a crashed process that had the same pid) visible, and we move on.
  static std::atomic<std::uint64_t> counter{0};
  fs::path tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    // Appended piece by piece: GCC 12 reports a false -Wrestrict on "." + std::string (GCC bug 105651).
    std::string name(1, '.');
    name += path.filename().string();
    name += ".tmp.";
    name += std::to_string(::getpid());
    name += '.';
    name += std::to_string(counter.fetch_add(1));
    tmp = dir / name;
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    const int err = errno;
    if (fd < 0 && (err != EEXIST || attempt >= 100)) {
      detail::throw_write_errno("cannot create a temporary file in " + dir.string() + " to write " + path.string(),
                                err);
    }
  }

  // Until the rename succeeds, any way out removes the temporary file.
  struct cleanup {
    int& fd;
    const fs::path& tmp;
    bool armed = true;
    ~cleanup() {
      if (!armed) return;
      if (fd >= 0) ::close(fd);
      ::unlink(tmp.c_str());
    }
  } guard{fd, tmp};

  struct ::stat old_file {};
  if (::stat(path.c_str(), &old_file) == 0 && S_ISREG(old_file.st_mode)) {
    // Best effort: failing to copy the mode is no reason to refuse the write.
    (void)::fchmod(fd, old_file.st_mode & 07777);
  }

  {
    atomic_file_sink sink(fd, path);
    produce(sink);
    sink.flush();
  }
  // Without this fsync, a crash shortly after the rename could leave the new name pointing at an empty or
  // partial file on file systems that reorder metadata before data (ext4 with delalloc, xfs).
  while (::fsync(fd) != 0) {
    const int err = errno;
    if (err != EINTR) {
      detail::throw_write_errno("cannot fsync " + tmp.string() + " (writing " + path.string() + ")", err);
    }
  }
  // Linux releases the descriptor even when close() reports EINTR, so it must not be closed twice.
  if (::close(std::exchange(fd, -1)) != 0) {
    const int err = errno;
    if (err != EINTR) {
      detail::throw_write_errno("cannot close " + tmp.string() + " (writing " + path.string() + ")", err);
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    detail::throw_write_errno("cannot rename " + tmp.string() + " to " + path.string(), err);
  }
  guard.armed = false;

  // The rename lives in the directory; until the directory is synced, a power cut can undo it.
  sync_directory(dir, path.string() + " was written, but its directory");
}

CPUTRAIN_DECL void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  write_file_atomically(path, [bytes](atomic_file_sink& out) { out.write(bytes); });
}

CPUTRAIN_DECL void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  write_file_atomically(path, [text](atomic_file_sink& out) { out.write(text); });
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::io
