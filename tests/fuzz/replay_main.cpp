// The replay main of the fuzz targets: <name>_replay FILE|DIRECTORY... runs every file given (a directory: every
// file in it, recursively, in sorted order) through the target's LLVMFuzzerTestOneInput once, as libFuzzer would,
// without libFuzzer — so the committed reproducers (tests/fuzz/regressions/<name>/) and the seed corpus
// (tests/fuzz/corpus/<name>/) are checked in every build, GCC's and the sanitizer presets' included. A finding
// aborts (or escapes as an exception) with the file's name printed just before; exit 0 means all passed.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (fs::is_directory(arg)) {
      for (const auto& entry : fs::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    } else if (!fs::exists(arg)) {
      std::fprintf(stderr, "%s: no such file or directory (skipped)\n", argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot open\n", file.c_str());
      return 1;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
    // A copy of exactly `size` bytes, so a read past the end is caught by ASan as it is under libFuzzer.
    std::vector<std::uint8_t> input(bytes.begin(), bytes.end());
    const auto* data = input.empty() ? nullptr : input.data();
    (void)LLVMFuzzerTestOneInput(data, input.size());
  }
  std::printf("replay: %zu inputs passed\n", files.size());
  return 0;
}
