// cputrain::nn::encoder_model<Head, Precision, Alloc> — an encoder (encoder.hpp) with a task head on top, with
// explicit forward and backward over one flat parameter and one flat gradient buffer:
//   encoder_model<qa_head, precision::bf16_mixed> model(config, seed);
//   float loss = model.forward(batch, {.training = true, ...});  model.backward();
//   /* optimizer over model.params() / model.grads() */  model.parameters_changed();
// Its type says only how it computes and where its memory lives: how many processes train it is the trainer's
// business (train/trainer.hpp), so one model type serves every parallelism policy.
#pragma once

#include "cputrain/nn/init.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/core/error.hpp"
#include "cputrain/machine/memory_allowance.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "cputrain/nn/encoder.hpp"
#include "cputrain/nn/model_memory.hpp"
#include "cputrain/nn/parameters.hpp"
#include "cputrain/nn/workspace_layout.hpp"
#include "cputrain/policy/policy.hpp"

namespace cputrain::nn {

template <class Head, class Precision = precision::fp32, class Alloc = alloc::standard>
class encoder_model {
  using A = typename Precision::activation_type;
  using G = typename Precision::gemm_input_type;
  static_assert(std::is_same_v<A, G>, "encoder_model keeps activations in the GEMM input type: they are the operands");
  template <class T>
  using buffer = std::vector<T, alloc::allocator<T, Alloc>>;

 public:
  using head_type = Head;
  using batch_type = typename Head::batch_type;
  using precision_policy = Precision;
  using allocator_policy = Alloc;
  /// The policy of a one-process trainer for this model (a trainer of any parallelism policy takes the model).
  using policy_type = policy<Precision, parallel::single, Alloc>;
  using gradients_ready = nn::gradients_ready;

  /// A model with Hugging Face's initialisation, drawn from `init_seed`. config.validate() must pass.
  explicit encoder_model(const bert_config& config, std::uint64_t init_seed = 42);

  [[nodiscard]] const bert_config& config() const noexcept { return config_; }
  [[nodiscard]] const parameter_table& table() const noexcept { return table_; }
  /// Where the head's tensors start in the flat buffers (the encoder's come first).
  [[nodiscard]] std::size_t head_offset() const noexcept { return head_begin_; }
  [[nodiscard]] std::span<float> params() noexcept { return params_; }
  [[nodiscard]] std::span<const float> params() const noexcept { return params_; }
  [[nodiscard]] std::span<float> grads() noexcept { return grads_; }
  [[nodiscard]] std::span<const float> grads() const noexcept { return grads_; }

  /// Call after anything wrote params() (an optimizer step, loading a checkpoint): refreshes the bf16 GEMM copy.
  void parameters_changed() {
    if constexpr (!std::is_same_v<G, float>) {
      gemm_weights_.resize(params_.size());
      cputrain::to_bf16(std::span<const float>(params_), std::span<G>(gemm_weights_));
    }
  }

  void zero_grad() { std::fill(grads_.begin(), grads_.end(), 0.0f); }

  /// Runs the model on `batch`; returns the head's loss when the batch has labels (NaN otherwise). The logits
  /// stay readable through logits() until the next forward; backward() reads `batch` again, so it must outlive
  /// the backward of this forward.
  float forward(const batch_type& batch, const forward_options& options = {});

  /// Back-propagates the loss of the last forward (which must have had labels), adding `loss_scale` times its
  /// gradient into grads() (loss_scale = 1 / accumulation steps averages accumulated micro-batches). `ready` is
  /// told which gradients are final as backward goes (gradients_ready).
  void backward(float loss_scale = 1.0f, const gradients_ready& ready = {});

  /// The head's logits of the last forward (qa_head: [tokens, 2], start and end of each token).
  [[nodiscard]] std::span<const float> logits() const { return {head_ws_.logits, logit_count_}; }

  /// Bytes of the activations (in the activation type) the workspace keeps for backward, at its current size;
  /// the float row statistics kept beside them are not included.
  [[nodiscard]] std::size_t activation_bytes() const { return kept_.size() * sizeof(A); }
  /// Bytes of the float scratch the layers share, at the workspace's current size.
  [[nodiscard]] std::size_t scratch_bytes() const {
    return floats_.size() * sizeof(float) - static_cast<std::size_t>(shaped_.kept_floats) * sizeof(float);
  }

 private:
  [[nodiscard]] const G* gemm_weights() const {
    if constexpr (std::is_same_v<G, float>) {
      return params_.data();
    } else {
      return gemm_weights_.data();
    }
  }
  // The step's first dropout stream: the encoder's sites, then the head's.
  [[nodiscard]] std::uint64_t first_stream() const {
    return options_.step * (encoder_.dropout_sites() + head_.dropout_sites());
  }

  /// Sizes and carves the workspace for batch x seq (every layer's activations kept, or one layer's shared by all);
  /// the buffers only grow, so steady training allocates nothing.
  void prepare_workspace(std::size_t batch, std::size_t seq, bool keep_activations);

