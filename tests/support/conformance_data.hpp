// Finds the conformance data (the bert-base-uncased vocab.txt, Hugging Face's SQuAD test files) that CTest points
// to with CPUTRAIN_TEST_DATA_DIR. A test that needs a file and cannot find it is reported skipped, naming the file
// or the variable that is missing (support/skip.hpp): a build outside the project's workspace shows these tests as
// skipped, never as passed. With CPUTRAIN_TEST_DATA_REQUIRED=1 (set by scripts/test.sh under CI) it fails instead.
#pragma once

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "support/skip.hpp"

namespace cputrain::test {

/// The paths of `relative` (one or more files) under CPUTRAIN_TEST_DATA_DIR. When one is missing: nullopt, after
/// reporting the test case skipped with every missing file named, so the caller must return at once:
///   const auto files = conformance_files({"bert-base-uncased/vocab.txt", "squad/sample.json"});
///   if (!files) return;  // reported skipped
///   const auto& [vocab, sample] = *files;
/// With CPUTRAIN_TEST_DATA_REQUIRED=1 in the environment a missing file fails the test case instead.
template <std::size_t N>
std::optional<std::array<std::filesystem::path, N>> conformance_files(const char* const (&relative)[N]) {
  std::array<std::filesystem::path, N> paths;
  std::string missing;
  const char* dir = std::getenv("CPUTRAIN_TEST_DATA_DIR");
  if (dir == nullptr || *dir == '\0') {
    missing = "CPUTRAIN_TEST_DATA_DIR is not set (it names the folder holding";
    for (std::size_t i = 0; i < N; ++i) missing += std::string(i == 0 ? " " : ", ") + relative[i];
    missing += "; the project's workspace has it in ../shared/data)";
  } else {
    for (std::size_t i = 0; i < N; ++i) {
      paths[i] = std::filesystem::path(dir) / relative[i];
      std::error_code ec;
      if (std::filesystem::is_regular_file(paths[i], ec)) continue;
      missing += (missing.empty() ? "" : ", ") + paths[i].string();
    }
    if (!missing.empty()) missing += std::string(" missing (CPUTRAIN_TEST_DATA_DIR=") + dir + ")";
  }
  if (missing.empty()) return paths;
  const char* required = std::getenv("CPUTRAIN_TEST_DATA_REQUIRED");
  if (required != nullptr && std::string(required) == "1") {
    FAIL("no conformance data, and CPUTRAIN_TEST_DATA_REQUIRED=1: " << missing);
  }
  report_skipped("no conformance data: " + missing);
  return std::nullopt;
}

/// conformance_files for one file.
inline std::optional<std::filesystem::path> conformance_file(const std::string& relative) {
  const char* const one[] = {relative.c_str()};
  const auto paths = conformance_files(one);
  if (!paths) return std::nullopt;
  return (*paths)[0];
}

}  // namespace cputrain::test
