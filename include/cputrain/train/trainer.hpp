// cputrain::train::trainer<Task, Policy> — Hugging Face's Trainer loop for an encoder model with a task's head, on
// the CPU: train() (accumulation, clipping, AdamW at the schedule's rate, logging, crash-safe checkpoints with
// bit-identical resume, SIGTERM checkpoints, data parallelism over the policy's communicator) and predict() (the
// head's logits of every feature, as the task hands them on). It is told what to do by a training_options
// (training_options.hpp); what a task is — its head, features, batches and predictions — by the Task type
// (qa_task.hpp is one: qa_trainer<Policy> is trainer<qa_task, Policy>).
#pragma once

#include "cputrain/distributed/gradient_reducer.hpp"

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
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/distributed/sparse_row_reducer.hpp"
#include "cputrain/io/atomic_file.hpp"
#include "cputrain/io/bert_config_json.hpp"
#include "cputrain/io/model_weights.hpp"
#include "cputrain/nn/encoder_model.hpp"
#include "cputrain/optim/adamw.hpp"
#include "cputrain/optim/grad_clip.hpp"
#include "cputrain/optim/lr_schedule.hpp"
#include "cputrain/train/checkpoint.hpp"
#include "cputrain/train/checkpoint_integrity.hpp"
#include "cputrain/train/progress.hpp"
#include "cputrain/train/sampler.hpp"
#include "cputrain/train/termination.hpp"
#include "cputrain/train/trainer_state.hpp"
#include "cputrain/train/training_memory.hpp"
#include "cputrain/train/training_options.hpp"

namespace cputrain::train {

/// Training cannot go on: the loss or the gradients stopped being finite.
class training_error : public cputrain::error {
 public:
  using cputrain::error::error;
};

/// Hooks a program can hang on the loop (all optional).
struct trainer_callbacks {
  /// Every log entry, as it is recorded.
  std::function<void(const nlohmann::ordered_json&)> on_log;
  /// After every optimizer step.
  std::function<void(const trainer_state&)> on_step_end;
  /// After a checkpoint is in place.
  std::function<void(const std::filesystem::path&)> on_save;
  /// Writes vocab.txt etc. into a directory (a checkpoint's).
  std::function<void(const std::filesystem::path&)> save_tokenizer;
  /// The evaluation eval_strategy asks for during training, as the program evaluates after it: called on every
  /// rank (it is collective), it returns rank 0's metrics under their eval_ names ("eval_loss", "eval_f1", ...);
  /// other ranks' return value is not read. The trainer adds "epoch" and "step", logs them and ranks them.
  std::function<nlohmann::ordered_json()> evaluate;
  /// Once per optimizer step, on every rank, with the step's finished gradients (accumulated and, with several
  /// ranks, averaged) and the step about to be taken (1-based), before clipping and the finiteness check: to
  /// inspect or change them (gradient noise, a custom clip, injecting a fault in a test). Whatever it leaves there
  /// is checked like a computed gradient.
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
  std::size_t world_size = 1;
  /// With several processes: seconds the gradient all-reduces took (written as train_communication_* only then).
  double communication_seconds = 0.0;
  /// Of communication_seconds, those backward did not hide (the wait after the last layer).
  double exposed_communication_seconds = 0.0;
  /// With several processes: the bytes each rank sends per step for the bucketed gradients (ring-algorithm count,
  /// reducer_step_stats::sent_bytes) and the format they travel in.
  std::size_t gradient_bytes_per_step = 0;
  std::string communication_dtype = "fp32";

  /// The train_results.json object.
  [[nodiscard]] CPUTRAIN_DECL nlohmann::ordered_json to_json() const;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL nlohmann::ordered_json train_result::to_json() const {
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
    j["train_communication_dtype"] = communication_dtype;
    j["train_gradient_bytes_per_step"] = gradient_bytes_per_step;
  }
  return j;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// The head's logits of every feature predict() was given, one row of `row_length` per feature.
struct logit_rows {
  std::vector<float> values;
  std::size_t row_length = 0;
};

/// Hugging Face's Trainer for an encoder model with `Task`'s head, under `Policy`.
///
/// train(): every epoch a seeded permutation of the training features (data_order), batches of
/// per_device_train_batch_size, gradients accumulated over gradient_accumulation_steps micro-batches (the last
/// group of an epoch may be shorter, as in the Trainer), clipped to max_grad_norm, an AdamW step at the schedule's
/// learning rate, bf16 mixed precision when the model's policy says so. Every logging_steps a log entry {"loss",
/// "grad_norm", "learning_rate", "epoch", "step"} as the Trainer logs it; every save_steps a checkpoint
/// (checkpoint.hpp) with everything needed to continue, so that a resumed run ends with bit-identical weights to
/// one that never stopped (same thread count): the data order comes from (seed, epoch), dropout from (seed,
/// micro-step). A NaN or infinite loss or gradient norm stops training with a training_error naming the step,
/// before any weight is touched by it — on every rank together, when it shows on one.
///
/// With a communicator of more than one process, train() starts from rank 0's weights, each rank reads its share
/// of every epoch's order, gradients of the step's last micro-batch are averaged in buckets while backward still
/// runs (distributed/gradient_reducer.hpp), and the logged loss is the mean over ranks. Only rank 0 writes
/// checkpoints and prints; predict() splits the features between ranks and gathers the logits on rank 0.
template <class Task, class Policy>
class trainer {
 public:
  using model_type = nn::encoder_model<typename Task::head_type, typename Policy::precision_policy,
                                       typename Policy::allocator_policy>;
  using features_type = typename Task::features_type;
  using predictions_type = typename Task::predictions_type;

