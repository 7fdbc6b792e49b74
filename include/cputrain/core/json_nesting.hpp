// json_nesting_limit<Json>(on_too_deep): a parser callback for nlohmann's Json::parse that calls on_too_deep()
// (which throws the reader's own error) at the first value nested deeper than json_max_nesting. Every reader of
// small JSON files from outside uses it: copying or printing deep JSON recurses once per level.
#pragma once

#include <utility>

namespace cputrain {

inline constexpr int json_max_nesting = 100;

template <class Json, class OnTooDeep>
[[nodiscard]] typename Json::parser_callback_t json_nesting_limit(OnTooDeep on_too_deep) {
  return [on_too_deep = std::move(on_too_deep)](int depth, typename Json::parse_event_t, Json&) {
    if (depth >= json_max_nesting) on_too_deep();  // depth counts from 0: the outermost value is depth 0
    return true;
  };
}

}  // namespace cputrain