  bert_config config_;
  parameter_table table_;
  encoder encoder_;
  Head head_;
  std::size_t head_begin_ = 0;  // where the head's parameters start
  buffer<float> params_, grads_;
  buffer<G> gemm_weights_;  // bf16 rounding of params_ under bf16 mixed precision; unused under fp32

  // Workspace: two buffers carved by the encoder's and the head's descriptions (workspace_layout.hpp).
  buffer<A> kept_;
  buffer<float> floats_;
  workspace_size shaped_;
  std::size_t shaped_batch_ = 0, shaped_seq_ = 0;
  bool shaped_keeping_ = true;
  encoder_workspace<A> encoder_ws_;
  typename Head::template workspace<A> head_ws_;
  const batch_type* batch_ = nullptr;
  std::size_t logit_count_ = 0;
  forward_options options_;
};

template <class Head, class Precision, class Alloc>
encoder_model<Head, Precision, Alloc>::encoder_model(const bert_config& config, std::uint64_t init_seed)
    : config_(config) {
  config_.validate();
  // Refused before the first allocation: a config that cannot fit would otherwise grow until the OOM killer.
  require_memory(model_memory<Head>(config_, sizeof(G)), read_memory_allowance(), Head::model_name);
  encoder_ = encoder::create(table_, config_);
  head_begin_ = table_.total_size();
  head_ = Head::create(table_, config_);
  params_.assign(table_.total_size(), 0.0f);
  grads_.assign(table_.total_size(), 0.0f);
  hf_initialize(table_, params_, config_.initializer_range, init_seed);
  parameters_changed();
}

template <class Head, class Precision, class Alloc>
float encoder_model<Head, Precision, Alloc>::forward(const batch_type& batch, const forward_options& options) {
  batch.validate(static_cast<std::size_t>(config_.vocab_size), static_cast<std::size_t>(config_.type_vocab_size),
                 static_cast<std::size_t>(config_.max_sequence_length()));
  prepare_workspace(batch.batch, batch.seq, options.keep_activations);
  batch_ = &batch;
  logit_count_ = head_.logit_count(batch);
  options_ = options;
  encoder_.forward(gemm_weights(), params_.data(), batch, options, first_stream(), encoder_ws_);
  return head_.forward(gemm_weights(), params_.data(), batch, encoder_ws_.hidden, options,
                       first_stream() + encoder_.dropout_sites(), head_ws_);
}

template <class Head, class Precision, class Alloc>
void encoder_model<Head, Precision, Alloc>::backward(float loss_scale, const gradients_ready& ready) {
  if (batch_ == nullptr || !batch_->has_labels()) {
    throw usage_error(std::string(Head::model_name) + "::backward: no forward pass with labels to differentiate");
  }
  if (!options_.keep_activations) {
    throw usage_error(std::string(Head::model_name) +
                      "::backward: the last forward kept no activations (forward_options::keep_activations false)");
  }
  head_.backward(gemm_weights(), params_.data(), grads_.data(), *batch_, loss_scale, options_,
                 first_stream() + encoder_.dropout_sites(), head_ws_, encoder_ws_.dhidden);
  if (ready) ready(head_begin_);
  encoder_.backward(gemm_weights(), params_.data(), grads_.data(), *batch_, options_, first_stream(), encoder_ws_,
                    ready);
}

template <class Head, class Precision, class Alloc>
void encoder_model<Head, Precision, Alloc>::prepare_workspace(std::size_t batch, std::size_t seq,
                                                              bool keep_activations) {
  if (batch == shaped_batch_ && seq == shaped_seq_ && keep_activations == shaped_keeping_) return;
  const activation_shape shape{batch, seq, "batch", "seq"};
  const std::size_t laid_layers = keep_activations ? encoder_.layers.size() : 1;
  const workspace_size size = workspace_elements<Head>(config_, shape, laid_layers);
  if (kept_.size() < size.kept || floats_.size() < size.kept_floats + size.scratch) {
    require_memory(activation_memory<Head>(config_, sizeof(A), shape, laid_layers), read_memory_allowance(),
                   std::string(Head::model_name) + "::forward");
    if (kept_.size() < size.kept) kept_.resize(size.kept);
    if (floats_.size() < size.kept_floats + size.scratch) floats_.resize(size.kept_floats + size.scratch);
  }
  shaped_ = size;
  shaped_batch_ = batch;
  shaped_seq_ = seq;
  shaped_keeping_ = keep_activations;
  workspace_carver<A> carver(kept_.data(), floats_.data(), size);
  encoder_ws_ = encoder_workspace<A>::lay_out(carver, config_, batch, seq, laid_layers);
  // Without backward, layer l's activations are dead once layer l + 1 starts: every layer writes the same ones.
  encoder_ws_.layers.resize(encoder_.layers.size(), encoder_ws_.layers.front());
  head_ws_ = Head::template workspace<A>::lay_out(carver, config_, batch, seq);
}

}  // namespace cputrain::nn

// Linked with cputrain's compiled component, the common models are compiled there, not in each file.
#if defined(CPUTRAIN_PREBUILT_MODELS)
#include "cputrain/nn/prebuilt_models.hpp"  // IWYU pragma: export
#endif
