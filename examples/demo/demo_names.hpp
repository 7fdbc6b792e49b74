// The demo's names of people, towns, companies and rivers, and which split each belongs to: a train and an eval
// split draw from disjoint combinations of name pieces, so evaluation asks about names training never saw.
#pragma once

#include <array>
#include <cstddef>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "demo/demo_rng.hpp"
#include "demo/demo_words.hpp"

namespace cputrain::demo {

/// Which part of the name space a dataset draws its entities from: no eval name occurs in train data.
enum class demo_split { train, eval };

namespace detail {

inline bool demo_in_eval(std::size_t i, std::size_t j) { return (i + j) % 4 == 0; }

inline std::string demo_capitalized(std::string_view s) {
  std::string out(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

/// A start piece and an ending, capitalized.
template <std::size_t S, std::size_t E>
std::string demo_join(const std::array<std::string_view, S>& starts, const std::array<std::string_view, E>& ends,
                      std::size_t i, std::size_t j) {
  std::string name = demo_capitalized(starts[i]);
  name += ends[j];
  return name;
}

/// Draws the names of one paragraph, never the same one twice, from `split`'s part of each name space.
class demo_names {
 public:
  demo_names(demo_rng& rng, demo_split split) : rng_(rng), eval_(split == demo_split::eval) {}

  /// A person; with `last_index`, one of that family (a sibling).
  std::string person(std::size_t last_index = npos) {
    for (;;) {
      const std::size_t first = rng_.below(first_count), last = last_index == npos ? rng_.below(last_count) : last_index;
      if (demo_in_eval(first, last) != eval_) continue;
      // No two people of a paragraph share a first name, nor (outside a family) a last name.
      if (first_used_.count(first) != 0 || (last_index == npos && last_used_.count(last) != 0)) continue;
      first_used_.insert(first);
      last_used_.insert(last);
      last_ = last;
      return first_name(first) + " " + last_name(last);
    }
  }
  /// The last-name index of the person drawn last.
  [[nodiscard]] std::size_t last_family() const noexcept { return last_; }

  std::string town() { return piece_name(demo_town_starts, demo_town_ends, towns_); }
  std::string river() { return piece_name(demo_river_starts, demo_river_ends, others_); }
  std::string company() {
    std::string name = piece_name(demo_company_starts, demo_company_ends, others_);
    name += ' ';
    name += rng_.pick(std::span<const std::string_view>(demo_company_kinds));
    return name;
  }

  static constexpr std::size_t first_count = demo_first_starts.size() * demo_first_ends.size();
  static constexpr std::size_t last_count = demo_last_starts.size() * demo_last_ends.size();
  static std::string first_name(std::size_t k) {
    return demo_join(demo_first_starts, demo_first_ends, k / demo_first_ends.size(), k % demo_first_ends.size());
  }
  static std::string last_name(std::size_t k) {
    return demo_join(demo_last_starts, demo_last_ends, k / demo_last_ends.size(), k % demo_last_ends.size());
  }

 private:
  static constexpr std::size_t npos = ~std::size_t{0};

  template <std::size_t S, std::size_t E>
  std::string piece_name(const std::array<std::string_view, S>& starts, const std::array<std::string_view, E>& ends,
                         std::set<std::string>& used) {
    for (;;) {
      const std::size_t i = rng_.below(S), j = rng_.below(E);
      if (demo_in_eval(i, j) != eval_) continue;
      std::string name = demo_join(starts, ends, i, j);
      if (used.insert(name).second) return name;
    }
  }

  demo_rng& rng_;
  bool eval_;
  std::set<std::size_t> first_used_, last_used_;
  std::set<std::string> towns_, others_;
  std::size_t last_ = 0;
};

}  // namespace detail
}  // namespace cputrain::demo
