// cputrain::train::qa_trainer — Hugging Face's Trainer loop for a question-answering model, on the CPU.
//
// train(): every epoch a seeded permutation of the training features (data_order), batches of
// per_device_train_batch_size, gradients accumulated over gradient_accumulation_steps micro-batches (the last
// group of an epoch may be shorter, as in the Trainer), clipped to max_grad_norm, an AdamW step at the schedule's
// learning rate (linear, cosine, constant, constant_with_warmup; warmup_steps or warmup_ratio), bf16 mixed
// precision when the model's policy says so. Every logging_steps a log entry {"loss", "grad_norm",
// "learning_rate", "epoch", "step"} as the Trainer logs it; every save_steps a checkpoint (checkpoint.hpp) with
// everything needed to continue: weights, AdamW's moments, the schedule's step, the data position and the loss
// summed since the last log. A run resumed from a checkpoint therefore ends with bit-identical weights to one that
// never stopped (same thread count): the data order comes from (seed, epoch), dropout from (seed, micro-step).
// A NaN or infinite loss or gradient norm stops training with a training_error naming the step, before any
// weight is touched by it — on every rank together, when it shows on one.
//
// predict(): start and end logits of every feature, in rows of max_seq_length (-100 past a batch's padded
// length, as Hugging Face fills them), ready for data::postprocess_qa_predictions.
//
// Data parallelism comes from the policy's communicator: with a world of more than one process, train() starts
// from rank 0's weights, each rank reads its share of every epoch's order (data_order: one process with batch
// b x world sees, step by step, the union of what the ranks see), gradients of the step's last micro-batch are
// averaged in buckets while backward still runs (distributed/gradient_reducer.hpp; the other micro-batches only
// accumulate), and the logged loss is the mean over ranks, so the log reads as a single process's. Only rank 0
// writes checkpoints and prints; predict() splits the features between ranks and gathers the logits on rank 0.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/data/qa_features.hpp"
#include "cputrain/distributed/gradient_reducer.hpp"
#include "cputrain/distributed/sparse_row_reducer.hpp"
#include "cputrain/io/atomic_file.hpp"
#include "cputrain/io/bert_config_json.hpp"
#include "cputrain/io/model_weights.hpp"
#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/optim/adamw.hpp"
#include "cputrain/optim/grad_clip.hpp"
#include "cputrain/optim/lr_schedule.hpp"
#include "cputrain/train/checkpoint.hpp"
#include "cputrain/train/progress.hpp"
#include "cputrain/train/sampler.hpp"
#include "cputrain/train/termination.hpp"
#include "cputrain/train/trainer_state.hpp"
#include "cputrain/train/training_args.hpp"

namespace cputrain::train {

/// Training cannot go on: the loss or the gradients stopped being finite.
class training_error : public cputrain::error {
 public:
  using cputrain::error::error;
};

/// Hooks a program can hang on the loop (all optional).
struct trainer_callbacks {
  std::function<void(const nlohmann::ordered_json&)> on_log;         // every log entry, as it is recorded
  std::function<void(const trainer_state&)> on_step_end;             // after every optimizer step
  std::function<void(const std::filesystem::path&)> on_save;         // after a checkpoint is in place
  std::function<void(const std::filesystem::path&)> save_tokenizer;  // writes vocab.txt etc. into a directory
  // Once per optimizer step, on every rank, with the step's finished gradients (accumulated and, with several
  // ranks, averaged) and the step about to be taken (1-based), before clipping and the finiteness check: to
  // inspect or change them (gradient noise, a custom clip, injecting a fault in a test). Whatever it leaves there
  // is checked like a computed gradient.
  std::function<void(std::span<float> grads, std::int64_t step)> on_gradients;
};

/// What train() reports, under Hugging Face's train_results.json names.
struct train_result {
  std::int64_t global_step = 0;
  double train_loss = 0.0;
  double train_runtime = 0.0;
  double train_samples_per_second = 0.0;
  double train_steps_per_second = 0.0;
  std::size_t train_samples = 0;
  double epoch = 0.0;
  double total_flos = 0.0;
  // With several processes: seconds the gradient all-reduces took, and how many of them backward did not hide
  // (the wait after the last layer). Written as train_communication_* only then.
  std::size_t world_size = 1;
  double communication_seconds = 0.0;
  double exposed_communication_seconds = 0.0;

