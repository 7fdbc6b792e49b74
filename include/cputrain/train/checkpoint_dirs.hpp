// The directories of Hugging Face's checkpoint layout (output_dir/checkpoint-<step>/) without the code that writes
// them: their names, what an interrupted save leaves behind and how it is recovered, the complete checkpoints by
// step. Apart from train/checkpoint.hpp (which writes them, with the safetensors and optimizer code) so that what
// only looks at an output directory (train/output_dir.hpp) does not compile the writer.
#pragma once

#include "cputrain/io/atomic_file.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::train {

inline constexpr std::string_view checkpoint_prefix = "checkpoint-";
/// The file whose presence marks a checkpoint directory as one of ours (written last, before the rename).
inline constexpr std::string_view checkpoint_state_file = "trainer_state.json";

/// The step of a directory named checkpoint-<digits>, or nullopt.
CPUTRAIN_DECL std::optional<std::int64_t> checkpoint_step(const std::filesystem::path& dir);

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
CPUTRAIN_DECL void replace_by_renames(const std::filesystem::path& final_dir, const std::filesystem::path& tmp_dir,
                                      const std::filesystem::path& old_dir,
                                      const std::function<void(int)>& after = {});

}  // namespace detail

/// Finishes or undoes a re-save of step N that a kill cut between its two renames (tmp-old-checkpoint-N beside no
/// whole checkpoint-N): the new tmp-checkpoint-N goes into place when it is whole, else the old one goes back. Run
/// at start by the process that owns `output_dir`, before it lists checkpoints; what is left over is removed by the
/// next save.
CPUTRAIN_DECL void finish_interrupted_replacements(const std::filesystem::path& output_dir);

/// finish_interrupted_replacements, then every other leftover of a killed save (a checkpoint being written,
/// replaced or rotated away) removed: what save_checkpoint does first, so that only whole checkpoint-N remain.
CPUTRAIN_DECL void recover_checkpoints(const std::filesystem::path& output_dir);

/// output_dir/checkpoint-<step>.
inline std::filesystem::path checkpoint_path(const std::filesystem::path& output_dir, std::int64_t step) {
  return detail::checkpoint_dir(output_dir, "", step);
}

/// Complete checkpoints of `output_dir` (checkpoint-N directories holding trainer_state.json), by step.
CPUTRAIN_DECL std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& output_dir);

inline std::optional<std::filesystem::path> last_checkpoint(const std::filesystem::path& output_dir) {
  auto all = list_checkpoints(output_dir);
  if (all.empty()) return std::nullopt;
  return all.back();
}

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL std::optional<std::int64_t> checkpoint_step(const std::filesystem::path& dir) {
  const std::string name = dir.filename().string();
  if (!name.starts_with(checkpoint_prefix) || name.size() == checkpoint_prefix.size()) return std::nullopt;
  std::int64_t step = 0;
  const char* first = name.data() + checkpoint_prefix.size();
  const char* last = name.data() + name.size();
  const auto [end, ec] = std::from_chars(first, last, step);
  if (ec != std::errc{} || end != last || step < 0) return std::nullopt;
  return step;
}

namespace detail {

CPUTRAIN_DECL void replace_by_renames(const std::filesystem::path& final_dir, const std::filesystem::path& tmp_dir,
                                      const std::filesystem::path& old_dir, const std::function<void(int)>& after) {
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

CPUTRAIN_DECL void finish_interrupted_replacements(const std::filesystem::path& output_dir) {
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

CPUTRAIN_DECL void recover_checkpoints(const std::filesystem::path& output_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return;
  finish_interrupted_replacements(output_dir);
  for (fs::directory_iterator it(output_dir, ec), end; !ec && it != end; it.increment(ec))
    if (is_checkpoint_leftover(it->path().filename().string())) fs::remove_all(it->path(), ec);
}

CPUTRAIN_DECL std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& output_dir) {
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
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