  using communicator_type = typename Policy::parallel_policy::communicator;

  /// A trainer in a world of one process (the policy's communicator must be default-constructible).
  /// @throws usage_error naming the field when `options` cannot train (training_options::validate).
  trainer(model_type& model, const training_options& options, trainer_callbacks callbacks = {})
    requires std::is_default_constructible_v<typename Policy::parallel_policy::communicator>;
  /// A trainer whose processes are `comm`'s ranks; every rank constructs one and calls the same members.
  trainer(model_type& model, const training_options& options, communicator_type& comm,
          trainer_callbacks callbacks = {});

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
  train_result train(const features_type& features, const std::optional<std::filesystem::path>& resume_from = {});

  /// The state at the end of the last train() (for trainer_state.json in output_dir).
  [[nodiscard]] const trainer_state& state() const noexcept { return final_state_; }

  /// The head's logits of every feature, as the task hands them on (qa_task: start and end logits in rows of
  /// features.max_seq_length(), -100 past each batch's length). Collective: each rank computes a contiguous share
  /// of the features and rank 0 gets all the rows, in feature order; the other ranks get none.
  predictions_type predict(const features_type& features) { return Task::predictions(predict_logits(features)); }

  /// The loss over `features` (made with labels) as the Trainer's eval_loss: each evaluation batch's loss weighted
  /// by its sequences (by its labelled tokens where Task::loss_items counts them), without dropout or backward.
  /// Collective: the ranks share the features; all get the mean, the same for any batch size or number of ranks.
  double evaluation_loss(const features_type& features);

  /// predict()'s logits as the head computes them: per feature, Head::logits_per_sequence of the features' longest
  /// sequence, -100 past each batch's own length.
  logit_rows predict_logits(const features_type& features);

 private:
  /// What one train() carries from step to step. Built in place and never moved: the reducers and `ready` refer
  /// to it.
  struct run_state {
    run_state(const trainer& owner, const features_type& features)
        : totals(owner.plan_for(features.size())), order(owner.training_order(features)),
          schedule{optim::parse_schedule(owner.args_.lr_scheduler_type), owner.args_.learning_rate,
                   totals.warmup_steps, totals.max_steps},
          optimizer(owner.model_.params().size(), owner.model_.table().ranges(), owner.adam_options()) {}

    plan totals;
    data_order order;
    optim::lr_schedule schedule;
    optim::adamw<> optimizer;
    trainer_state state;
    /// With several ranks: gradients averaged in buckets as backward finishes them, from dense_begin on; the
    /// word-embedding table before it (the first tensor, finished last) by the rows the step used.
    std::optional<dist::basic_gradient_reducer<communicator_type>> reducer;
    std::optional<dist::sparse_row_reducer<communicator_type>> word_reducer;
    std::size_t dense_begin = 0;
    /// Tells `reducer` which gradients backward has finished.
    typename model_type::gradients_ready ready;
    double communication_seconds = 0.0;
    double exposed_seconds = 0.0;
    std::size_t gradient_bytes_per_step = 0;  // the last step's, from the bucketed reducer
    std::optional<progress_bar> bar;
    std::chrono::steady_clock::time_point started;
    std::int64_t first_step = 0;
    /// Hugging Face's estimate of the work is 6 x input tokens (padding included) x these parameters.
    std::size_t non_embedding_parameters = 0;
    /// Work since the last checkpoint, summed over ranks when one is written (a collective all ranks reach).
    double pending_flos = 0.0;
    float grad_norm = 0.0f;
    /// EarlyStoppingCallback's verdict: training ends after this step.
    bool stop_early = false;
  };

  static const training_options& checked(const training_options& options) {
    options.validate();
    return options;
  }

  [[nodiscard]] optim::adamw_options adam_options() const {
    optim::adamw_options adam;
    adam.lr = args_.learning_rate;
    adam.beta1 = args_.adam_beta1;
    adam.beta2 = args_.adam_beta2;
    adam.eps = args_.adam_epsilon;
    adam.weight_decay = args_.weight_decay;
    return adam;
  }

  // This process's batches, grouped by length when asked (over the global batch of every rank and micro-step).
  [[nodiscard]] data_order training_order(const features_type& features) const {
    data_order order = order_for(features.size());
    if (args_.group_by_length) {
      std::vector<std::uint32_t> lengths;
      lengths.reserve(features.size());
      for (std::size_t i = 0; i < features.size(); ++i) lengths.push_back(Task::length(features, i));
      order.group_by_length(lengths, static_cast<std::size_t>(args_.per_device_train_batch_size) * world() *
                                         static_cast<std::size_t>(args_.gradient_accumulation_steps));
    }
    return order;
  }

  // AdamW's moments and a step's activations, refused before either is allocated (the model exists already).
  void require_training_memory(const features_type& features) const {
    using activation = typename model_type::precision_policy::activation_type;
    memory_bill bill = optimizer_memory<typename Task::head_type>(model_.config());
    bill.add(batch_memory<typename Task::head_type>(model_.config(), args_, sizeof(activation),
                                                    Task::max_seq_length(features), false));
    require_memory(bill, read_memory_allowance(), std::string(Task::trainer_name) + "::train");
  }

  // Resuming takes the saved progress (steps, data position, losses, log history) and this run's settings.
  void resume(run_state& run, const std::filesystem::path& from) {
    try {
      io::load_weights(model_, from / "model.safetensors", io::weight_loading::exact);
      load_optimizer_state(run.optimizer, model_.table(), from / "optimizer.safetensors");
      run.state = trainer_state::read(from / checkpoint_state_file);
      if (static_cast<std::uint64_t>(run.state.global_step) != run.optimizer.step_count())
        throw io::io_error(from.string() + ": trainer_state.json says step " + std::to_string(run.state.global_step) +
                           " but the optimizer state has taken " + std::to_string(run.optimizer.step_count()) +
                           " steps");
    } catch (const io::io_error& e) {
      throw io::io_error(std::string(e.what()) + "; cannot resume from " + from.string() + other_checkpoints(from));
    }
    run.state.batches_in_epoch = resumed_position(run.state, from);
  }

  // A damaged checkpoint (a disk error, a copy cut short, a flipped bit caught by the checksums) need not end the
  // run's history: name the newest checkpoint beside it that is intact, after checking its files the same way.
  [[nodiscard]] static std::string other_checkpoints(const std::filesystem::path& damaged) {
    return intact_checkpoint_advice(damaged);
  }

  // Every rank starts from rank 0's weights (a model initialised or loaded differently elsewhere is overwritten).
  void start_from_rank0_weights() {
    if (world() <= 1) return;
    comm_.broadcast(model_.params(), 0);
    model_.parameters_changed();
  }

  // Gradients are averaged in buckets as backward finishes them; the word-embedding table (the first tensor,
  // finished last) by the rows the step used, unless the options say otherwise.
  void attach_reducers(run_state& run) {
    const auto& entries = model_.table().entries();
    const nn::parameter_info* word = model_.table().first_of(nn::parameter_role::word_embedding);
    // A head that reads the word table too (a tied masked-LM decoder) gives every row a gradient: dense.
    const bool sparse_words = world() > 1 && args_.sparse_embedding_gradients && word != nullptr &&
                              word->offset == 0 && entries.size() > 1 && word->shape.size() == 2 &&
                              !model_type::head_type::ties_word_embeddings;
    run.dense_begin = sparse_words ? entries[1].offset : 0;
    std::vector<std::size_t> tensor_offsets;
    for (const nn::parameter_info& info : entries) {
      if (info.offset >= run.dense_begin) tensor_offsets.push_back(info.offset - run.dense_begin);
    }
    // Each rank scales its loss by 1 / world (forward_backward), so the reducers only sum: no pass to divide.
    dist::reducer_options reduce_options;
    reduce_options.average = false;
    reduce_options.bucket_bytes = static_cast<std::size_t>(args_.ddp_bucket_cap_mb) << 20;
    reduce_options.wire = args_.ddp_communication_dtype == "bf16" ? dist::wire_dtype::bf16 : dist::wire_dtype::fp32;
    if (world() > 1)
      run.reducer.emplace(comm_, model_.grads().subspan(run.dense_begin), tensor_offsets, reduce_options);
    if (sparse_words)
      run.word_reducer.emplace(comm_, model_.grads().subspan(0, word->size), static_cast<std::size_t>(word->shape[1]),
                               false);
    run.ready = [&run](std::size_t offset) {
      run.reducer->ready_from(offset > run.dense_begin ? offset - run.dense_begin : 0);
    };
  }

  // The run's totals in the state, the progress bar and the clock.
  void start_clock(run_state& run) {
    run.state.max_steps = run.totals.max_steps;
    run.state.num_train_epochs = run.totals.epochs;
    run.state.logging_steps = args_.logging_steps;
    run.state.save_steps = args_.save_steps;
    run.state.train_batch_size = args_.per_device_train_batch_size;
    run.state.eval_steps = args_.evaluation_interval();
    if (args_.early_stopping_patience) run.state.early_stopping_patience = *args_.early_stopping_patience;
    run.state.early_stopping_threshold = args_.early_stopping_threshold;
    run.first_step = run.state.global_step;
    run.bar.emplace(run.totals.max_steps, run.first_step, !args_.disable_tqdm && is_main_process());
    run.started = std::chrono::steady_clock::now();
    // Hugging Face counts every parameter but those of nn.Embedding modules.
    for (const nn::parameter_info& info : model_.table().entries()) {
      if (info.role != nn::parameter_role::embedding && info.role != nn::parameter_role::word_embedding)
        run.non_embedding_parameters += info.size;
    }
  }

