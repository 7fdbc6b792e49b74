#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <set>
#include <string>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/train/checkpoint.hpp"
#include "cputrain/train/trainer_state.hpp"
#include "support/temp_dir.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace checkpoint_test {

using namespace cputrain;
using namespace cputrain::train;
namespace fs = std::filesystem;

namespace {
void touch(const fs::path& file) { std::ofstream(file) << "x"; }
void fake_checkpoint(const fs::path& dir) {
  fs::create_directories(dir);
  touch(dir / "trainer_state.json");
}
}  // namespace

TEST_CASE("checkpoint names parse as transformers names them") {
  CHECK(checkpoint_step("out/checkpoint-500") == 500);
  CHECK(checkpoint_step("checkpoint-0") == 0);
  CHECK_FALSE(checkpoint_step("checkpoint-"));
  CHECK_FALSE(checkpoint_step("checkpoint-12a"));
  CHECK_FALSE(checkpoint_step("tmp-checkpoint-12"));
  CHECK_FALSE(checkpoint_step("checkpoint--3"));
}

TEST_CASE("only complete checkpoints count and the newest is found by step, not by name") {
  test::temp_dir out;
  fake_checkpoint(out.path() / "checkpoint-90");
  fake_checkpoint(out.path() / "checkpoint-100");
  fs::create_directories(out.path() / "checkpoint-200");  // no trainer_state.json: a crash before it was written
  fake_checkpoint(out.path() / "tmp-checkpoint-300");
  const auto all = list_checkpoints(out.path());
  REQUIRE(all.size() == 2);
  CHECK(all[0].filename() == "checkpoint-90");
  CHECK(last_checkpoint(out.path())->filename() == "checkpoint-100");
  test::temp_dir empty;
  CHECK_FALSE(last_checkpoint(empty.path()));
}

TEST_CASE("a checkpoint appears whole or not at all and rotation keeps the newest") {
  test::temp_dir out;
  save_checkpoint(out.path(), 10, [](const fs::path& dir) { touch(dir / "a"), touch(dir / "trainer_state.json"); });
  CHECK(fs::exists(out.path() / "checkpoint-10" / "a"));
  // A writer that fails half-way leaves nothing behind, and the earlier checkpoint untouched.
  CHECK_THROWS_AS(save_checkpoint(out.path(), 20,
                                  [](const fs::path& dir) {
                                    touch(dir / "a");
                                    throw std::runtime_error("disk full");
                                  }),
                  std::runtime_error);
  CHECK_FALSE(fs::exists(out.path() / "checkpoint-20"));
  CHECK_FALSE(fs::exists(out.path() / "tmp-checkpoint-20"));
  CHECK(fs::exists(out.path() / "checkpoint-10" / "a"));
  // Leftovers of a crash are cleared by the next save; the same step saved twice is replaced whole.
  fake_checkpoint(out.path() / "tmp-checkpoint-99");
  save_checkpoint(out.path(), 10, [](const fs::path& dir) { touch(dir / "b"), touch(dir / "trainer_state.json"); });
  CHECK_FALSE(fs::exists(out.path() / "tmp-checkpoint-99"));
  CHECK(fs::exists(out.path() / "checkpoint-10" / "b"));
  CHECK_FALSE(fs::exists(out.path() / "checkpoint-10" / "a"));
  for (int step : {20, 30, 40}) save_checkpoint(out.path(), step, [](const fs::path& d) { touch(d / "trainer_state.json"); });
  rotate_checkpoints(out.path(), 2);
  const auto kept = list_checkpoints(out.path());
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].filename() == "checkpoint-30");
  CHECK(kept[1].filename() == "checkpoint-40");
}

