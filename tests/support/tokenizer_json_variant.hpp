// A tokenizer.json with one section replaced, written where a test loads it: how the reference tests try each
// normalizer or post-processor that scripts/make_*_reference.cjs tried on the same base file.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace cputrain::test {

/// Writes `base` with `section` (a top-level key) set to `value` as `dir`/variant-<index>.json; returns that path.
inline std::filesystem::path write_tokenizer_json_variant(const nlohmann::ordered_json& base, const char* section,
                                                          const nlohmann::json& value, int index,
                                                          const std::filesystem::path& dir) {
  auto json = base;
  json[section] = value;
  const auto file = dir / ("variant-" + std::to_string(index) + ".json");
  std::ofstream(file) << json.dump();
  return file;
}

}  // namespace cputrain::test
