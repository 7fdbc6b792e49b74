// cputrain::memory_bill — what a piece of work will allocate, item by item with what makes each one big, and
// require_memory(bill, allowance, who): an insufficient_memory (a usage_error) naming the biggest items, their
// causes and both figures when the bill cannot fit, before a byte of it is allocated.
#pragma once

#include "cputrain/machine/memory_allowance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"

namespace cputrain {

/// "191 TiB", "22.8 GiB", "512 MiB", "4.0 KiB", "100 bytes": three significant digits, binary units.
[[nodiscard]] CPUTRAIN_DECL std::string format_bytes(double bytes);

/// One thing a run allocates.
struct memory_item {
  /// what it is: "AdamW moments"
  std::string what;
  /// bytes; a double, so that an absurd request still has a size to report
  double bytes = 0;
  /// the settings that make it this big: "num_hidden_layers 12 x hidden_size 768 ..."
  std::string cause;
};

/// A run's memory, item by item.
class memory_bill {
 public:
  void add(std::string what, double bytes, std::string cause = {}) {
    items_.push_back({std::move(what), bytes, std::move(cause)});
  }
  void add(const memory_bill& other) { items_.insert(items_.end(), other.items_.begin(), other.items_.end()); }

  [[nodiscard]] const std::vector<memory_item>& items() const noexcept { return items_; }
  [[nodiscard]] double total() const noexcept {
    double sum = 0;
    for (const auto& item : items_) sum += item.bytes;
    return sum;
  }

  /// "parameters 418 MiB, gradients 418 MiB, ...": every item, biggest first.
  [[nodiscard]] std::string breakdown() const;

  /// As breakdown(), each item followed by its cause the first time that cause appears (`told`: already said).
  [[nodiscard]] std::string breakdown_with_causes(const std::string& told_already = {}) const;

  /// The biggest item, or nullptr for an empty bill.
  [[nodiscard]] const memory_item* biggest() const;

 private:
  [[nodiscard]] std::vector<const memory_item*> by_size() const {
    std::vector<const memory_item*> sorted;
    for (const auto& item : items_) sorted.push_back(&item);
    std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->bytes > b->bytes; });
    return sorted;
  }

  std::vector<memory_item> items_;
};

/// A bill larger than the allowance. A usage_error: the settings ask for more than the machine has.
class insufficient_memory : public usage_error {
 public:
  using usage_error::usage_error;
};

/// What `who` holds at its peak if `bill` is allocated on top of what the process holds now.
[[nodiscard]] inline double peak_bytes(const memory_bill& bill, const memory_allowance& allowance) {
  return static_cast<double>(allowance.resident) + bill.total();
}

/// Throws insufficient_memory unless `bill` fits in what the process may still take. The message starts with
/// `who` ("config.json", "bert_qa") and the cause of the biggest item, then both figures and the breakdown.
CPUTRAIN_DECL void require_memory(const memory_bill& bill, const memory_allowance& allowance, std::string_view who);

#if CPUTRAIN_DEFINE_FUNCTIONS

CPUTRAIN_DECL std::string format_bytes(double bytes) {
  static constexpr const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  std::size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < std::size(units)) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[64];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%.0f bytes", bytes);
  } else {
    std::snprintf(text, sizeof text, bytes < 9.995 ? "%.2f %s" : bytes < 99.95 ? "%.1f %s" : "%.0f %s", bytes,
                  units[unit]);
  }
  return text;
}

CPUTRAIN_DECL std::string memory_bill::breakdown() const {
  std::string out;
  for (const auto* item : by_size()) {
    if (!out.empty()) out += ", ";
    out += item->what + " " + format_bytes(item->bytes);
  }
  return out;
}

CPUTRAIN_DECL std::string memory_bill::breakdown_with_causes(const std::string& told_already) const {
  std::string out;
  std::vector<std::string> told{told_already};
  for (const auto* item : by_size()) {
    if (!out.empty()) out += ", ";
    out += item->what + " " + format_bytes(item->bytes);
    if (item->cause.empty() || std::find(told.begin(), told.end(), item->cause) != told.end()) continue;
    out += " (" + item->cause + ")";
    told.push_back(item->cause);
  }
  return out;
}

CPUTRAIN_DECL const memory_item* memory_bill::biggest() const {
  const auto sorted = by_size();
  return sorted.empty() ? nullptr : sorted.front();
}

CPUTRAIN_DECL void require_memory(const memory_bill& bill, const memory_allowance& allowance, std::string_view who) {
  if (allowance.available == memory_allowance::unlimited || bill.total() <= static_cast<double>(allowance.available))
    return;
  const memory_item* big = bill.biggest();
  std::string what(who);
  what += ": ";
  if (big != nullptr && !big->cause.empty()) what += big->cause + " ";
  what += "needs about " + format_bytes(peak_bytes(bill, allowance)) + " of memory; this machine allows " +
          format_bytes(static_cast<double>(allowance.total())) + " (" + allowance.source + ", with the " +
          format_bytes(static_cast<double>(allowance.resident)) + " this process holds). Nothing was allocated; it " +
          "would take " + bill.breakdown_with_causes(big != nullptr ? big->cause : std::string()) +
          ". Make the model, the batch or the sequences smaller, or run where there is more memory";
  throw insufficient_memory(what);
}

#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain
