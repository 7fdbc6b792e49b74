// cputrain::train::trainer_state — the progress of a training run as Hugging Face's Trainer records it in
// trainer_state.json (global_step, epoch, log_history, ...), plus what cputrain needs to resume bit for bit: the
// data position inside the epoch and the loss summed since the last log entry. Written into every checkpoint and
// into output_dir at the end; read back on resume.
#pragma once

#include "cputrain/io/io_error.hpp"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/atomic_file.hpp"

namespace cputrain::train {

struct trainer_state {
  // Hugging Face's fields.
  std::int64_t global_step = 0;
  double epoch = 0.0;  // fractional: epochs completed plus the part of the current one
  std::int64_t max_steps = 0;
  std::int64_t num_train_epochs = 0;
  std::int64_t logging_steps = 500;
  std::int64_t save_steps = 500;
  std::int64_t train_batch_size = 8;
  double total_flos = 0.0;
  std::vector<nlohmann::ordered_json> log_history;
  /// The best evaluation so far by the ranked metric (best_model.hpp), its step and its checkpoint once saved.
  std::optional<double> best_metric;
  std::optional<std::int64_t> best_global_step;
  std::optional<std::string> best_model_checkpoint;
  std::int64_t eval_steps = 500;
  /// EarlyStoppingCallback's arguments (unset: no early stopping) and its count of evaluations without improvement.
  std::optional<std::int64_t> early_stopping_patience;
  double early_stopping_threshold = 0.0;
  std::int64_t early_stopping_patience_counter = 0;
  // cputrain's, to resume exactly where the run stopped.
  std::int64_t epochs_done = 0;       // whole epochs finished
  std::int64_t batches_in_epoch = 0;  // batches of the current epoch already consumed
  double loss_since_log = 0.0;        // summed step losses since the last log entry
  std::int64_t steps_since_log = 0;
  double total_loss = 0.0;            // summed step losses of the whole run (train_loss = total / steps)
  std::int64_t world_size = 1;        // processes that shared each batch: with train_batch_size, the position in
                                      // samples, so that a run can resume with another number of processes

  [[nodiscard]] nlohmann::ordered_json to_json() const;

  /// Reads trainer_state.json; io_error naming the file and the key for anything missing or mistyped.
  static trainer_state read(const std::filesystem::path& file);

  /// EarlyStoppingCallback's saved state, where there is one.
  static void read_early_stopping(const nlohmann::ordered_json& j, trainer_state& s);

  void write(const std::filesystem::path& file) const;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL nlohmann::ordered_json trainer_state::to_json() const {
  nlohmann::ordered_json j;
  j["best_global_step"] = best_global_step ? nlohmann::ordered_json(*best_global_step) : nullptr;
  j["best_metric"] = best_metric ? nlohmann::ordered_json(*best_metric) : nullptr;
  j["best_model_checkpoint"] = best_model_checkpoint ? nlohmann::ordered_json(*best_model_checkpoint) : nullptr;
  j["epoch"] = epoch;
  j["eval_steps"] = eval_steps;
  j["global_step"] = global_step;
  j["is_hyper_param_search"] = false;
  j["is_local_process_zero"] = true;
  j["is_world_process_zero"] = true;
  j["log_history"] = log_history;
  j["logging_steps"] = logging_steps;
  j["max_steps"] = max_steps;
  j["num_input_tokens_seen"] = 0;
  j["num_train_epochs"] = num_train_epochs;
  j["save_steps"] = save_steps;
  j["stateful_callbacks"] = nlohmann::ordered_json::object();
  if (early_stopping_patience) {
    j["stateful_callbacks"]["EarlyStoppingCallback"] = {
        {"args", {{"early_stopping_patience", *early_stopping_patience},
                  {"early_stopping_threshold", early_stopping_threshold}}},
        {"attributes", {{"early_stopping_patience_counter", early_stopping_patience_counter}}}};
  }
  j["total_flos"] = total_flos;
  j["train_batch_size"] = train_batch_size;
  j["trial_name"] = nullptr;
  j["trial_params"] = nullptr;
  j["cputrain"] = {{"epochs_done", epochs_done},
                   {"batches_in_epoch", batches_in_epoch},
                   {"loss_since_log", loss_since_log},
                   {"steps_since_log", steps_since_log},
                   {"total_loss", total_loss},
                   {"world_size", world_size}};
  return j;
}

CPUTRAIN_DECL trainer_state trainer_state::read(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw io::io_error(file.string() + ": cannot open");
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(in);
    trainer_state s;
    s.global_step = j.at("global_step").get<std::int64_t>();
    s.epoch = j.at("epoch").get<double>();
    s.max_steps = j.at("max_steps").get<std::int64_t>();
    s.num_train_epochs = j.at("num_train_epochs").get<std::int64_t>();
    s.logging_steps = j.at("logging_steps").get<std::int64_t>();
    s.save_steps = j.at("save_steps").get<std::int64_t>();
    s.train_batch_size = j.at("train_batch_size").get<std::int64_t>();
    s.total_flos = j.value("total_flos", 0.0);
    s.eval_steps = j.value("eval_steps", std::int64_t{500});
    if (const auto it = j.find("best_metric"); it != j.end() && !it->is_null()) s.best_metric = it->get<double>();
    if (const auto it = j.find("best_global_step"); it != j.end() && !it->is_null())
      s.best_global_step = it->get<std::int64_t>();
    if (const auto it = j.find("best_model_checkpoint"); it != j.end() && !it->is_null())
      s.best_model_checkpoint = it->get<std::string>();
    read_early_stopping(j, s);
    for (const auto& entry : j.at("log_history")) s.log_history.push_back(entry);
    const auto& mine = j.at("cputrain");
    s.epochs_done = mine.at("epochs_done").get<std::int64_t>();
    s.batches_in_epoch = mine.at("batches_in_epoch").get<std::int64_t>();
    s.loss_since_log = mine.at("loss_since_log").get<double>();
    s.steps_since_log = mine.at("steps_since_log").get<std::int64_t>();
    s.total_loss = mine.at("total_loss").get<double>();
    s.world_size = mine.value("world_size", std::int64_t{1});
    if (s.global_step < 0 || s.epochs_done < 0 || s.batches_in_epoch < 0 || s.steps_since_log < 0)
      throw io::io_error(file.string() + ": negative step counts");
    if (s.world_size < 1 || s.train_batch_size < 1)
      throw io::io_error(file.string() + ": world_size and train_batch_size must be at least 1");
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw io::io_error(file.string() + ": not a cputrain trainer_state.json: " + e.what());
  }
}

CPUTRAIN_DECL void trainer_state::read_early_stopping(const nlohmann::ordered_json& j, trainer_state& s) {
  const auto callbacks = j.find("stateful_callbacks");
  if (callbacks == j.end() || !callbacks->contains("EarlyStoppingCallback")) return;
  const auto& early = callbacks->at("EarlyStoppingCallback");
  s.early_stopping_patience = early.at("args").at("early_stopping_patience").get<std::int64_t>();
  s.early_stopping_threshold = early.at("args").at("early_stopping_threshold").get<double>();
  s.early_stopping_patience_counter =
      early.at("attributes").at("early_stopping_patience_counter").get<std::int64_t>();
}

CPUTRAIN_DECL void trainer_state::write(const std::filesystem::path& file) const {
  io::write_file_atomically(file, to_json().dump(2) + "\n");
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