  [[nodiscard]] nlohmann::ordered_json to_json() const {
    nlohmann::ordered_json j;
    j["epoch"] = epoch;
    j["total_flos"] = total_flos;
    j["train_loss"] = train_loss;
    j["train_runtime"] = train_runtime;
    j["train_samples"] = train_samples;
    j["train_samples_per_second"] = train_samples_per_second;
    j["train_steps_per_second"] = train_steps_per_second;
    if (world_size > 1) {
      j["train_communication_seconds"] = communication_seconds;
      j["train_communication_exposed_seconds"] = exposed_communication_seconds;
      j["train_communication_hidden"] =
          communication_seconds > 0 ? 1.0 - exposed_communication_seconds / communication_seconds : 1.0;
    }
    return j;
  }
};

/// Start and end logits of features, one row of `row_length` per feature.
struct qa_logits {
  std::vector<float> start, end;
  std::size_t row_length = 0;
};

template <class Policy>
class qa_trainer {
 public:
  using model_type = nn::bert_qa<Policy>;

  using communicator_type = typename Policy::parallel_policy::communicator;

  /// A trainer in a world of one process (the policy's communicator must be default-constructible).
  /// @throws usage_error naming the field when `args` cannot train (training_args::validate_training).
  qa_trainer(model_type& model, const training_args& args, trainer_callbacks callbacks = {})
      : model_(model), args_(checked(args)), callbacks_(std::move(callbacks)),
        own_comm_(std::make_unique<communicator_type>()), comm_(*own_comm_) {}
  /// A trainer whose processes are `comm`'s ranks; every rank constructs one and calls the same members.
  qa_trainer(model_type& model, const training_args& args, communicator_type& comm, trainer_callbacks callbacks = {})
      : model_(model), args_(checked(args)), callbacks_(std::move(callbacks)), comm_(comm) {}

  [[nodiscard]] communicator_type& communicator() noexcept { return comm_; }
  [[nodiscard]] bool is_main_process() const noexcept { return comm_.rank() == 0; }

  /// The optimizer steps, epochs and warmup a run over `features` has, as the Trainer computes them.
  struct plan {
    std::size_t batches_per_epoch = 0;
    std::int64_t steps_per_epoch = 0;
    std::int64_t max_steps = 0;
    std::int64_t epochs = 0;
    std::int64_t warmup_steps = 0;
  };
  [[nodiscard]] plan plan_for(std::size_t features) const {
    const data_order order = order_for(features);
    plan p;
    p.batches_per_epoch = order.batches_per_epoch();
    if (p.batches_per_epoch == 0)
      throw usage_error("--dataloader_drop_last with " + std::to_string(features) + " training features and " +
                        "--per_device_train_batch_size " + std::to_string(args_.per_device_train_batch_size) +
                        " leaves no batch to train on");
    const auto ga = static_cast<std::size_t>(args_.gradient_accumulation_steps);
    p.steps_per_epoch = static_cast<std::int64_t>((p.batches_per_epoch + ga - 1) / ga);
    p.max_steps = args_.max_steps > 0
                      ? args_.max_steps
                      : static_cast<std::int64_t>(std::ceil(args_.num_train_epochs * static_cast<double>(p.steps_per_epoch)));
    p.max_steps = std::max<std::int64_t>(p.max_steps, 1);
    p.epochs = (p.max_steps + p.steps_per_epoch - 1) / p.steps_per_epoch;
    p.warmup_steps = args_.warmup_steps > 0
                         ? args_.warmup_steps
                         : static_cast<std::int64_t>(std::ceil(args_.warmup_ratio * static_cast<double>(p.max_steps)));
    return p;
  }

