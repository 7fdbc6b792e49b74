// Tests for include/cputrain/train/checkpoint_integrity.hpp and resuming through it: a tiny model trained with
// checkpoints at steps 2 and 4, then a byte flipped inside one tensor's data. Resuming from the damaged checkpoint
// must fail with an io_error naming the checkpoint, the file and the tensor, and point at the newest checkpoint
// whose files still match their checksums — or say that none does.
#include "cputrain/train/checkpoint_integrity.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/train/qa_trainer.hpp"
#include "support/tiny_qa_run.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace checkpoint_integrity_test {

namespace ct = cputrain;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using model_type = ct::nn::bert_qa<ct::policy<ct::precision::fp32>>;

namespace {

// The shared tiny model and features (four demo paragraphs), with this file's training arguments.
struct tiny_run : ct::test::tiny_qa_run {
  tiny_run() : tiny_qa_run("cputrain-checkpoint-integrity", 4) {}

  [[nodiscard]] fs::path out() const { return dir.path() / "out"; }

  [[nodiscard]] ct::train::training_options args(std::int64_t max_steps) const {
    ct::train::training_options a;
    a.output_dir = out().string();
    a.per_device_train_batch_size = 4;
    a.learning_rate = 1e-3;
    a.max_steps = max_steps;
    a.logging_steps = 1;
    a.save_steps = 2;
    a.disable_tqdm = true;
    return a;
  }

  // What resuming from `checkpoint` (towards step 6) throws, or a note that it
  // did not.
  [[nodiscard]] std::string resume_error(const fs::path& checkpoint) const {
    model_type model(config, 11);
    ct::train::qa_trainer<model_type::policy_type> trainer(model, args(6));
    try {
      trainer.train(features, checkpoint);
    } catch (const ct::io::io_error& e) {
      return e.what();
    }
    return "<resume did not throw>";
  }
};

// Flips one bit in the middle of tensor `name`'s data in safetensors file
// `file`, found from the header.
void flip_a_byte(const fs::path& file, const std::string& name) {
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  const auto header = nlohmann::json::parse(bytes.substr(8, header_size));
  const auto begin = header.at(name).at("data_offsets")[0].get<std::uint64_t>();
  const auto end = header.at(name).at("data_offsets")[1].get<std::uint64_t>();
  bytes[8 + header_size + (begin + end) / 2] ^= 0x04;
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE(
    "resuming from a checkpoint with a flipped byte names it, the file, "
    "the tensor and the newest intact one") {
  tiny_run run;
  {
    model_type model(run.config, 7);
    ct::train::qa_trainer<model_type::policy_type> trainer(model, run.args(4));
    trainer.train(run.features);
  }
  const fs::path older = run.out() / "checkpoint-2", newer = run.out() / "checkpoint-4";
  REQUIRE(ct::train::list_checkpoints(run.out()) == std::vector<fs::path>{older, newer});
  CHECK_FALSE(ct::train::checkpoint_damage(newer).has_value());
  CHECK(ct::train::newest_intact_checkpoint(run.out(), older) == newer);

  const std::string tensor = "exp_avg_sq.bert.encoder.layer.0.attention.self.query.weight";
  flip_a_byte(newer / "optimizer.safetensors", tensor);
  const auto damage = ct::train::checkpoint_damage(newer);
  REQUIRE(damage.has_value());
  CHECK_THAT(*damage, Contains((newer / "optimizer.safetensors").string()) && Contains("\"" + tensor + "\""));
  CHECK(ct::train::newest_intact_checkpoint(run.out(), newer) == older);
  CHECK_FALSE(ct::train::newest_intact_checkpoint(run.out(), older).has_value());

  const std::string message = run.resume_error(newer);
  INFO(message);
  CHECK_THAT(message, Contains((newer / "optimizer.safetensors").string()) && Contains("tensor \"" + tensor + "\"") &&
                          Contains("does not match the checksum written with it") &&
                          Contains("cannot resume from " + newer.string()) &&
                          Contains("the newest intact checkpoint is " + older.string()) &&
                          Contains("--resume_from_checkpoint"));

  SECTION(
      "with the older checkpoint damaged too, none is intact and the "
      "message says so") {
    const std::string weight = "qa_outputs.weight";
    flip_a_byte(older / "model.safetensors", weight);
    CHECK_THAT(ct::train::checkpoint_damage(older).value_or(""), Contains("\"" + weight + "\""));
    const std::string both = run.resume_error(newer);
    INFO(both);
    CHECK_THAT(both, Contains("tensor \"" + tensor + "\"") && Contains("no other checkpoint is intact") &&
                         Contains("checkpoint-2"));
    CHECK_THAT(both, !Contains("the newest intact checkpoint"));
    // And from the older one: its own file and tensor, and the newer one named
    // as damaged as well.
    const std::string from_older = run.resume_error(older);
    INFO(from_older);
    CHECK_THAT(from_older, Contains((older / "model.safetensors").string()) && Contains("tensor \"" + weight + "\"") &&
                               Contains("no other checkpoint is intact") && Contains("checkpoint-4"));
  }
}

}  // namespace checkpoint_integrity_test
