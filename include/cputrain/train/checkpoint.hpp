// Checkpoints as Hugging Face's Trainer lays them out (output_dir/checkpoint-<step>/), made crash-safe: written into
// tmp-checkpoint-<step>/, synced, renamed into place; a crash leaves no checkpoint-<step> or a whole one
// (docs/training.md, "Checkpoints and resuming"). save_checkpoint, rotate_checkpoints (after the new one is in
// place), and AdamW's moments by parameter name in safetensors; the names, listing and recovery of the directories
// are train/checkpoint_dirs.hpp.
#pragma once

#include "cputrain/nn/parameters.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/atomic_file.hpp"
#include "cputrain/io/io_error.hpp"
#include "cputrain/io/safetensors.hpp"
#include "cputrain/optim/adamw.hpp"
#include "cputrain/train/best_model.hpp"
#include "cputrain/train/checkpoint_dirs.hpp"

namespace cputrain::train {

/// CPUTRAIN_CHECKPOINT_RENAME_FALLBACK=1 makes re-saves take the two-rename path even where RENAME_EXCHANGE
/// works, so that the fault drills exercise it on any file system.
inline bool force_rename_fallback() {
  const char* value = std::getenv("CPUTRAIN_CHECKPOINT_RENAME_FALLBACK");
  return value != nullptr && std::string_view(value) == "1";
}

/// Writes checkpoint-<step> of `output_dir` through `write(dir)`, atomically as described above; returns its path.
CPUTRAIN_DECL std::filesystem::path save_checkpoint(const std::filesystem::path& output_dir, std::int64_t step,
                                                    const std::function<void(const std::filesystem::path&)>& write);

/// Deletes the oldest complete checkpoints of `output_dir` until at most `limit` remain (limit >= 1), never `best`
/// (the best model's checkpoint: best_model.hpp's order).
CPUTRAIN_DECL void rotate_checkpoints(const std::filesystem::path& output_dir, std::size_t limit,
                                      const std::optional<std::filesystem::path>& best = {});

/// AdamW's state as optimizer.safetensors: "exp_avg.<name>" and "exp_avg_sq.<name>" per parameter, F32, and the
/// step count in the metadata.
template <class Alloc>
void save_optimizer_state(const optim::adamw<Alloc>& optimizer, const nn::parameter_table& table,
                          const std::filesystem::path& file) {
  io::safetensors_writer writer;
  for (const auto& p : table.entries()) {
    writer.add_borrowed("exp_avg." + p.name, io::dtype::f32, p.shape,
                        std::as_bytes(optimizer.exp_avg().subspan(p.offset, p.size)));
    writer.add_borrowed("exp_avg_sq." + p.name, io::dtype::f32, p.shape,
                        std::as_bytes(optimizer.exp_avg_sq().subspan(p.offset, p.size)));
  }
  writer.set_metadata("step", std::to_string(optimizer.step_count()));
  writer.write(file);
}

/// Reads what save_optimizer_state wrote; io_error naming the file and the tensor for anything that does not fit
/// `table` (a checkpoint of another model).
template <class Alloc>
void load_optimizer_state(optim::adamw<Alloc>& optimizer, const nn::parameter_table& table,
                          const std::filesystem::path& file) {
  const auto f = io::safetensors_file::open(file);
  f.verify_checksums();
  const auto meta = f.metadata();
  const auto step_it = meta.find("step");
  std::uint64_t step = 0;
  if (step_it == meta.end() ||
      std::from_chars(step_it->second.data(), step_it->second.data() + step_it->second.size(), step).ec != std::errc{})
    throw io::io_error(file.string() + ": no \"step\" in the metadata (not a cputrain optimizer state)");
  std::vector<float> exp_avg(table.total_size()), exp_avg_sq(table.total_size());
  for (const auto& p : table.entries()) {
    for (const auto& [prefix, target] : {std::pair{"exp_avg.", &exp_avg}, std::pair{"exp_avg_sq.", &exp_avg_sq}}) {
      const std::string name = prefix + p.name;
      if (!f.contains(name)) throw io::io_error(file.string() + ": no tensor \"" + name + "\"");
      if (f.info(name).shape != p.shape)
        throw io::io_error(file.string() + ": tensor \"" + name + "\" has shape " + io::detail::shape_text(f.info(name).shape) +
                           ", the model's parameter has " + io::detail::shape_text(p.shape));
      f.read_float(name, std::span<float>(*target).subspan(p.offset, p.size));
    }
  }
  optimizer.load_state(step, exp_avg, exp_avg_sq);
}

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::filesystem::path save_checkpoint(const std::filesystem::path& output_dir, std::int64_t step,
                                                    const std::function<void(const std::filesystem::path&)>& write) {
  namespace fs = std::filesystem;
  const fs::path final_dir = detail::checkpoint_dir(output_dir, "", step);
  const fs::path tmp_dir = detail::checkpoint_dir(output_dir, "tmp-", step);
  std::error_code ec;
  // A crash's leftovers. tmp-deleting-checkpoint-* too: tests/examples/fault_test.sh kill-during-save found them
  // piling up, a whole checkpoint's size each, when a kill landed during rotation.
  recover_checkpoints(output_dir);
  fs::create_directories(tmp_dir, ec);
  if (ec) throw io::io_error(tmp_dir.string() + ": cannot create the checkpoint directory: " + ec.message());
  try {
    try {
      write(tmp_dir);
    } catch (const io::io_error& e) {
      // A full or failing disk: say that no part of this checkpoint stands in for a whole one and that the
      // earlier ones are still there to resume from (the handlers below remove the tmp- directory).
      throw io::io_error(final_dir.string() +
                         " was not saved (nothing of it is kept; earlier checkpoints are untouched): " + e.what());
    }
    io::sync_directory(tmp_dir, tmp_dir.string());
    if (fs::exists(final_dir)) {  // the same step saved again (a resumed run): replace it whole
      // One atomic swap, so that no moment exists without a checkpoint-<step>; the old one then sits under the
      // tmp- name, a leftover the next save removes if a crash comes first. File systems without
      // RENAME_EXCHANGE get two renames, whose gap recover_checkpoints closes on the next start.
      if (!force_rename_fallback() &&
          ::renameat2(AT_FDCWD, tmp_dir.c_str(), AT_FDCWD, final_dir.c_str(), RENAME_EXCHANGE) == 0) {
        fs::remove_all(tmp_dir, ec);
      } else {
        detail::replace_by_renames(final_dir, tmp_dir, detail::checkpoint_dir(output_dir, "tmp-old-", step));
      }
    } else {
      fs::rename(tmp_dir, final_dir);
    }
    io::sync_directory(output_dir, output_dir.string());
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp_dir, ec);
    throw io::io_error(final_dir.string() + ": cannot save the checkpoint: " + e.what());
  } catch (...) {
    fs::remove_all(tmp_dir, ec);
    throw;
  }
  return final_dir;
}

CPUTRAIN_DECL void rotate_checkpoints(const std::filesystem::path& output_dir, std::size_t limit,
                                      const std::optional<std::filesystem::path>& best) {
  auto all = list_checkpoints(output_dir);
  const std::size_t doomed_count = checkpoints_to_delete(all, limit, best);
  std::error_code ec;
  for (std::size_t i = 0; i < doomed_count; ++i) {
    // Renamed first so that a crash halfway through deleting never leaves a partial checkpoint-N behind.
    const auto doomed = output_dir / ("tmp-deleting-" + all[i].filename().string());
    std::filesystem::rename(all[i], doomed, ec);
    std::filesystem::remove_all(ec ? all[i] : doomed, ec);
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