  /// Trains on `features` (made with labels), from the start or from `resume_from` (a checkpoint directory).
  train_result train(const data::qa_features& features, const std::optional<std::filesystem::path>& resume_from = {}) {
    if (!features.has_labels()) throw usage_error("qa_trainer::train: the features have no answer positions (labels)");
    const plan p = plan_for(features.size());
    data_order order = order_for(features.size());
    if (args_.group_by_length) {
      std::vector<std::uint32_t> lengths;
      lengths.reserve(features.size());
      for (const data::qa_feature& f : features.all()) lengths.push_back(f.length);
      order.group_by_length(lengths, static_cast<std::size_t>(args_.per_device_train_batch_size) * world() *
                                         static_cast<std::size_t>(args_.gradient_accumulation_steps));
    }
    const optim::lr_schedule schedule{optim::parse_schedule(args_.lr_scheduler_type), args_.learning_rate,
                                      p.warmup_steps, p.max_steps};
    optim::adamw_options adam;
    adam.lr = args_.learning_rate;
    adam.beta1 = args_.adam_beta1;
    adam.beta2 = args_.adam_beta2;
    adam.eps = args_.adam_epsilon;
    adam.weight_decay = args_.weight_decay;
    optim::adamw<> optimizer(model_.params().size(), model_.table().ranges(), adam);

    // Resuming takes the saved progress (steps, data position, losses, log history) and this run's settings.
    trainer_state state;
    if (resume_from) {
      try {
        io::load_weights(model_, *resume_from / "model.safetensors", io::weight_loading::exact);
        load_optimizer_state(optimizer, model_.table(), *resume_from / "optimizer.safetensors");
        state = trainer_state::read(*resume_from / checkpoint_state_file);
        if (static_cast<std::uint64_t>(state.global_step) != optimizer.step_count())
          throw io::io_error(resume_from->string() + ": trainer_state.json says step " +
                             std::to_string(state.global_step) + " but the optimizer state has taken " +
                             std::to_string(optimizer.step_count()) + " steps");
      } catch (const io::io_error& e) {
        // A damaged checkpoint (a disk error, a copy cut short) need not end the run's history: say which others
        // there are. Nothing is deleted; the choice is the user's.
        std::string others;
        for (const auto& dir : list_checkpoints(resume_from->parent_path()))
          if (dir.filename() != resume_from->filename()) others += (others.empty() ? "" : ", ") + dir.filename().string();
        throw io::io_error(std::string(e.what()) + "; cannot resume from " + resume_from->string() +
                           (others.empty() ? std::string()
                                           : "; complete checkpoints beside it: " + others +
                                                 " (name one with resume_from_checkpoint, or move the damaged one away)"));
      }
      state.batches_in_epoch = resumed_position(state, *resume_from);
    }
    state.world_size = static_cast<std::int64_t>(world());
    // Every rank starts from rank 0's weights (a model initialised or loaded differently elsewhere is overwritten).
    if (world() > 1) {
      comm_.broadcast(model_.params(), 0);
      model_.parameters_changed();
    }
    // Gradients are averaged in buckets as backward finishes them; the word-embedding table (the first tensor,
    // finished last) by the rows the step used, unless the arguments say otherwise.
    const auto& entries = model_.table().entries();
    const nn::parameter_info* word = model_.table().find("bert.embeddings.word_embeddings.weight");
    const bool sparse_words = world() > 1 && args_.sparse_embedding_gradients && word != nullptr &&
                              word->offset == 0 && entries.size() > 1 && word->shape.size() == 2;
    const std::size_t dense_begin = sparse_words ? entries[1].offset : 0;
    std::optional<dist::basic_gradient_reducer<communicator_type>> reducer;
    std::optional<dist::sparse_row_reducer<communicator_type>> word_reducer;
    std::vector<std::size_t> tensor_offsets;
    for (const nn::parameter_info& info : entries) {
      if (info.offset >= dense_begin) tensor_offsets.push_back(info.offset - dense_begin);
    }
    // Each rank scales its loss by 1 / world (below), so the reducers only sum: no pass to divide.
    dist::reducer_options reduce_options;
    reduce_options.average = false;
    if (world() > 1) reducer.emplace(comm_, model_.grads().subspan(dense_begin), tensor_offsets, reduce_options);
    if (sparse_words)
      word_reducer.emplace(comm_, model_.grads().subspan(0, word->size), static_cast<std::size_t>(word->shape[1]),
                           false);
    const typename model_type::gradients_ready ready = [&](std::size_t offset) {
      reducer->ready_from(offset > dense_begin ? offset - dense_begin : 0);
    };
    double communication_seconds = 0.0, exposed_seconds = 0.0;

    state.max_steps = p.max_steps;
    state.num_train_epochs = p.epochs;
    state.logging_steps = args_.logging_steps;
    state.save_steps = args_.save_steps;
    state.train_batch_size = args_.per_device_train_batch_size;

    const auto ga = static_cast<std::size_t>(args_.gradient_accumulation_steps);
    const std::int64_t first_step = state.global_step;
    progress_bar bar(p.max_steps, first_step, !args_.disable_tqdm && is_main_process());
    const auto started = std::chrono::steady_clock::now();
    const data::qa_padding padding = args_.pad_to_max_length ? data::qa_padding::max_length : data::qa_padding::longest;
    float grad_norm = 0.0f;
    // Work since the last checkpoint, summed over ranks when one is written (a collective all ranks reach together).
    double pending_flos = 0.0;
    const auto sync_flos = [&] {
      state.total_flos += world() > 1 ? comm_.all_reduce_sum(pending_flos) : pending_flos;
      pending_flos = 0.0;
    };
    // Hugging Face's estimate of the work: 6 x input tokens (padding included) x parameters outside the embeddings.
    std::size_t non_embedding_parameters = 0;
    for (const nn::parameter_info& info : model_.table().entries()) {
      if (!info.name.ends_with("_embeddings.weight")) non_embedding_parameters += info.size;
    }

    for (std::int64_t epoch = state.epochs_done; state.global_step < p.max_steps; ++epoch) {
      const auto batches = order.epoch_batches(static_cast<std::uint64_t>(epoch));
      std::size_t b = static_cast<std::size_t>(state.batches_in_epoch);
      double step_loss = 0.0;
      while (b < batches.size() && state.global_step < p.max_steps) {
        // One optimizer step: the accumulation group starting at batch b (shorter at the end of the epoch).
        const std::size_t group = std::min(ga, batches.size() - b);
        model_.zero_grad();
        step_loss = 0.0;
        for (std::size_t micro = 0; micro < group; ++micro, ++b) {
          const nn::qa_batch batch = features.batch(batches[b], padding);
          if (word_reducer) word_reducer->mark(batch.input_ids);
          nn::forward_options fo;
          fo.training = true;
          fo.seed = static_cast<std::uint64_t>(args_.seed);
          // Each rank draws its own dropout masks; a world of one keeps the stream it always had.
          fo.step = (static_cast<std::uint64_t>(state.global_step) * ga + micro) * world() + rank();
          const float loss = model_.forward(batch, fo);
          pending_flos += 6.0 * static_cast<double>(batch.tokens()) * static_cast<double>(non_embedding_parameters);
          if (!std::isfinite(loss) && world() == 1)  // with several ranks, all of them stop together below
            throw training_error("training stopped at step " + std::to_string(state.global_step + 1) + " (epoch " +
                                 std::to_string(epoch) + ", batch " + std::to_string(b) + "): the loss is " +
                                 std::to_string(loss) + "; no weights were changed by this step" + last_saved_hint());
          const bool last_micro = micro + 1 == group;
          model_.backward(1.0f / static_cast<float>(group * world()), reducer && last_micro ? ready : nullptr);
          step_loss += static_cast<double>(loss) / static_cast<double>(group);
        }
        if (reducer) {
          reducer->finish();  // grads now hold the average over ranks
          communication_seconds += reducer->last_step().communication_seconds;
          exposed_seconds += reducer->last_step().exposed_seconds;
          if (word_reducer) {
            const auto started = std::chrono::steady_clock::now();
            word_reducer->reduce();
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            communication_seconds += seconds;
            exposed_seconds += seconds;
          }
          step_loss = comm_.all_reduce_sum(step_loss) / static_cast<double>(world());
          if (!std::isfinite(step_loss))
            throw training_error("training stopped at step " + std::to_string(state.global_step + 1) + " (epoch " +
                                 std::to_string(epoch) + ", batch " + std::to_string(b) +
                                 "): the loss averaged over the ranks is " + std::to_string(step_loss) +
                                 "; no weights were changed by this step" + last_saved_hint());
        }
        if (callbacks_.on_gradients) callbacks_.on_gradients(model_.grads(), state.global_step + 1);
        grad_norm = args_.max_grad_norm > 0 ? optim::clip_grad_norm(model_.grads(), static_cast<float>(args_.max_grad_norm))
                                            : optim::global_norm(model_.grads());
        // Averaged gradients are the same on every rank, so their norms agree — unless something changed one
        // rank's copy (a hook, a faulty memory): the ranks agree on the verdict, so that none of them steps on
        // while another stops and leaves it waiting in the next collective.
        std::int64_t non_finite = std::isfinite(grad_norm) ? 0 : 1;
        if (world() > 1) non_finite = comm_.all_reduce_max(non_finite);
        if (non_finite != 0)
          throw training_error("training stopped at step " + std::to_string(state.global_step + 1) +
                               ": the gradient norm is " +
                               (std::isfinite(grad_norm) ? "not finite on another rank" : std::to_string(grad_norm)) +
                               "; no weights were changed by this step" + last_saved_hint());
        optimizer.step(model_.params(), model_.grads(), schedule.lr(state.global_step));
        model_.parameters_changed();
        ++state.global_step;
        state.batches_in_epoch = static_cast<std::int64_t>(b);
        state.epoch = static_cast<double>(epoch) + static_cast<double>(b) / static_cast<double>(batches.size());
        state.loss_since_log += step_loss;
        ++state.steps_since_log;
        state.total_loss += step_loss;
        if (b == batches.size()) {  // the epoch is done: a checkpoint taken now resumes at the next one
          ++state.epochs_done;
          state.batches_in_epoch = 0;
        }
        bar.update(state.global_step, step_loss);
        if (state.global_step % args_.logging_steps == 0 || state.global_step == p.max_steps) {
          nlohmann::ordered_json entry;
          entry["loss"] = std::round(state.loss_since_log / static_cast<double>(state.steps_since_log) * 1e4) / 1e4;
          entry["grad_norm"] = static_cast<double>(grad_norm);
          entry["learning_rate"] = schedule.lr(state.global_step);
          entry["epoch"] = state.epoch;
          entry["step"] = state.global_step;
          state.log_history.push_back(entry);
          state.loss_since_log = 0.0;
          state.steps_since_log = 0;
          if (is_main_process()) {
            bar.print_above(entry.dump());
            if (callbacks_.on_log) callbacks_.on_log(entry);
          }
        }
        bool saved_now = false;
        if (args_.save_strategy == "steps" && state.global_step % args_.save_steps == 0) {
          sync_flos();
          save(state, optimizer);
          saved_now = true;
        }
        // A termination signal on any rank stops every rank at this step boundary.
        int signal = termination_signal::received();
        if (world() > 1) signal = static_cast<int>(comm_.all_reduce_max(signal));
        if (signal != 0) stop_on_signal(signal, state, optimizer, saved_now, sync_flos);
        if (callbacks_.on_step_end) callbacks_.on_step_end(state);
      }
      if (args_.save_strategy == "epoch" && state.batches_in_epoch == 0) {
        sync_flos();
        save(state, optimizer);
      }
    }
    bar.finish();
    sync_flos();

    train_result r;
    r.global_step = state.global_step;
    r.train_runtime = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    r.train_samples = features.size();
    r.train_loss = state.global_step > 0 ? state.total_loss / static_cast<double>(state.global_step) : 0.0;
    const double steps_run = static_cast<double>(state.global_step - first_step);
    r.train_steps_per_second = r.train_runtime > 0 ? steps_run / r.train_runtime : 0.0;
    r.train_samples_per_second =
        r.train_runtime > 0 ? steps_run * static_cast<double>(args_.per_device_train_batch_size * args_.gradient_accumulation_steps) *
                                  static_cast<double>(world()) /
                                  r.train_runtime
                            : 0.0;
    r.epoch = state.epoch;
    r.total_flos = state.total_flos;
    r.world_size = world();
    r.communication_seconds = communication_seconds;
    r.exposed_communication_seconds = exposed_seconds;
    nlohmann::ordered_json summary;
    summary["train_runtime"] = r.train_runtime;
    summary["train_samples_per_second"] = r.train_samples_per_second;
    summary["train_steps_per_second"] = r.train_steps_per_second;
    summary["total_flos"] = r.total_flos;
    summary["train_loss"] = r.train_loss;
    summary["epoch"] = r.epoch;
    summary["step"] = state.global_step;
    state.log_history.push_back(summary);
    final_state_ = state;
    return r;
  }

