// cputrain::nn::parameter_table — the names (Hugging Face's), shapes and offsets of a model's tensors in its one
// flat parameter buffer and, at the same offsets, its flat gradient buffer. Every tensor starts on a 64-byte
// boundary; the padding belongs to the tensor before it and stays zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/optim/param_ranges.hpp"

namespace cputrain::nn {

struct parameter_info {
  std::string name;
  std::vector<std::int64_t> shape;
  std::size_t offset = 0;  // in floats, into the flat buffers
  std::size_t size = 0;    // elements (product of shape)
  bool decay = true;       // weight decay applies (Hugging Face Trainer: not to biases and LayerNorm weights)
};

/// Hugging Face Trainer's grouping: biases and every LayerNorm parameter get no weight decay.
[[nodiscard]] inline bool hf_decays(std::string_view name) {
  return name.find("bias") == std::string_view::npos && name.find("LayerNorm") == std::string_view::npos;
}

class parameter_table {
 public:
  static constexpr std::size_t alignment_floats = 16;

  /// Appends a tensor and returns its offset. Names are unique; every dimension is positive.
  std::size_t add(std::string name, std::vector<std::int64_t> shape) {
    if (index_.contains(name)) throw usage_error("parameter_table: tensor \"" + name + "\" added twice");
    std::size_t size = 1;
    for (auto d : shape) {
      if (d <= 0) throw usage_error("parameter_table: tensor \"" + name + "\" has a dimension " + std::to_string(d));
      size *= static_cast<std::size_t>(d);
    }
    parameter_info info;
    info.decay = hf_decays(name);
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
      out.push_back(optim::param_range{entries_[i].offset, end - entries_[i].offset, entries_[i].decay});
    }
    return out;
  }

 private:
  std::vector<parameter_info> entries_;
  std::unordered_map<std::string, std::size_t> index_;
  std::size_t total_ = 0;
};

}  // namespace cputrain::nn
