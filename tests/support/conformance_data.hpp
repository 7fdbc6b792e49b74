// Finds the conformance data (the bert-base-uncased vocab.txt, Hugging Face's SQuAD test files) that CTest points
// to with CPUTRAIN_TEST_DATA_DIR. A test that needs a file and cannot find it says "skipped: no conformance data"
// and passes, so a build outside the project's workspace still passes; CI always has the data.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace cputrain::test {

/// The path of `relative` under CPUTRAIN_TEST_DATA_DIR, or nullopt (after a WARN saying the test skipped).
inline std::optional<std::filesystem::path> conformance_file(const std::string& relative) {
  const char* dir = std::getenv("CPUTRAIN_TEST_DATA_DIR");
  if (dir == nullptr || *dir == '\0') {
    WARN("skipped: no conformance data (set CPUTRAIN_TEST_DATA_DIR to the folder holding " << relative << ")");
    return std::nullopt;
  }
  const std::filesystem::path file = std::filesystem::path(dir) / relative;
  if (!std::filesystem::exists(file)) {
    WARN("skipped: no conformance data (" << file.string() << " does not exist)");
    return std::nullopt;
  }
  return file;
}

}  // namespace cputrain::test