  /// The state at the end of the last train() (for trainer_state.json in output_dir).
  [[nodiscard]] const trainer_state& state() const noexcept { return final_state_; }

  /// Start and end logits of every feature; rows of features.max_seq_length(), -100 past each batch's length.
  /// Collective: each rank computes a contiguous share of the features and rank 0 gets all the rows, in feature
  /// order; the other ranks get none (empty start and end).
  qa_logits predict(const data::qa_features& features) {
    const std::size_t first_feature = rank() * features.size() / world();
    const std::size_t end_feature = (rank() + 1) * features.size() / world();
    qa_logits out;
    out.row_length = features.max_seq_length();
    out.start.assign((end_feature - first_feature) * out.row_length, -100.0f);
    out.end.assign((end_feature - first_feature) * out.row_length, -100.0f);
    const data::qa_padding padding = args_.pad_to_max_length ? data::qa_padding::max_length : data::qa_padding::longest;
    const auto batch_size = static_cast<std::size_t>(args_.per_device_eval_batch_size);
    std::vector<std::size_t> indices;
    for (std::size_t first = first_feature; first < end_feature; first += batch_size) {
      indices.clear();
      for (std::size_t i = first; i < std::min(end_feature, first + batch_size); ++i) indices.push_back(i);
      nn::qa_batch batch = features.batch(indices, padding);
      batch.start_positions.clear();  // evaluation computes no loss
      batch.end_positions.clear();
      nn::forward_options fo;
      fo.training = false;
      model_.forward(batch, fo);
      for (std::size_t row = 0; row < indices.size(); ++row) {
        float* start = out.start.data() + (first - first_feature + row) * out.row_length;
        float* end = out.end.data() + (first - first_feature + row) * out.row_length;
        for (std::size_t t = 0; t < batch.seq; ++t) {
          start[t] = model_.start_logit(row * batch.seq + t);
          end[t] = model_.end_logit(row * batch.seq + t);
        }
      }
    }
    if (world() > 1) {
      out.start = comm_.gatherv(out.start, 0);
      out.end = comm_.gatherv(out.end, 0);
    }
    return out;
  }

