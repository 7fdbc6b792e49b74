// cputrain::text::byte_trie — a fixed set of byte strings, each with a value, walked one byte at a time: the
// Unigram model's vocabulary (every token that starts at a position, in one walk) and the added tokens (the longest
// one that starts at a position, in as many steps as its length, however many the tokenizer has). The nodes sit in
// one array, each node's children consecutive and sorted by byte, the root's looked up directly.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace cputrain::text {

class byte_trie {
 public:
  static constexpr std::uint32_t root = 0;
  static constexpr std::uint32_t no_node = 0xFFFFFFFFu;

  /// Which value a key that the set holds twice keeps.
  enum class repeated_key { keeps_first, keeps_last };

  /// An empty set.
  byte_trie() : byte_trie(0, [](std::size_t) { return std::string_view(); }, repeated_key::keeps_last) {}

  /// The keys key_of(0) ... key_of(count - 1) (each a std::string_view, alive during the call), key i with value i.
  template <class KeyOf>
  byte_trie(std::size_t count, KeyOf key_of, repeated_key repeats) {
    std::vector<std::uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::string_view(key_of(a)) < std::string_view(key_of(b));
    });
    build(order, [&](std::uint32_t i) { return std::string_view(key_of(i)); }, repeats);
  }

  /// The node below `node` by byte `c`, or no_node.
  [[nodiscard]] std::uint32_t child(std::uint32_t node, unsigned char c) const noexcept {
    if (node == root) return root_children_[c];
    const trie_node& n = nodes_[node];
    const auto* first = nodes_.data() + n.first_child;
    const auto* last = first + n.child_count;
    const auto* it = std::lower_bound(first, last, c, [](const trie_node& t, unsigned char v) { return t.label < v; });
    return it != last && it->label == c ? static_cast<std::uint32_t>(it - nodes_.data()) : no_node;
  }

  /// The value of the key that ends at `node`, or -1 where none does.
  [[nodiscard]] std::int32_t value(std::uint32_t node) const noexcept { return nodes_[node].value; }

  /// The value of `key`, if the set holds it.
  [[nodiscard]] std::optional<std::int32_t> find(std::string_view key) const noexcept {
    std::uint32_t node = root;
    for (const char c : key) {
      node = child(node, static_cast<unsigned char>(c));
      if (node == no_node) return std::nullopt;
    }
    if (nodes_[node].value < 0) return std::nullopt;
    return nodes_[node].value;
  }

  /// The longest non-empty key that `text` starts with: its value and length, or {-1, 0}.
  [[nodiscard]] std::pair<std::int32_t, std::size_t> longest_prefix(std::string_view text) const noexcept {
    std::pair<std::int32_t, std::size_t> best{-1, 0};
    std::uint32_t node = root;
    for (std::size_t i = 0; i < text.size(); ++i) {
      node = child(node, static_cast<unsigned char>(text[i]));
      if (node == no_node) break;
      if (nodes_[node].value >= 0) best = {nodes_[node].value, i + 1};
    }
    return best;
  }

 private:
  struct trie_node {
    std::uint32_t first_child = 0;
    std::uint32_t child_count = 0;
    std::int32_t value = -1;
    unsigned char label = 0;
  };

  // Breadth first over the keys in byte order: each node's children are the runs of the keys below it that share
  // the next byte, so they come out consecutive and sorted.
  template <class Key>
  void build(const std::vector<std::uint32_t>& order, Key key, repeated_key repeats) {
    struct pending {
      std::uint32_t node, lo, hi, depth;
    };
    std::vector<pending> queue{{root, 0, static_cast<std::uint32_t>(order.size()), 0}};
    nodes_.assign(1, trie_node{});
    for (std::size_t q = 0; q < queue.size(); ++q) {
      auto [node, lo, hi, depth] = queue[q];
      for (; lo < hi && key(order[lo]).size() == depth; ++lo)  // equal keys in index order (the sort is stable)
        if (repeats == repeated_key::keeps_last || nodes_[node].value < 0)
          nodes_[node].value = static_cast<std::int32_t>(order[lo]);
      nodes_[node].first_child = static_cast<std::uint32_t>(nodes_.size());
      for (std::uint32_t i = lo; i < hi;) {
        const char c = key(order[i])[depth];
        std::uint32_t j = i;
        while (j < hi && key(order[j])[depth] == c) ++j;
        trie_node t;
        t.label = static_cast<unsigned char>(c);
        queue.push_back({static_cast<std::uint32_t>(nodes_.size()), i, j, depth + 1});
        nodes_.push_back(t);
        ++nodes_[node].child_count;
        i = j;
      }
    }
    root_children_.fill(no_node);
    for (std::uint32_t k = 0; k < nodes_[root].child_count; ++k) {
      const std::uint32_t c = nodes_[root].first_child + k;
      root_children_[nodes_[c].label] = c;
    }
  }

  std::vector<trie_node> nodes_;
  std::array<std::uint32_t, 256> root_children_{};
};

}  // namespace cputrain::text
