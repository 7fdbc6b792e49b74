// A bound on how deeply JSON from outside may nest, for every reader of small JSON files (config.json,
// tokenizer_config.json, run_qa's arguments file).
//
//   json_nesting_limit<Json>(on_too_deep)   a parser callback for Json::parse (nlohmann::json or ordered_json) that
//                                           calls on_too_deep() — which must throw the reader's own error, naming
//                                           its file — at the first value nested deeper than json_max_nesting
//
// Why: nlohmann parses any depth without recursion, but copying a value or printing it (as error messages do)
// recurses once per level, so a hostile file of a million nested brackets would overflow the stack (found by the
// fuzz targets' deep-nesting regressions, tests/fuzz). No file these readers take nests beyond 3 levels, and
// Python's json gives up near 1000.
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