 private:
  static const training_args& checked(const training_args& args) {
    args.validate_training();
    return args;
  }

  // The checkpoint's data position in this run's batches: the same batch index when the processes and the batch
  // per process are the ones it was written with, else the same number of samples into the epoch.
  [[nodiscard]] std::int64_t resumed_position(const trainer_state& saved, const std::filesystem::path& from) const {
    const std::int64_t saved_batch = saved.train_batch_size * saved.world_size;
    const auto batch = static_cast<std::int64_t>(args_.per_device_train_batch_size) * static_cast<std::int64_t>(world());
    if (saved_batch == batch) return saved.batches_in_epoch;
    const std::int64_t samples = saved.batches_in_epoch * saved_batch;
    if (samples % batch != 0)
      throw usage_error("--resume_from_checkpoint " + from.string() + ": it stopped " + std::to_string(samples) +
                        " samples into epoch " + std::to_string(saved.epochs_done) + " (" +
                        std::to_string(saved.world_size) + " processes x batch " +
                        std::to_string(saved.train_batch_size) + "), which is not a whole number of batches of " +
                        std::to_string(world()) + " processes x " + std::to_string(args_.per_device_train_batch_size) +
                        "; resume with a per-process batch that divides it, or the original layout");
    return samples / batch;
  }