TEST_CASE("AdamW state survives a round trip by parameter name and refuses another model's") {
  nn::bert_config config;
  config.vocab_size = 50;
  config.hidden_size = 8;
  config.num_hidden_layers = 1;
  config.num_attention_heads = 2;
  config.intermediate_size = 16;
  config.max_position_embeddings = 16;
  nn::bert_qa<> model(config, 1);
  optim::adamw<> a(model.params().size(), model.table().ranges());
  std::vector<float> grads(model.params().size());
  for (std::size_t i = 0; i < grads.size(); ++i) grads[i] = static_cast<float>(i % 7) * 0.01f - 0.03f;
  a.step(model.params(), grads, 1e-3);
  a.step(model.params(), grads, 1e-3);
  test::temp_dir dir;
  save_optimizer_state(a, model.table(), dir.path() / "optimizer.safetensors");
  optim::adamw<> b(model.params().size(), model.table().ranges());
  load_optimizer_state(b, model.table(), dir.path() / "optimizer.safetensors");
  CHECK(b.step_count() == 2);
  // Every tensor's moments come back exactly (the alignment padding between tensors is not saved).
  std::size_t compared = 0, nonzero = 0;
  for (const auto& p : model.table().entries()) {
    for (std::size_t i = p.offset; i < p.offset + p.size; ++i) {
      REQUIRE(a.exp_avg()[i] == b.exp_avg()[i]);
      REQUIRE(a.exp_avg_sq()[i] == b.exp_avg_sq()[i]);
      nonzero += a.exp_avg()[i] != 0.0f;
      ++compared;
    }
  }
  CHECK(compared > 1000);
  CHECK(nonzero > compared / 2);
  config.hidden_size = 12;
  config.num_attention_heads = 3;
  nn::bert_qa<> other(config, 1);
  optim::adamw<> c(other.params().size(), other.table().ranges());
  CHECK_THROWS_AS(load_optimizer_state(c, other.table(), dir.path() / "optimizer.safetensors"), io::io_error);
}

TEST_CASE("trainer_state round-trips exactly, losses included") {
  trainer_state s;
  s.global_step = 120;
  s.epoch = 2.5;
  s.max_steps = 300;
  s.loss_since_log = 0.1 + 0.2;  // not a short decimal: must come back bit for bit
  s.total_loss = 1.0 / 3.0;
  s.steps_since_log = 7;
  s.epochs_done = 2;
  s.batches_in_epoch = 11;
  s.world_size = 4;
  s.log_history.push_back({{"loss", 1.5}, {"step", 100}});
  test::temp_dir dir;
  s.write(dir.path() / "trainer_state.json");
  const auto r = trainer_state::read(dir.path() / "trainer_state.json");
  CHECK(r.global_step == 120);
  CHECK(r.epoch == 2.5);
  CHECK(r.loss_since_log == s.loss_since_log);
  CHECK(r.total_loss == s.total_loss);
  CHECK(r.batches_in_epoch == 11);
  CHECK(r.world_size == 4);
  REQUIRE(r.log_history.size() == 1);
  CHECK(r.log_history[0]["step"] == 100);
  std::ofstream(dir.path() / "bad.json") << R"({"global_step": "x"})";
  CHECK_THROWS_AS(trainer_state::read(dir.path() / "bad.json"), io::io_error);

  // A checkpoint written before world_size was recorded came from one process.
  auto j = nlohmann::json::parse(std::ifstream(dir.path() / "trainer_state.json"));
  j["cputrain"].erase("world_size");
  std::ofstream(dir.path() / "old.json") << j.dump();
  CHECK(trainer_state::read(dir.path() / "old.json").world_size == 1);
  j["cputrain"]["world_size"] = 0;
  std::ofstream(dir.path() / "zero.json") << j.dump();
  CHECK_THROWS_AS(trainer_state::read(dir.path() / "zero.json"), io::io_error);
}

