// cputrain::test::field_count<T>() — how many fields an aggregate has (its base class counting as one), found as
// the longest brace initializer T accepts: lets a test check that a table of a struct's fields names them all.
#pragma once

#include <cstddef>
#include <utility>

namespace cputrain::test {

namespace detail {

/// Any one initializer: converts to whatever the field it initializes is. Declared only, for requires-expressions.
struct any_initializer {
  template <class T>
  operator T() const;
};

template <class T, std::size_t... I>
constexpr bool brace_initializable_from(std::index_sequence<I...>) {
  return requires { T{(void(I), any_initializer{})...}; };
}

}  // namespace detail

/// The number of initializers T{...} takes at most: an aggregate's fields (an array field counts as its elements).
template <class T, std::size_t N = 0>
constexpr std::size_t field_count() {
  if constexpr (detail::brace_initializable_from<T>(std::make_index_sequence<N + 1>())) {
    return field_count<T, N + 1>();
  } else {
    return N;
  }
}

}  // namespace cputrain::test
