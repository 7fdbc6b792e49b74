// Shared helpers of the fuzz targets (tests/fuzz/*_fuzz.cpp).
//
//   fuzz_file(name).path_with(data, size)   the bytes as a file, for the parsers that only take a path: one memfd
//                                           per process (memfd_create), rewritten for every input, opened through
//                                           /proc/self/fd/N — nothing touches the disk, nothing is left behind
//   fuzz_check(condition, what)             an invariant of the parser's result: prints `what` and aborts, which
//                                           libFuzzer (and the replay main) reports as a crash with the input
//
// A target catches cputrain::error only — the clear message every bad input must end in. Anything else (an
// nlohmann::json exception, std::length_error, std::bad_alloc from a size read from the file) leaves
// LLVMFuzzerTestOneInput, and libFuzzer reports it as a crash ("deadly signal" after an uncaught exception).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace cputrain_fuzz {

[[noreturn]] inline void die(const char* what) {
  std::fprintf(stderr, "fuzz target: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

inline void fuzz_check(bool condition, const char* what) {
  if (!condition) die(what);
}

/// One anonymous in-memory file per process, reused for every input.
class fuzz_file {
 public:
  explicit fuzz_file(const char* name) : fd_(::memfd_create(name, MFD_CLOEXEC)) {
    if (fd_ < 0) die("memfd_create failed");
  }
  fuzz_file(const fuzz_file&) = delete;
  fuzz_file& operator=(const fuzz_file&) = delete;
  ~fuzz_file() { ::close(fd_); }

  /// Replaces the file's contents with the input; returns the path that opens it.
  std::string path_with(const std::uint8_t* data, std::size_t size) const {
    if (::ftruncate(fd_, 0) != 0) die("ftruncate failed");
    std::size_t done = 0;
    while (done < size) {
      const ::ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) die("pwrite failed");
      done += static_cast<std::size_t>(n);
    }
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

}  // namespace cputrain_fuzz