  // Forward and backward over the accumulation group starting at batch b (shorter at the end of the epoch): the
  // model's gradients hold this rank's share of the step's gradient (the ranks' shares sum to it), b has moved past
  // the group. Returns this rank's share of the step's loss, scaled as reduce_gradients averages it.
  double forward_backward(run_state& run, const features_type& features,
                          const std::vector<std::vector<std::size_t>>& batches, std::size_t& b, std::int64_t epoch) {
    const auto ga = static_cast<std::size_t>(args_.gradient_accumulation_steps);
    const std::size_t group = std::min(ga, batches.size() - b);
    // The key is the epoch's (a task keys each feature's draws by it and the feature's index), so a resumed run
    // draws the same (masked-LM) batch, and so does any batch size, accumulation or number of ranks.
    using batch_type = decltype(Task::batch(features, batches[b], args_.pad_to_max_length, batch_key(epoch)));
    std::vector<batch_type> micro_batches;
    micro_batches.reserve(group);
    for (std::size_t micro = 0; micro < group; ++micro)
      micro_batches.push_back(Task::batch(features, batches[b + micro], args_.pad_to_max_length, batch_key(epoch)));
    const std::vector<double> weights = micro_batch_weights(micro_batches);
    model_.zero_grad();
    double step_loss = 0.0;
    for (std::size_t micro = 0; micro < group; ++micro, ++b) {
      const auto& batch = micro_batches[micro];
      if (run.word_reducer) run.word_reducer->mark(batch.input_ids);
      nn::forward_options fo;
      fo.training = true;
      fo.seed = static_cast<std::uint64_t>(args_.seed);
      // Each rank draws its own dropout masks; a world of one keeps the stream it always had.
      fo.step = (static_cast<std::uint64_t>(run.state.global_step) * ga + micro) * world() + rank();
      const float loss = model_.forward(batch, fo);
      run.pending_flos += 6.0 * static_cast<double>(batch.tokens()) * static_cast<double>(run.non_embedding_parameters);
      const bool counted = weights[micro] > 0.0;  // a micro-batch without a labelled token has no (a NaN) loss
      if (counted && !std::isfinite(loss) && world() == 1)  // with several ranks all stop together (reduce_gradients)
        stop_before_update(run.state, at_batch(epoch, b), "the loss is " + std::to_string(loss));
      const bool last_micro = micro + 1 == group;
      model_.backward(static_cast<float>(weights[micro]), run.reducer && last_micro ? run.ready : nullptr);
      if (counted) step_loss += static_cast<double>(loss) * weights[micro] * static_cast<double>(world());
    }
    return step_loss;
  }

  // What a batch's loss averages: its labelled tokens for a task that counts them (Task::loss_items), else its
  // sequences.
  template <class Batch>
  [[nodiscard]] static double loss_items(const Batch& batch) {
    if constexpr (requires { Task::loss_items(batch); }) return static_cast<double>(Task::loss_items(batch));
    else return static_cast<double>(batch.batch);
  }

  // Each micro-batch's weight in the step's gradient, its loss being a mean over its batch. A task whose loss
  // averages labelled tokens (Task::loss_items: run_ner's, run_mlm's) weighs a micro-batch by its share of the
  // step's labelled tokens on every rank (one all-reduce of a count), so that the step's loss is the mean over all
  // of them: the same for any batch size, accumulation or number of ranks, as Hugging Face's Trainer does with
  // num_items_in_batch and average_tokens_across_devices. Other tasks weigh every micro-batch alike.
  template <class Batch>
  std::vector<double> micro_batch_weights(const std::vector<Batch>& micro_batches) {
    const std::size_t group = micro_batches.size();
    std::vector<double> weights(group, 1.0 / static_cast<double>(group * world()));
    if constexpr (requires(const Batch& batch) { Task::loss_items(batch); }) {
      double local = 0.0;
      for (std::size_t m = 0; m < group; ++m) {
        weights[m] = loss_items(micro_batches[m]);
        local += weights[m];
      }
      const double total = world() > 1 ? comm_.all_reduce_sum(local) : local;
      for (double& w : weights) w = total > 0.0 ? w / total : 0.0;
    }
    return weights;
  }

  // With several ranks: the gradients summed over ranks (each scaled its loss by 1 / world) and the step's loss
  // averaged, the time it took counted. Returns the step's loss as the log reports it.
  double reduce_gradients(run_state& run, double step_loss, std::int64_t epoch, std::size_t b) {
    if (!run.reducer) return step_loss;
    run.reducer->finish();  // grads now hold the average over ranks
    run.communication_seconds += run.reducer->last_step().communication_seconds;
    run.exposed_seconds += run.reducer->last_step().exposed_seconds;
    run.gradient_bytes_per_step = run.reducer->last_step().sent_bytes;
    if (run.word_reducer) {
      const auto started = std::chrono::steady_clock::now();
      run.word_reducer->reduce();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      run.communication_seconds += seconds;
      run.exposed_seconds += seconds;
    }
    step_loss = comm_.all_reduce_sum(step_loss) / static_cast<double>(world());
    if (!std::isfinite(step_loss))
      stop_before_update(run.state, at_batch(epoch, b),
                         "the loss averaged over the ranks is " + std::to_string(step_loss));
    return step_loss;
  }

