// Whether a checkpoint still holds what was written: checkpoint_damage(dir)
// opens its model and optimizer files and checks every tensor against the
// checksum written with it (io/tensor_checksum.hpp) and reads
// trainer_state.json; newest_intact_checkpoint and intact_checkpoint_advice
// find and name the checkpoint to resume from instead of a damaged one. Nothing
// is ever deleted: the choice stays the user's.
#pragma once

#include "cputrain/train/checkpoint.hpp"

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/safetensors.hpp"
#include "cputrain/train/trainer_state.hpp"

namespace cputrain::train {

/// The files of a checkpoint whose tensors carry checksums.
inline constexpr std::array<std::string_view, 2> checkpoint_tensor_files = {"model.safetensors",
                                                                            "optimizer.safetensors"};

/// What is wrong with checkpoint `dir` (the first problem found, as the reader
/// words it), or nothing when its tensor files open and match their checksums
/// and its trainer_state.json reads.
[[nodiscard]] CPUTRAIN_DECL std::optional<std::string> checkpoint_damage(const std::filesystem::path& dir);

/// The newest complete checkpoint of `output_dir`, other than `except`, without
/// damage; nothing when none is. Newest first, so a run with many checkpoints
/// reads only as many as it must.
[[nodiscard]] CPUTRAIN_DECL std::optional<std::filesystem::path> newest_intact_checkpoint(
    const std::filesystem::path& output_dir, const std::filesystem::path& except);

/// The end of the message for a checkpoint `damaged` that cannot be resumed
/// from: the newest intact checkpoint beside it and how to use it, or that none
/// of the others is intact ("" when there are no others).
[[nodiscard]] CPUTRAIN_DECL std::string intact_checkpoint_advice(const std::filesystem::path& damaged);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::optional<std::string> checkpoint_damage(const std::filesystem::path& dir) {
  try {
    for (const std::string_view file : checkpoint_tensor_files)
      io::safetensors_file::open(dir / file).verify_checksums();
    (void)trainer_state::read(dir / checkpoint_state_file);
  } catch (const cputrain::error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

CPUTRAIN_DECL std::optional<std::filesystem::path> newest_intact_checkpoint(const std::filesystem::path& output_dir,
                                                                         const std::filesystem::path& except) {
  const auto all = list_checkpoints(output_dir);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (it->filename() != except.filename() && !checkpoint_damage(*it)) return *it;
  }
  return std::nullopt;
}

CPUTRAIN_DECL std::string intact_checkpoint_advice(const std::filesystem::path& damaged) {
  const std::filesystem::path output_dir = damaged.parent_path();
  if (const auto intact = newest_intact_checkpoint(output_dir, damaged)) {
    return "; the newest intact checkpoint is " + intact->string() +
           ": name it with --resume_from_checkpoint, or move the damaged one "
           "away";
  }
  std::string others;
  for (const auto& dir : list_checkpoints(output_dir))
    if (dir.filename() != damaged.filename()) others += (others.empty() ? "" : ", ") + dir.filename().string();
  if (others.empty()) return {};
  return "; no other checkpoint is intact either (" + others +
         " beside it are damaged too): there is none to resume from";
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