TEST_CASE("a checkpoint that cannot be written (a full disk) says so naming it, keeps nothing of it, and no other") {
  test::temp_dir out;
  save_checkpoint(out.path(), 10, [](const fs::path& dir) { touch(dir / "trainer_state.json"); });
  const fs::path tmp = out.path() / "tmp-checkpoint-20";
  std::string message = "<no error>";
  try {
    save_checkpoint(out.path(), 20, [](const fs::path& dir) {
      touch(dir / "model.safetensors");
      throw io::io_error("cannot write " + (dir / "optimizer.safetensors").string() + ": No space left on device");
    });
  } catch (const io::io_error& e) {
    message = e.what();
  }
  CHECK_THAT(message, Catch::Contains((out.path() / "checkpoint-20").string() + " was not saved") &&
                          Catch::Contains((tmp / "optimizer.safetensors").string() + ": No space left on device"));
  CHECK_FALSE(fs::exists(tmp));
  CHECK_FALSE(fs::exists(out.path() / "checkpoint-20"));
  CHECK(last_checkpoint(out.path()) == out.path() / "checkpoint-10");
}

TEST_CASE("a save clears what a killed save or rotation left, and replacing a step never leaves it missing") {
  test::temp_dir out;
  save_checkpoint(out.path(), 10, [](const fs::path& dir) { touch(dir / "a"), touch(dir / "trainer_state.json"); });
  // What a SIGKILL leaves: a checkpoint being written, and one being deleted by rotation (renamed, half removed).
  fake_checkpoint(out.path() / "tmp-checkpoint-11");
  fake_checkpoint(out.path() / "tmp-deleting-checkpoint-5");
  CHECK(list_checkpoints(out.path()).size() == 1);  // neither counts as a checkpoint
  // The same step saved again: the writer sees checkpoint-10 still in place while it writes its replacement.
  save_checkpoint(out.path(), 10, [&](const fs::path& dir) {
    CHECK(fs::exists(out.path() / "checkpoint-10" / "a"));
    touch(dir / "b"), touch(dir / "trainer_state.json");
  });
  CHECK(fs::exists(out.path() / "checkpoint-10" / "b"));
  CHECK_FALSE(fs::exists(out.path() / "checkpoint-10" / "a"));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out.path())) names.push_back(entry.path().filename().string());
  CHECK(names == std::vector<std::string>{"checkpoint-10"});  // no tmp-checkpoint-*, tmp-deleting-*, tmp-old-*
  CHECK(is_checkpoint_leftover("tmp-checkpoint-11"));
  CHECK(is_checkpoint_leftover("tmp-deleting-checkpoint-5"));
  CHECK_FALSE(is_checkpoint_leftover("checkpoint-10"));
  CHECK_FALSE(is_checkpoint_leftover("tmp-notes"));
}

namespace {

// checkpoint-7 as an earlier run left it ("old") and its replacement, whole, in tmp-checkpoint-7 ("new").
void two_versions_of_step_7(const fs::path& out) {
  for (const auto& [dir, version] : {std::pair{"checkpoint-7", "old"}, std::pair{"tmp-checkpoint-7", "new"}}) {
    fs::create_directories(out / dir);
    std::ofstream(out / dir / "model.safetensors") << version;
    std::ofstream(out / dir / "optimizer.safetensors") << version;
    std::ofstream(out / dir / "trainer_state.json") << version;
  }
}

// "old" or "new" when checkpoint-7 holds exactly one version's three files, else what is wrong.
std::string version_of_step_7(const fs::path& out) {
  std::set<std::string> versions;
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out / "checkpoint-7")) {
    std::ifstream in(entry.path());
    std::string text;
    in >> text;
    versions.insert(text);
    ++files;
  }
  if (files != 3 || versions.size() != 1) return "a mix of " + std::to_string(files) + " files";
  return *versions.begin();
}

