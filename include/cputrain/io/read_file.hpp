// cputrain::io::read_whole_file — a file's bytes, for the readers of small-to-medium outside files (config.json, a
// SQuAD file). Failures throw the caller's exception type (io_error by default; the data readers use data_error)
// with the path and the system's reason, and a directory is named as such instead of failing later in read().
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "cputrain/io/io_error.hpp"

namespace cputrain::io {

template <class Error = io_error>
std::string read_whole_file(const std::filesystem::path& path) {
  const auto fail = [&](const char* what, int err) { throw Error(path.string() + ": " + what + ": " + std::strerror(err)); };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open", errno);
  struct fd_closer {
    int fd;
    ~fd_closer() { ::close(fd); }
  } closer{fd};
  struct ::stat st {};
  if (::fstat(fd, &st) != 0) fail("cannot stat", errno);
  if (S_ISDIR(st.st_mode)) throw Error(path.string() + ": is a directory, not a file");
  std::string text;
  if (S_ISREG(st.st_mode) && st.st_size > 0) text.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ::ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot read", errno);
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace cputrain::io