  // SIGTERM or Ctrl-C: write a checkpoint of this step if that fits in the grace period (judged by the last save,
  // or by the bytes to write at 100 MB/s), then stop.
  template <class Optimizer, class SyncFlos>
  [[noreturn]] void stop_on_signal(int signal, trainer_state& state, const Optimizer& optimizer, bool saved_now,
                                   const SyncFlos& sync_flos) {
    const char* name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
    const double bytes = 3.0 * 4.0 * static_cast<double>(model_.params().size());  // weights and AdamW's moments
    const double expected = last_save_seconds_ > 0 ? last_save_seconds_ : 0.5 + bytes / 100e6;
    std::string what = std::string("training stopped by ") + name + " after step " + std::to_string(state.global_step);
    if (saved_now) {
      what += "; its checkpoint is written: rerun the same command to resume from it";
    } else if (args_.termination_grace_period > 0 && expected < args_.termination_grace_period) {
      sync_flos();
      save(state, optimizer);
      what += "; checkpoint-" + std::to_string(state.global_step) +
              " is written: rerun the same command to resume from it";
    } else {
      what += "; no checkpoint written (about " + std::to_string(static_cast<int>(std::ceil(expected))) +
              " s needed, --termination_grace_period " + std::to_string(args_.termination_grace_period) + " s)" +
              last_saved_hint();
    }
    throw training_interrupted(what, signal);
  }