// Runs the two-rename replacement in a child killed by SIGKILL right after step `kill_after` (0: before any).
void kill_replacement_after(const fs::path& out, int kill_after, bool half_removed) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const auto kill_here = [&](int step) {
      if (half_removed && step == 2) fs::remove(out / "tmp-old-checkpoint-7" / "model.safetensors");
      if (step == kill_after) ::raise(SIGKILL);
    };
    kill_here(0);
    cputrain::train::detail::replace_by_renames(out / "checkpoint-7", out / "tmp-checkpoint-7",
                                                out / "tmp-old-checkpoint-7", kill_here);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  if (kill_after <= 3) {
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(WTERMSIG(status) == SIGKILL);
  }
}

}  // namespace

TEST_CASE("a re-save killed at any point of the two-rename fallback leaves the old or the new step, never an orphan") {
  struct point {
    int kill_after;
    bool half_removed;
    const char* expected;
  };
  // 0: before the first rename; 1: old moved aside, new not yet in place (only tmp- names exist); 2: new in place,
  // old not yet removed (or half removed); 3: done; 4: not killed.
  for (const point p : {point{0, false, "old"}, point{1, false, "new"}, point{2, false, "new"}, point{2, true, "new"},
                        point{3, false, "new"}, point{4, false, "new"}}) {
    INFO("killed after step " << p.kill_after << (p.half_removed ? " with the old one half removed" : ""));
    test::temp_dir out;
    two_versions_of_step_7(out.path());
    kill_replacement_after(out.path(), p.kill_after, p.half_removed);
    finish_interrupted_replacements(out.path());  // what the next start does first
    CHECK(version_of_step_7(out.path()) == p.expected);
    CHECK(list_checkpoints(out.path()) == std::vector<fs::path>{out.path() / "checkpoint-7"});
    recover_checkpoints(out.path());  // what the next save does first
    CHECK(version_of_step_7(out.path()) == p.expected);
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(out.path())) names.push_back(entry.path().filename().string());
    CHECK(names == std::vector<std::string>{"checkpoint-7"});
    CHECK(list_checkpoints(out.path()) == std::vector<fs::path>{out.path() / "checkpoint-7"});
  }
}

TEST_CASE("a stranded old checkpoint whose replacement is incomplete is put back, and a superseded one removed") {
  test::temp_dir out;
  two_versions_of_step_7(out.path());
  fs::rename(out.path() / "checkpoint-7", out.path() / "tmp-old-checkpoint-7");
  fs::remove(out.path() / "tmp-checkpoint-7" / "trainer_state.json");  // the new one never finished
  recover_checkpoints(out.path());
  CHECK(version_of_step_7(out.path()) == "old");
  CHECK_FALSE(fs::exists(out.path() / "tmp-checkpoint-7"));

  fake_checkpoint(out.path() / "tmp-old-checkpoint-7");  // beside a whole checkpoint-7: the swap had finished
  recover_checkpoints(out.path());
  CHECK(version_of_step_7(out.path()) == "old");
  CHECK_FALSE(fs::exists(out.path() / "tmp-old-checkpoint-7"));
  CHECK(is_checkpoint_leftover("tmp-old-checkpoint-7"));
}

TEST_CASE("with the fallback forced, a re-save replaces the step whole and leaves nothing else") {
  test::temp_dir out;
  ::setenv("CPUTRAIN_CHECKPOINT_RENAME_FALLBACK", "1", 1);
  save_checkpoint(out.path(), 3, [](const fs::path& dir) { touch(dir / "a"), touch(dir / "trainer_state.json"); });
  save_checkpoint(out.path(), 3, [](const fs::path& dir) { touch(dir / "b"), touch(dir / "trainer_state.json"); });
  ::unsetenv("CPUTRAIN_CHECKPOINT_RENAME_FALLBACK");
  CHECK(fs::exists(out.path() / "checkpoint-3" / "b"));
  CHECK_FALSE(fs::exists(out.path() / "checkpoint-3" / "a"));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out.path())) names.push_back(entry.path().filename().string());
  CHECK(names == std::vector<std::string>{"checkpoint-3"});
}

}  // namespace checkpoint_test