  // Clips the gradients to max_grad_norm (or only measures them) and stops if their norm is not finite.
  void clip_and_check(run_state& run) {
    const auto max_norm = static_cast<float>(args_.max_grad_norm);
    run.grad_norm = args_.max_grad_norm > 0 ? optim::clip_grad_norm(model_.grads(), max_norm)
                                            : optim::global_norm(model_.grads());
    // Averaged gradients are the same on every rank, so their norms agree — unless something changed one rank's
    // copy (a hook, a faulty memory): the ranks agree on the verdict, so that none of them steps on while another
    // stops and leaves it waiting in the next collective.
    std::int64_t non_finite = std::isfinite(run.grad_norm) ? 0 : 1;
    if (world() > 1) non_finite = comm_.all_reduce_max(non_finite);
    if (non_finite == 0) return;
    const std::string norm = std::isfinite(run.grad_norm) ? "not finite on another rank" : std::to_string(run.grad_norm);
    stop_before_update(run.state, "", "the gradient norm is " + norm);
  }

  // The AdamW step at the schedule's learning rate.
  void update(run_state& run) {
    run.optimizer.step(model_.params(), model_.grads(), run.schedule.lr(run.state.global_step));
    model_.parameters_changed();
  }

  // The step in the state: its number, the data position (b batches of the epoch's `epoch_batches` done) and losses.
  void record_step(run_state& run, double step_loss, std::int64_t epoch, std::size_t b, std::size_t epoch_batches) {
    trainer_state& state = run.state;
    ++state.global_step;
    state.batches_in_epoch = static_cast<std::int64_t>(b);
    state.epoch = static_cast<double>(epoch) + static_cast<double>(b) / static_cast<double>(epoch_batches);
    state.loss_since_log += step_loss;
    ++state.steps_since_log;
    state.total_loss += step_loss;
    if (b == epoch_batches) {  // the epoch is done: a checkpoint taken now resumes at the next one
      ++state.epochs_done;
      state.batches_in_epoch = 0;
    }
    run.bar->update(state.global_step, step_loss);
  }

  // Every logging_steps and at the last step: the Trainer's log entry, printed and passed to on_log by rank 0.
  void log_if_due(run_state& run) {
    trainer_state& state = run.state;
    if (state.global_step % args_.logging_steps != 0 && state.global_step != run.totals.max_steps) return;
    nlohmann::ordered_json entry;
    entry["loss"] = std::round(state.loss_since_log / static_cast<double>(state.steps_since_log) * 1e4) / 1e4;
    entry["grad_norm"] = static_cast<double>(run.grad_norm);
    entry["learning_rate"] = run.schedule.lr(state.global_step);
    entry["epoch"] = state.epoch;
    entry["step"] = state.global_step;
    state.log_history.push_back(entry);
    state.loss_since_log = 0.0;
    state.steps_since_log = 0;
    if (is_main_process()) {
      run.bar->print_above(entry.dump());
      if (callbacks_.on_log) callbacks_.on_log(entry);
    }
  }

  // Every eval_steps (eval_strategy "steps"), or at the end of an epoch (`epoch_end`, eval_strategy "epoch").
  void evaluate_if_due(run_state& run, bool epoch_end) {
    const bool due = epoch_end ? args_.eval_strategy == "epoch"
                               : args_.eval_strategy == "steps" &&
                                     run.state.global_step % args_.evaluation_interval() == 0;
    if (due) evaluate_now(run);
  }

  // The program's evaluation, logged as the Trainer logs it, ranked when a best model is asked for, and counted by
  // the early-stopping rule. Every rank takes the same decisions from rank 0's metric.
  void evaluate_now(run_state& run) {
    if (!callbacks_.evaluate)
      throw usage_error("--eval_strategy " + args_.eval_strategy + ": " + Task::trainer_name +
                        " was given no evaluation (trainer_callbacks::evaluate)");
    nlohmann::ordered_json metrics = callbacks_.evaluate();
    trainer_state& state = run.state;
    if (is_main_process()) {
      metrics["epoch"] = state.epoch;
      metrics["step"] = state.global_step;
      state.log_history.push_back(metrics);
      run.bar->print_above(metrics.dump());
      if (callbacks_.on_log) callbacks_.on_log(metrics);
    }
    if (!args_.load_best_model_at_end && !args_.metric_for_best_model) return;
    const best_model_rule rule = best_model_rule::of(args_);
    const double value = ranked_value(rule, metrics);
    if (state.early_stopping_patience) {
      state.early_stopping_patience_counter =
          rule.improves_by(value, state.best_metric, state.early_stopping_threshold)
              ? 0
              : state.early_stopping_patience_counter + 1;
      run.stop_early = state.early_stopping_patience_counter >= *state.early_stopping_patience;
    }
    if (rule.improves(value, state.best_metric)) {
      state.best_metric = value;
      state.best_global_step = state.global_step;
    }
  }