  [[nodiscard]] std::size_t world() const noexcept { return static_cast<std::size_t>(comm_.size()); }
  [[nodiscard]] std::size_t rank() const noexcept { return static_cast<std::size_t>(comm_.rank()); }

  [[nodiscard]] data_order order_for(std::size_t features) const {
    return data_order(features, static_cast<std::size_t>(args_.per_device_train_batch_size),
                      static_cast<std::uint64_t>(args_.seed), args_.dataloader_drop_last, world(), rank());
  }

  // Rank 0 writes; every rank waits until the checkpoint is in place, so that none runs ahead of a checkpoint
  // that a restart would need.
  template <class Optimizer>
  void save(const trainer_state& state, const Optimizer& optimizer) {
    const auto started = std::chrono::steady_clock::now();
    if (is_main_process()) save_files(state, optimizer);
    comm_.barrier();
    last_save_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  template <class Optimizer>
  void save_files(const trainer_state& state, const Optimizer& optimizer) {
    const auto dir = save_checkpoint(args_.output_dir, state.global_step, [&](const std::filesystem::path& tmp) {
      io::save_weights(model_, tmp / "model.safetensors");
      io::write_bert_config(model_.config(), tmp / "config.json");
      save_optimizer_state(optimizer, model_.table(), tmp / "optimizer.safetensors");
      nlohmann::ordered_json scheduler;
      scheduler["last_epoch"] = state.global_step;
      scheduler["lr_scheduler_type"] = args_.lr_scheduler_type;
      io::write_file_atomically(tmp / "scheduler.json", scheduler.dump(2) + "\n");
      io::write_file_atomically(tmp / "training_args.json", to_json(args_).dump(2) + "\n");
      if (callbacks_.save_tokenizer) callbacks_.save_tokenizer(tmp);
      state.write(tmp / checkpoint_state_file);  // last: its presence marks the checkpoint complete
    });
    last_saved_ = dir;
    if (args_.save_total_limit) rotate_checkpoints(args_.output_dir, static_cast<std::size_t>(*args_.save_total_limit));
    if (callbacks_.on_save) callbacks_.on_save(dir);
  }

  std::string last_saved_hint() const {
    return last_saved_ ? "; the last checkpoint is " + last_saved_->string() : "";
  }

  model_type& model_;
  const training_args args_;  // a copy: a trainer built from a temporary (make_args()) must not dangle
  trainer_callbacks callbacks_;
  std::unique_ptr<communicator_type> own_comm_;
  communicator_type& comm_;
  trainer_state final_state_;
  std::optional<std::filesystem::path> last_saved_;
  double last_save_seconds_ = 0.0;
};

}  // namespace cputrain::train
