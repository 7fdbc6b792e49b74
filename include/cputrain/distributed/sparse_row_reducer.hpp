// cputrain::dist::sparse_row_reducer — averages an embedding table's gradient over ranks by sending only the rows
// some rank's batch used (the ranks agree on the union, then sum those rows). Unused rows stay zero and used rows
// get bit for bit the dense result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/policy/parallel/parallel_policy.hpp"

namespace cputrain::dist {

template <parallel::communicator Comm>
class sparse_row_reducer {
 public:
  /// `table`: the gradient of a [rows, width] table, row-major, inside the flat gradient buffer.
  /// `average` false leaves the sums (the caller scaled its gradients by 1 / size before), as reducer_options.
  sparse_row_reducer(Comm& comm, std::span<float> table, std::size_t width, bool average = true)
      : comm_(comm), table_(table), width_(width), average_(average),
        used_(width == 0 ? 0 : table.size() / width, 0.0f) {
    if (width == 0 || table.size() % width != 0)
      throw usage_error("cputrain::dist::sparse_row_reducer: a table of " + std::to_string(table.size()) +
                        " floats is not a whole number of rows of width " + std::to_string(width));
  }

  [[nodiscard]] std::size_t rows() const noexcept { return used_.size(); }

  /// Notes the rows this rank's current step reads (token ids of every micro-batch); out-of-range ids throw.
  void mark(std::span<const std::int32_t> ids) {
    for (const std::int32_t id : ids) {
      if (id < 0 || static_cast<std::size_t>(id) >= used_.size())
        throw usage_error("cputrain::dist::sparse_row_reducer: row " + std::to_string(id) + " of a table of " +
                          std::to_string(used_.size()));
      used_[static_cast<std::size_t>(id)] = 1.0f;
    }
  }

  /// Collective: every rank's table rows become the average over ranks. Returns the rows sent. Clears the marks.
  std::size_t reduce() {
    const auto world = static_cast<float>(comm_.size());
    if (comm_.size() == 1) {
      std::fill(used_.begin(), used_.end(), 0.0f);
      return 0;
    }
    comm_.all_reduce_sum(std::span<float>(used_));  // > 0: some rank used the row
    rows_.clear();
    for (std::size_t r = 0; r < used_.size(); ++r) {
      if (used_[r] > 0.0f) rows_.push_back(r);
    }
    packed_.resize(rows_.size() * width_);
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const float* row = table_.data() + rows_[i] * width_;
      std::copy(row, row + width_, packed_.data() + i * width_);
    }
    comm_.all_reduce_sum(std::span<float>(packed_));
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      float* row = table_.data() + rows_[i] * width_;
      const float* sum = packed_.data() + i * width_;
      if (average_) {
        for (std::size_t k = 0; k < width_; ++k) row[k] = sum[k] / world;
      } else {
        std::copy(sum, sum + width_, row);
      }
    }
    std::fill(used_.begin(), used_.end(), 0.0f);
    return rows_.size();
  }

 private:
  Comm& comm_;
  std::span<float> table_;
  std::size_t width_;
  bool average_;
  std::vector<float> used_;  // per row, 1 where this rank's step used it (floats: summed by the same all-reduce)
  std::vector<std::size_t> rows_;
  std::vector<float> packed_;
};

}  // namespace cputrain::dist
