// save_metrics — Hugging Face Trainer's save_metrics: <split>_results.json with the split's metrics, merged into
// all_results.json, both sorted by key with a four-space indent as transformers writes them; and log_metrics's
// table on the console ("***** eval metrics *****").
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/atomic_file.hpp"

namespace cputrain::train {

CPUTRAIN_DECL void save_metrics(const std::filesystem::path& output_dir, const std::string& split,
                                const nlohmann::json& metrics);

CPUTRAIN_DECL void log_metrics(const std::string& split, const nlohmann::json& metrics, std::FILE* out = stdout);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void save_metrics(const std::filesystem::path& output_dir, const std::string& split,
                                const nlohmann::json& metrics) {
  // nlohmann::json (not ordered_json) keeps keys sorted: json.dump(..., sort_keys=True).
  io::write_file_atomically(output_dir / (split + "_results.json"), metrics.dump(4) + "\n");
  nlohmann::json all = nlohmann::json::object();
  const auto all_path = output_dir / "all_results.json";
  if (std::ifstream in(all_path); in) {
    try {
      all = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception&) {
      all = nlohmann::json::object();  // a damaged summary is rebuilt from this run's splits
    }
    if (!all.is_object()) all = nlohmann::json::object();
  }
  all.update(metrics);
  io::write_file_atomically(all_path, all.dump(4) + "\n");
}

CPUTRAIN_DECL void log_metrics(const std::string& split, const nlohmann::json& metrics, std::FILE* out) {
  std::fprintf(out, "***** %s metrics *****\n", split.c_str());
  for (const auto& [key, value] : metrics.items()) std::fprintf(out, "  %-28s = %s\n", key.c_str(), value.dump().c_str());
  std::fflush(out);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
