// The replay main of the fuzz targets: <name>_replay [--optional] FILE|DIRECTORY... runs every file given (a
// directory: every file in it, recursively, in sorted order) through the target's LLVMFuzzerTestOneInput once, as
// libFuzzer would, without libFuzzer — so the committed reproducers (tests/fuzz/regressions/<name>/) and the seed
// corpus (tests/fuzz/corpus/<name>/) are checked in every build, GCC's and the sanitizer presets' included. A
// finding aborts (or escapes as an exception) with the file's name printed just before; exit 0 means all passed.
// It cannot pass on nothing: a path that does not exist, a directory without files, or no input at all exits 1.
// "--optional" before a path lets that one be missing or empty (a target with no reproducers yet).
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
  bool optional = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--optional") {
      optional = true;
      continue;
    }
    const fs::path arg = argv[i];
    const std::size_t before = files.size();
    if (fs::is_directory(arg)) {
      for (const auto& entry : fs::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    }
    if (files.size() == before) {
      if (!optional) {
        std::fprintf(stderr, "replay: %s: %s\n", argv[i],
                     fs::exists(arg) ? "holds no input file" : "no such file or directory");
        return 1;
      }
      std::fprintf(stderr, "replay: %s: no input (optional)\n", argv[i]);
    }
    optional = false;
  }
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input to replay\n");
    return 1;
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
