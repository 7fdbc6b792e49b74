// Tests for include/cputrain/train/output_dir.hpp: an output directory that cannot be made (a file in the way)
// is refused naming it, an incomplete checkpoint is never resumed from and is named when it is all there is,
// and the lock keeps a second holder out.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "cputrain/train/output_dir.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace output_dir_test {

using namespace cputrain;
using namespace cputrain::train;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
output_dir_options training_into(const fs::path& dir) {
  output_dir_options args;
  args.output_dir = dir.string();
  args.do_train = true;
  return args;
}
}  // namespace

TEST_CASE("an output directory with a file in its place or above it is refused naming both") {
  test::temp_dir tmp;
  const fs::path file = tmp.path() / "notes.txt";
  std::ofstream(file) << "keep";
  CHECK_THROWS_WITH(create_output_dir(file), Contains("--output_dir " + file.string()) && Contains("not a directory"));
  CHECK_THROWS_AS(create_output_dir(file / "out"), usage_error);
  CHECK_THROWS_WITH(create_output_dir(file / "a" / "out"),
                    Contains((file / "a" / "out").string()) && Contains(file.string() + " is a file"));
  std::ifstream in(file);
  std::string text;
  in >> text;
  CHECK(text == "keep");
  create_output_dir(tmp.path() / "new" / "deeper");
  CHECK(fs::is_directory(tmp.path() / "new" / "deeper"));
}

TEST_CASE("an incomplete checkpoint is never resumed from, and is named when no complete one is there") {
  test::temp_dir tmp;
  const fs::path out = tmp.path() / "out";
  fs::create_directories(out / "checkpoint-10");
  std::ofstream(out / "checkpoint-10" / "trainer_state.json") << "{}";
  fs::create_directories(out / "checkpoint-20");  // model files, but no trainer_state.json
  std::ofstream(out / "checkpoint-20" / "model.safetensors") << "x";
  fs::create_directories(out / "tmp-checkpoint-30");  // a crash while writing
  std::ofstream(out / "tmp-checkpoint-30" / "trainer_state.json") << "{}";
  CHECK(prepare_output_dir(training_into(out)) == out / "checkpoint-10");

  fs::remove_all(out / "checkpoint-10");
  CHECK_THROWS_WITH(prepare_output_dir(training_into(out)),
                    Contains("--output_dir " + out.string()) && Contains("holds no checkpoint to resume from") &&
                        Contains("checkpoint-20 has no trainer_state.json"));
  CHECK(fs::exists(out / "checkpoint-20" / "model.safetensors"));  // refusing deletes nothing
}

TEST_CASE("a second lock on the same output directory is refused while the first is held") {
  test::temp_dir tmp;
  std::optional<output_dir_lock> first;
  first.emplace(tmp.path());
  // flock locks belong to the open file description, so a second open in the same process conflicts too.
  CHECK_THROWS_WITH(output_dir_lock(tmp.path()),
                    Contains("--output_dir " + tmp.path().string()) && Contains("another run is using this directory"));
  first.reset();
  CHECK_NOTHROW(output_dir_lock(tmp.path()));
}

TEST_CASE("a directory holding only a killed first save starts afresh, and a user's file is still refused") {
  test::temp_dir tmp;
  const fs::path out = tmp.path() / "out";
  fs::create_directories(out / "tmp-checkpoint-1");  // SIGKILL during the very first save
  std::ofstream(out / "tmp-checkpoint-1" / "model.safetensors") << "x";
  std::ofstream(out / ".cputrain.lock");
  CHECK(prepare_output_dir(training_into(out)) == std::nullopt);  // no refusal as "not empty", nothing to resume
  std::ofstream(out / "notes.txt") << "keep";
  CHECK_THROWS_WITH(prepare_output_dir(training_into(out)), Contains("already exists and is not empty"));
}

}  // namespace output_dir_test
