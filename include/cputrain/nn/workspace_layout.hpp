// cputrain::nn::workspace_carver and workspace_tally — one description of a model's per-batch workspace, read two
// ways. Layers and heads describe what they need by calling kept(), kept_float() and scratch() in order; the
// carver hands out consecutive pieces of the model's two buffers (activation type, float), the tally counts them
// in 64 bits without allocating, for the memory bill. Each piece is a product of dimensions, checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "cputrain/core/error.hpp"

namespace cputrain::nn {

/// Elements of each kind a workspace description asks for.
struct workspace_size {
  std::uint64_t kept = 0;         // activation type, kept from forward for backward
  std::uint64_t kept_floats = 0;  // float, kept for backward (row statistics)
  std::uint64_t scratch = 0;      // float, reused within a pass
};

/// Counts a description. `what` names the settings in the message when a count does not fit in 64 bits.
template <class A>
class workspace_tally {
 public:
  explicit workspace_tally(std::string what) : what_(std::move(what)) {}

  A* kept(std::initializer_list<std::uint64_t> dims) {
    add(size_.kept, dims);
    return nullptr;
  }
  float* kept_float(std::initializer_list<std::uint64_t> dims) {
    add(size_.kept_floats, dims);
    return nullptr;
  }
  float* scratch(std::initializer_list<std::uint64_t> dims) {
    add(size_.scratch, dims);
    return nullptr;
  }

  /// `count` more copies of what `other` counted (the layers of an encoder, described once).
  void add_copies(const workspace_tally& other, std::uint64_t count) {
    add(size_.kept, {other.size_.kept, count});
    add(size_.kept_floats, {other.size_.kept_floats, count});
    add(size_.scratch, {other.size_.scratch, count});
  }

  [[nodiscard]] const workspace_size& size() const noexcept { return size_; }
  [[nodiscard]] const std::string& what() const noexcept { return what_; }

 private:
  void add(std::uint64_t& total, std::initializer_list<std::uint64_t> dims) {
    std::uint64_t n = 1;
    for (const std::uint64_t d : dims) {
      if (__builtin_mul_overflow(n, d, &n)) overflow();
    }
    if (__builtin_add_overflow(total, n, &total)) overflow();
  }
  [[noreturn]] void overflow() const { throw usage_error(what_ + " is more than 64-bit sizes can count"); }

  std::string what_;
  workspace_size size_;
};

/// Hands out a description's pieces from two buffers sized by a workspace_tally of the same description: `kept`
/// (activation type) and `floats` (the kept floats, then the scratch).
template <class A>
class workspace_carver {
 public:
  workspace_carver(A* kept, float* floats, const workspace_size& size)
      : kept_(kept), kept_floats_(floats), scratch_(floats + size.kept_floats) {}

  A* kept(std::initializer_list<std::uint64_t> dims) { return take(kept_, dims); }
  float* kept_float(std::initializer_list<std::uint64_t> dims) { return take(kept_floats_, dims); }
  float* scratch(std::initializer_list<std::uint64_t> dims) { return take(scratch_, dims); }

 private:
  template <class T>
  static T* take(T*& next, std::initializer_list<std::uint64_t> dims) {
    std::size_t n = 1;
    for (const std::uint64_t d : dims) n *= static_cast<std::size_t>(d);
    T* piece = next;
    next += n;
    return piece;
  }

  A* kept_;
  float* kept_floats_;
  float* scratch_;
};

}  // namespace cputrain::nn