  // Rank 0's value of the ranked metric, on every rank; a metric the evaluation lacks stops every rank.
  double ranked_value(const best_model_rule& rule, const nlohmann::ordered_json& metrics) {
    std::int64_t missing = 0;
    double value = 0.0;
    std::string why;
    if (is_main_process()) {
      try {
        value = rule.value_in(metrics);
      } catch (const usage_error& e) {
        missing = 1;
        why = e.what();
      }
    }
    if (world() > 1) {
      missing = comm_.all_reduce_max(missing);
      value = comm_.all_reduce_sum(value);  // only rank 0 adds a value
    }
    if (missing != 0) throw usage_error(why.empty() ? "--metric_for_best_model: not in the evaluation (rank 0 says which)" : why);
    return value;
  }

  // --load_best_model_at_end: rank 0 reads the best checkpoint's weights and every rank takes them.
  void load_best_model(run_state& run) {
    if (!args_.load_best_model_at_end || !run.state.best_model_checkpoint) return;
    const std::filesystem::path dir = *run.state.best_model_checkpoint;
    if (is_main_process()) {
      io::load_weights(model_, dir / "model.safetensors", io::weight_loading::exact);
      run.bar->print_above("Loading best model from " + dir.string() + " (score: " +
                           std::to_string(*run.state.best_metric) + ").");
    }
    if (world() > 1) comm_.broadcast(model_.params(), 0);
    model_.parameters_changed();
  }

  // Every save_steps (save_strategy "steps"): a checkpoint. Whether one was written.
  bool save_if_due(run_state& run) {
    if (args_.save_strategy != "steps" || run.state.global_step % args_.save_steps != 0) return false;
    sync_flos(run);
    save(run);
    return true;
  }

  // A termination signal on any rank stops every rank at this step boundary.
  void check_signal(run_state& run, bool saved_now) {
    int signal = termination_signal::received();
    if (world() > 1) signal = static_cast<int>(comm_.all_reduce_max(signal));
    if (signal != 0) stop_on_signal(signal, run, saved_now);
  }

