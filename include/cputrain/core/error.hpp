// The exceptions cputrain throws. Every message names the function (or file, or flag) and the problem, so a
// user can act on it without a debugger. Programs map them to exit codes: usage_error -> 2, the rest -> 1.
#pragma once

#include <stdexcept>
#include <string>

namespace cputrain {

/// Base of every cputrain exception.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A caller passed something a function cannot accept: mismatched sizes, overlapping buffers, a bad option.
class usage_error : public error {
 public:
  using error::error;
};

/// The machine's topology (NUMA nodes, cores, CPU affinity) could not be read or makes no sense.
class topology_error : public error {
 public:
  using error::error;
};

/// An operating-system call failed (memory, files, affinity); the message carries the call and errno text.
class system_error : public error {
 public:
  using error::error;
};

}  // namespace cputrain
