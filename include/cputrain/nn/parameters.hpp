// cputrain::nn::parameter_table — the names (Hugging Face's), shapes and offsets of a model's tensors in its one
// flat parameter buffer and, at the same offsets, its flat gradient buffer. Every tensor starts on a 64-byte
// boundary; the padding belongs to the tensor before it and stays zero. parameter_tally counts the same layout
// without building it: layers register their tensors through either (a parameter_registry), so the memory bill
// and the buffers the model allocates come from one description.
#pragma once

#include <cstddef>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/optim/param_ranges.hpp"

namespace cputrain::nn {

/// What a tensor is to the model, said where the layer registers it rather than read back from its name:
/// architectures name the same thing differently (BERT's `LayerNorm`, DistilBERT's `sa_layer_norm`), and Hugging
/// Face initialises and decays by the module a parameter belongs to.
enum class parameter_role {
  /// A Linear's weight: normal(0, initializer_range), decayed.
  weight,
  /// A Linear's bias, or a head's free bias: zero, not decayed.
  bias,
  /// A LayerNorm's weight: one, not decayed.
  norm_weight,
  /// A LayerNorm's bias: zero, not decayed.
  norm_bias,
  /// An Embedding table (positions, token types): normal, decayed.
  embedding,
  /// The token table: normal with the padding row zero, decayed; its gradient is row-sparse.
  word_embedding,
};

/// Hugging Face Trainer's grouping: no weight decay for any LayerNorm module's parameters nor for any bias.
[[nodiscard]] constexpr bool hf_decays(parameter_role role) noexcept {
  return role == parameter_role::weight || role == parameter_role::embedding ||
         role == parameter_role::word_embedding;
}

struct parameter_info {
  std::string name;
  std::vector<std::int64_t> shape;
  std::size_t offset = 0;  // in floats, into the flat buffers
  std::size_t size = 0;    // elements (product of shape)
  parameter_role role = parameter_role::weight;
  /// An embedding table's padding_idx row (-1: none): initialised to zero and given no gradient, as torch's
  /// nn.Embedding(padding_idx) does.
  std::int64_t padding_row = -1;
  /// Whether weight decay applies, as Hugging Face's Trainer groups it.
  [[nodiscard]] bool decay() const noexcept { return hf_decays(role); }
};

/// Where layers register their tensors: a parameter_table (the model's) or a parameter_tally (the bill's).
template <class R>
concept parameter_registry = requires(R r, std::string name, std::vector<std::int64_t> shape, parameter_role role) {
  { r.add(std::move(name), std::move(shape), role) } -> std::same_as<std::size_t>;
  { r.add(std::move(name), std::move(shape), role, std::int64_t{0}) } -> std::same_as<std::size_t>;
};

/// Every tensor starts on a 16-float (64-byte) boundary of the flat buffers.
inline constexpr std::size_t parameter_alignment_floats = 16;

class parameter_table {
 public:
  static constexpr std::size_t alignment_floats = parameter_alignment_floats;

  /// Appends a tensor and returns its offset. Names are unique; every dimension is positive.
  std::size_t add(std::string name, std::vector<std::int64_t> shape, parameter_role role,
                  std::int64_t padding_row = -1) {
    if (index_.contains(name)) throw usage_error("parameter_table: tensor \"" + name + "\" added twice");
    std::size_t size = 1;
    for (auto d : shape) {
      if (d <= 0) throw usage_error("parameter_table: tensor \"" + name + "\" has a dimension " + std::to_string(d));
      size *= static_cast<std::size_t>(d);
    }
    parameter_info info;
    info.role = role;
    info.padding_row = padding_row;
    info.name = std::move(name);
    info.shape = std::move(shape);
    info.offset = total_;
    info.size = size;
    total_ += (size + alignment_floats - 1) / alignment_floats * alignment_floats;
    index_.emplace(info.name, entries_.size());
    entries_.push_back(std::move(info));
    return entries_.back().offset;
  }

  [[nodiscard]] const std::vector<parameter_info>& entries() const noexcept { return entries_; }
  /// Floats in the flat buffer, padding included.
  [[nodiscard]] std::size_t total_size() const noexcept { return total_; }
  /// Parameters a user would count (padding excluded).
  [[nodiscard]] std::size_t parameter_count() const noexcept {
    std::size_t n = 0;
    for (const auto& e : entries_) n += e.size;
    return n;
  }

  [[nodiscard]] const parameter_info* find(std::string_view name) const {
    const auto it = index_.find(std::string(name));
    return it == index_.end() ? nullptr : &entries_[it->second];
  }
  /// The first tensor registered with `role`, or nullptr.
  [[nodiscard]] const parameter_info* first_of(parameter_role role) const {
    for (const auto& e : entries_) {
      if (e.role == role) return &e;
    }
    return nullptr;
  }
  [[nodiscard]] const parameter_info& at(std::string_view name) const {
    const auto* info = find(name);
    if (info == nullptr) throw usage_error("parameter_table: no tensor named \"" + std::string(name) + "\"");
    return *info;
  }

  /// The flat buffer as the optimizer's decay ranges: one range per tensor, padding included, tiling the buffer.
  [[nodiscard]] std::vector<optim::param_range> ranges() const {
    std::vector<optim::param_range> out;
    out.reserve(entries_.size());
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      const std::size_t end = i + 1 < entries_.size() ? entries_[i + 1].offset : total_;
      out.push_back(optim::param_range{entries_[i].offset, end - entries_[i].offset, entries_[i].decay()});
    }
    return out;
  }

 private:
  std::vector<parameter_info> entries_;
  std::unordered_map<std::string, std::size_t> index_;
  std::size_t total_ = 0;
};

/// The flat buffer a layout needs, counted in 64 bits without allocating: what parameter_table::total_size()
/// would be. A layout too big to count is refused with a usage_error that says `what` (the config fields).
class parameter_tally {
 public:
  explicit parameter_tally(std::string what) : what_(std::move(what)) {}

  std::size_t add(const std::string& /*name*/, const std::vector<std::int64_t>& shape, parameter_role /*role*/,
                  std::int64_t /*padding_row*/ = -1) {
    std::uint64_t size = 1;
    for (auto d : shape) {
      if (d <= 0) throw usage_error(what_ + ": a dimension is " + std::to_string(d));
      if (__builtin_mul_overflow(size, static_cast<std::uint64_t>(d), &size)) overflow();
    }
    const std::uint64_t offset = total_;
    std::uint64_t padded = 0;
    if (__builtin_add_overflow(size, parameter_alignment_floats - 1, &padded)) overflow();
    padded = padded / parameter_alignment_floats * parameter_alignment_floats;
    if (__builtin_add_overflow(total_, padded, &total_)) overflow();
    return static_cast<std::size_t>(offset);
  }

  /// Floats of the flat buffer, padding included.
  [[nodiscard]] std::uint64_t total() const noexcept { return total_; }
  [[nodiscard]] const std::string& what() const noexcept { return what_; }

  /// `count` more copies of what `other` tallied (the layers of an encoder, described once).
  void add_copies(const parameter_tally& other, std::uint64_t count) {
    std::uint64_t more = 0;
    if (__builtin_mul_overflow(other.total_, count, &more) || __builtin_add_overflow(total_, more, &total_))
      overflow();
  }

 private:
  [[noreturn]] void overflow() const { throw usage_error(what_ + " is more than 64-bit sizes can count"); }
  std::string what_;
  std::uint64_t total_ = 0;
};

}  // namespace cputrain::nn