  // What train() reports, and its summary as the last entry of the log history.
  train_result finish(run_state& run, std::size_t samples) {
    const trainer_state& state = run.state;
    train_result r;
    r.global_step = state.global_step;
    r.train_runtime = std::chrono::duration<double>(std::chrono::steady_clock::now() - run.started).count();
    r.train_samples = samples;
    r.train_loss = state.global_step > 0 ? state.total_loss / static_cast<double>(state.global_step) : 0.0;
    const double steps_run = static_cast<double>(state.global_step - run.first_step);
    r.train_steps_per_second = r.train_runtime > 0 ? steps_run / r.train_runtime : 0.0;
    r.train_samples_per_second =
        r.train_runtime > 0 ? steps_run * static_cast<double>(args_.per_device_train_batch_size * args_.gradient_accumulation_steps) *
                                  static_cast<double>(world()) /
                                  r.train_runtime
                            : 0.0;
    r.epoch = state.epoch;
    r.total_flos = state.total_flos;
    r.world_size = world();
    r.communication_seconds = run.communication_seconds;
    r.exposed_communication_seconds = run.exposed_seconds;
    r.gradient_bytes_per_step = run.gradient_bytes_per_step;
    r.communication_dtype = args_.ddp_communication_dtype;
    nlohmann::ordered_json summary;
    summary["train_runtime"] = r.train_runtime;
    summary["train_samples_per_second"] = r.train_samples_per_second;
    summary["train_steps_per_second"] = r.train_steps_per_second;
    summary["total_flos"] = r.total_flos;
    summary["train_loss"] = r.train_loss;
    summary["epoch"] = r.epoch;
    summary["step"] = state.global_step;
    run.state.log_history.push_back(summary);
    final_state_ = run.state;
    return r;
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

  // " (epoch E, batch B)", where a step stopped.
  [[nodiscard]] static std::string at_batch(std::int64_t epoch, std::size_t b) {
    return " (epoch " + std::to_string(epoch) + ", batch " + std::to_string(b) + ")";
  }

  // The step about to be taken cannot go on (`what` says why; `where` is at_batch's or empty): nothing of it has
  // reached the weights.
  [[noreturn]] void stop_before_update(const trainer_state& state, const std::string& where,
                                       const std::string& what) const {
    throw training_error("training stopped at step " + std::to_string(state.global_step + 1) + where + ": " + what +
                         "; no weights were changed by this step" + last_saved_hint());
  }

  // SIGTERM or Ctrl-C: write a checkpoint of this step if that fits in the grace period (judged by the last save,
  // or by the bytes to write at 100 MB/s), then stop.
  [[noreturn]] void stop_on_signal(int signal, run_state& run, bool saved_now) {
    const char* name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
    const double bytes = 3.0 * 4.0 * static_cast<double>(model_.params().size());  // weights and AdamW's moments
    const double expected = last_save_seconds_ > 0 ? last_save_seconds_ : 0.5 + bytes / 100e6;
    std::string what =
        std::string("training stopped by ") + name + " after step " + std::to_string(run.state.global_step);
    if (saved_now) {
      what += "; its checkpoint is written: rerun the same command to resume from it";
    } else if (args_.termination_grace_period > 0 && expected < args_.termination_grace_period) {
      sync_flos(run);
      save(run);
      what += "; checkpoint-" + std::to_string(run.state.global_step) +
              " is written: rerun the same command to resume from it";
    } else {
      what += "; no checkpoint written (about " + std::to_string(static_cast<int>(std::ceil(expected))) +
              " s needed, --termination_grace_period " + std::to_string(args_.termination_grace_period) + " s)" +
              last_saved_hint();
    }
    throw training_interrupted(what, signal);
  }

  // This rank's contiguous share [first, end) of an evaluation set of `n` features.
  [[nodiscard]] std::pair<std::size_t, std::size_t> evaluation_share(std::size_t n) const noexcept {
    return {rank() * n / world(), (rank() + 1) * n / world()};
  }

  // This rank's share of `features` in batches of per_device_eval_batch_size, each run forward without dropout and
  // without kept activations (no backward follows), its labels dropped unless `with_labels`; then
  // visit(first feature, batch size, batch length, the batch's loss or NaN, the items its loss averages).
  template <class Visit>
  void evaluate_batches(const features_type& features, bool with_labels, Visit&& visit) {
    const auto [first_feature, end_feature] = evaluation_share(features.size());
    const auto batch_size = static_cast<std::size_t>(args_.per_device_eval_batch_size);
    std::vector<std::size_t> indices;
    for (std::size_t first = first_feature; first < end_feature; first += batch_size) {
      indices.clear();
      for (std::size_t i = first; i < std::min(end_feature, first + batch_size); ++i) indices.push_back(i);
      auto batch = Task::batch(features, indices, args_.pad_to_max_length, evaluation_key());
      const double items = loss_items(batch);
      if (!with_labels) Task::drop_labels(batch);
      nn::forward_options fo;
      fo.training = false;
      fo.keep_activations = false;  // one layer's activation buffers serve every layer
      const float loss = model_.forward(batch, fo);
      visit(first, indices.size(), batch.seq, loss, items);
    }
  }

  // The key of training batches in `epoch`, and of evaluation batches (the same at every evaluation): one per
  // epoch, so that a feature's draws depend on its epoch and index alone, not on its batch or rank.
  [[nodiscard]] static std::uint64_t batch_key(std::int64_t epoch) noexcept {
    return static_cast<std::uint64_t>(epoch);
  }
  [[nodiscard]] static std::uint64_t evaluation_key() noexcept { return std::uint64_t{1} << 63; }

  [[nodiscard]] std::size_t world() const noexcept { return static_cast<std::size_t>(comm_.size()); }
  [[nodiscard]] std::size_t rank() const noexcept { return static_cast<std::size_t>(comm_.rank()); }

  [[nodiscard]] data_order order_for(std::size_t features) const {
    return data_order(features, static_cast<std::size_t>(args_.per_device_train_batch_size),
                      static_cast<std::uint64_t>(args_.seed), args_.dataloader_drop_last, world(), rank());
  }

  // The work since the last checkpoint into the state, summed over ranks (a collective).
  void sync_flos(run_state& run) {
    run.state.total_flos += world() > 1 ? comm_.all_reduce_sum(run.pending_flos) : run.pending_flos;
    run.pending_flos = 0.0;
  }

  // Rank 0 writes; every rank waits until the checkpoint is in place, so that none runs ahead of a checkpoint
  // that a restart would need.
  void save(run_state& run) {
    const auto started = std::chrono::steady_clock::now();
    // The best evaluation's checkpoint, once it exists (this one, or an earlier one).
    if (run.state.best_global_step) {
      const auto best = checkpoint_path(args_.output_dir, *run.state.best_global_step);
      if (*run.state.best_global_step == run.state.global_step || std::filesystem::exists(best))
        run.state.best_model_checkpoint = best.string();
    }
    if (is_main_process()) save_files(run.state, run.optimizer);
    comm_.barrier();
    last_save_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  template <class Optimizer>
  void save_files(const trainer_state& state, const Optimizer& optimizer) {
    const auto dir = save_checkpoint(args_.output_dir, state.global_step, [&](const std::filesystem::path& tmp) {
      io::save_weights(model_, tmp / "model.safetensors");
      io::write_model_config(model_, tmp / "config.json");
      save_optimizer_state(optimizer, model_.table(), tmp / "optimizer.safetensors");
      nlohmann::ordered_json scheduler;
      scheduler["last_epoch"] = state.global_step;
      scheduler["lr_scheduler_type"] = args_.lr_scheduler_type;
      io::write_file_atomically(tmp / "scheduler.json", scheduler.dump(2) + "\n");
      io::write_file_atomically(tmp / "training_args.json", arguments_json(args_).dump(2) + "\n");
      if (callbacks_.save_tokenizer) callbacks_.save_tokenizer(tmp);
      state.write(tmp / checkpoint_state_file);  // last: its presence marks the checkpoint complete
    });
    last_saved_ = dir;
    if (args_.save_total_limit) {
      std::optional<std::filesystem::path> best;
      if (state.best_model_checkpoint) best = *state.best_model_checkpoint;
      rotate_checkpoints(args_.output_dir, static_cast<std::size_t>(*args_.save_total_limit), best);
    }
    if (callbacks_.on_save) callbacks_.on_save(dir);
  }

  std::string last_saved_hint() const {
    return last_saved_ ? "; the last checkpoint is " + last_saved_->string() : "";
  }

  model_type& model_;
  const training_options args_;  // a copy: a trainer built from a temporary (make_options()) must not dangle
  trainer_callbacks callbacks_;
  std::unique_ptr<communicator_type> own_comm_;
  communicator_type& comm_;
  trainer_state final_state_;
  std::optional<std::filesystem::path> last_saved_;
  double last_save_seconds_ = 0.0;
};

template <class Task, class Policy>
trainer<Task, Policy>::trainer(model_type& model, const training_options& options, trainer_callbacks callbacks)
  requires std::is_default_constructible_v<typename Policy::parallel_policy::communicator>
    : model_(model),
      args_(checked(options)),
      callbacks_(std::move(callbacks)),
      own_comm_(std::make_unique<communicator_type>()),
      comm_(*own_comm_) {}

template <class Task, class Policy>
trainer<Task, Policy>::trainer(model_type& model, const training_options& options, communicator_type& comm,
                               trainer_callbacks callbacks)
    : model_(model), args_(checked(options)), callbacks_(std::move(callbacks)), comm_(comm) {}

template <class Task, class Policy>
train_result trainer<Task, Policy>::train(const features_type& features,
                                          const std::optional<std::filesystem::path>& resume_from) {
  if (!features.has_labels())
    throw usage_error(std::string(Task::trainer_name) + "::train: the features have no " + Task::labels_name +
                      " (labels)");
  require_training_memory(features);
  run_state run(*this, features);  // the plan, the data order, the schedule and the optimizer
  if (resume_from) resume(run, *resume_from);
  run.state.world_size = static_cast<std::int64_t>(world());
  start_from_rank0_weights();
  attach_reducers(run);
  start_clock(run);
  for (std::int64_t epoch = run.state.epochs_done; run.state.global_step < run.totals.max_steps && !run.stop_early;
       ++epoch) {
    const auto batches = run.order.epoch_batches(static_cast<std::uint64_t>(epoch));
    std::size_t b = static_cast<std::size_t>(run.state.batches_in_epoch);
    while (b < batches.size() && run.state.global_step < run.totals.max_steps && !run.stop_early) {
      // One optimizer step: the accumulation group starting at batch b; b moves past it.
      double loss = forward_backward(run, features, batches, b, epoch);
      loss = reduce_gradients(run, loss, epoch, b);
      if (callbacks_.on_gradients) callbacks_.on_gradients(model_.grads(), run.state.global_step + 1);
      clip_and_check(run);
      update(run);
      record_step(run, loss, epoch, b, batches.size());
      log_if_due(run);
      evaluate_if_due(run, false);
      const bool saved_now = save_if_due(run);
      check_signal(run, saved_now);
      if (callbacks_.on_step_end) callbacks_.on_step_end(run.state);
    }
    // The end of an epoch, or of training within one (max_steps, early stopping), as the Trainer's on_epoch_end.
    const bool epoch_end = run.state.batches_in_epoch == 0 || run.state.global_step >= run.totals.max_steps;
    if (epoch_end && !run.stop_early) evaluate_if_due(run, true);
    if (args_.save_strategy == "epoch" && epoch_end) {
      sync_flos(run);
      save(run);
    }
  }
  load_best_model(run);
  run.bar->finish();
  sync_flos(run);
  return finish(run, features.size());
}

template <class Task, class Policy>
double trainer<Task, Policy>::evaluation_loss(const features_type& features) {
  // The mean over every item the losses average (sequences, or a token task's labelled tokens), so that neither
  // the batch size nor the number of ranks changes it.
  double weighted = 0.0, items = 0.0;
  evaluate_batches(features, true, [&](std::size_t, std::size_t, std::size_t, float loss, double batch_items) {
    if (batch_items > 0.0 && std::isfinite(loss)) {
      weighted += static_cast<double>(loss) * batch_items;
      items += batch_items;
    }
  });
  if (world() > 1) {
    weighted = comm_.all_reduce_sum(weighted);
    items = comm_.all_reduce_sum(items);
  }
  return items > 0.0 ? weighted / items : 0.0;
}

template <class Task, class Policy>
logit_rows trainer<Task, Policy>::predict_logits(const features_type& features) {
  using head = typename Task::head_type;
  // Plain names, not a structured binding: Clang 14 cannot capture those in the lambda below.
  const std::pair<std::size_t, std::size_t> share = evaluation_share(features.size());
  const std::size_t first_feature = share.first, end_feature = share.second;
  logit_rows out;
  out.row_length = head::logits_per_sequence(model_.config(), Task::max_seq_length(features));
  out.values.assign((end_feature - first_feature) * out.row_length, -100.0f);
  evaluate_batches(features, false, [&](std::size_t first, std::size_t count, std::size_t seq, float, double) {
    const std::span<const float> logits = model_.logits();
    const std::size_t row = head::logits_per_sequence(model_.config(), seq);  // the batch's own length
    for (std::size_t i = 0; i < count; ++i) {
      std::copy_n(logits.begin() + static_cast<std::ptrdiff_t>(i * row), row,
                  out.values.begin() + static_cast<std::ptrdiff_t>((first - first_feature + i) * out.row_length));
    }
  });
  if (world() > 1) out.values = comm_.gatherv(out.values, 0);
  return out;
}

}  // namespace cputrain::train
