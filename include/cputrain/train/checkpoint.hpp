// Checkpoints as Hugging Face's Trainer lays them out (output_dir/checkpoint-<step>/), made crash-safe: written into
// tmp-checkpoint-<step>/, synced, renamed into place; a crash leaves no checkpoint-<step> or a whole one
// (docs/training.md, "Checkpoints and resuming"). save_checkpoint, list_checkpoints, last_checkpoint,
// rotate_checkpoints (after the new one is in place), and AdamW's moments by parameter name in safetensors.
#pragma once

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

#include "cputrain/io/atomic_file.hpp"
#include "cputrain/io/io_error.hpp"
#include "cputrain/io/safetensors.hpp"
#include "cputrain/nn/parameters.hpp"
#include "cputrain/optim/adamw.hpp"

namespace cputrain::train {

inline constexpr std::string_view checkpoint_prefix = "checkpoint-";
/// The file whose presence marks a checkpoint directory as one of ours (written last, before the rename).
inline constexpr std::string_view checkpoint_state_file = "trainer_state.json";

/// The step of a directory named checkpoint-<digits>, or nullopt.
inline std::optional<std::int64_t> checkpoint_step(const std::filesystem::path& dir) {
  const std::string name = dir.filename().string();
  if (!name.starts_with(checkpoint_prefix) || name.size() == checkpoint_prefix.size()) return std::nullopt;
  std::int64_t step = 0;
  const char* first = name.data() + checkpoint_prefix.size();
  const char* last = name.data() + name.size();
  const auto [end, ec] = std::from_chars(first, last, step);
  if (ec != std::errc{} || end != last || step < 0) return std::nullopt;
  return step;
}

/// Whether an entry of output_dir named `name` is what an interrupted save leaves behind: tmp-checkpoint-<N> (being
/// written), tmp-old-checkpoint-<N> (the checkpoint a re-save of step N was replacing) or
/// tmp-deleting-checkpoint-<N> (an old checkpoint that rotate_checkpoints was deleting). Never a checkpoint:
/// recover_checkpoints turns them back into one or removes them, and prepare_output_dir does not count them as
/// content.
inline bool is_checkpoint_leftover(std::string_view name) {
  return name.starts_with("tmp-checkpoint-") || name.starts_with("tmp-old-checkpoint-") ||
         name.starts_with("tmp-deleting-checkpoint-");
}

namespace detail {

inline std::filesystem::path checkpoint_dir(const std::filesystem::path& output_dir, std::string_view prefix,
                                            std::int64_t step) {
  return output_dir / (std::string(prefix) + std::string(checkpoint_prefix) + std::to_string(step));
}

/// Replaces checkpoint-N (`final_dir`) by the complete tmp-checkpoint-N (`tmp_dir`) with two renames, for file
/// systems without RENAME_EXCHANGE: the old one moves to tmp-old-checkpoint-N first, so that a kill at any point
/// leaves checkpoint-N whole, or tmp-old- and tmp- whole for recover_checkpoints to finish. `after(k)` runs after
/// step k (1: old moved aside, 2: new in place, 3: old removed); tests kill the process there.
inline void replace_by_renames(const std::filesystem::path& final_dir, const std::filesystem::path& tmp_dir,
                               const std::filesystem::path& old_dir, const std::function<void(int)>& after = {}) {
  std::error_code ec;
  std::filesystem::remove_all(old_dir, ec);
  std::filesystem::rename(final_dir, old_dir);
  if (after) after(1);
  std::filesystem::rename(tmp_dir, final_dir);
  if (after) after(2);
  std::filesystem::remove_all(old_dir, ec);
  if (after) after(3);
}

}  // namespace detail

/// Finishes or undoes a re-save of step N that a kill cut between its two renames (tmp-old-checkpoint-N beside no
/// whole checkpoint-N): the new tmp-checkpoint-N goes into place when it is whole, else the old one goes back. Run
/// at start by the process that owns `output_dir`, before it lists checkpoints; what is left over is removed by the
/// next save.
inline void finish_interrupted_replacements(const std::filesystem::path& output_dir) {
  namespace fs = std::filesystem;
  constexpr std::string_view old_prefix = "tmp-old-";
  std::error_code ec;
  std::vector<fs::path> stranded;
  for (fs::directory_iterator it(output_dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().starts_with(old_prefix)) stranded.push_back(it->path());
  bool moved = false;
  for (const auto& old_dir : stranded) {
    const auto step = checkpoint_step(old_dir.filename().string().substr(old_prefix.size()));
    if (!step) continue;
    const fs::path final_dir = detail::checkpoint_dir(output_dir, "", *step);
    if (fs::exists(final_dir / checkpoint_state_file, ec)) continue;  // the swap finished: old is a leftover
    for (const auto& whole : {detail::checkpoint_dir(output_dir, "tmp-", *step), old_dir}) {
      if (!fs::exists(whole / checkpoint_state_file, ec)) continue;
      fs::remove_all(final_dir, ec);
      fs::rename(whole, final_dir, ec);
      if (!ec) {
        moved = true;
        break;
      }
    }
  }
  if (moved) io::sync_directory(output_dir, output_dir.string());
}

/// finish_interrupted_replacements, then every other leftover of a killed save (a checkpoint being written,
/// replaced or rotated away) removed: what save_checkpoint does first, so that only whole checkpoint-N remain.
inline void recover_checkpoints(const std::filesystem::path& output_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return;
  finish_interrupted_replacements(output_dir);
  for (fs::directory_iterator it(output_dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_checkpoint_leftover(it->path().filename().string())) fs::remove_all(it->path(), ec);
}

/// Complete checkpoints of `output_dir` (checkpoint-N directories holding trainer_state.json), by step.
inline std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& output_dir) {
  std::vector<std::pair<std::int64_t, std::filesystem::path>> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(output_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto step = checkpoint_step(it->path());
    if (step && it->is_directory() && std::filesystem::exists(it->path() / checkpoint_state_file))
      found.emplace_back(*step, it->path());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::filesystem::path> out;
  for (auto& [step, path] : found) out.push_back(std::move(path));
  return out;
}

inline std::optional<std::filesystem::path> last_checkpoint(const std::filesystem::path& output_dir) {
  auto all = list_checkpoints(output_dir);
  if (all.empty()) return std::nullopt;
  return all.back();
}

/// CPUTRAIN_CHECKPOINT_RENAME_FALLBACK=1 makes re-saves take the two-rename path even where RENAME_EXCHANGE
/// works, so that the fault drills exercise it on any file system.
inline bool force_rename_fallback() {
  const char* value = std::getenv("CPUTRAIN_CHECKPOINT_RENAME_FALLBACK");
  return value != nullptr && std::string_view(value) == "1";
}

/// Writes checkpoint-<step> of `output_dir` through `write(dir)`, atomically as described above; returns its path.
inline std::filesystem::path save_checkpoint(const std::filesystem::path& output_dir, std::int64_t step,
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

/// Deletes the oldest complete checkpoints of `output_dir` until at most `limit` remain (limit >= 1).
inline void rotate_checkpoints(const std::filesystem::path& output_dir, std::size_t limit) {
  auto all = list_checkpoints(output_dir);
  std::error_code ec;
  for (std::size_t i = 0; i + limit < all.size(); ++i) {
    // Renamed first so that a crash halfway through deleting never leaves a partial checkpoint-N behind.
    const auto doomed = output_dir / ("tmp-deleting-" + all[i].filename().string());
    std::filesystem::rename(all[i], doomed, ec);
    std::filesystem::remove_all(ec ? all[i] : doomed, ec);
  }
}

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

}  // namespace cputrain::train
