// cputrain::nn::bert_qa<Policy> — Hugging Face's BertForQuestionAnswering (encoder without pooler, qa_outputs,
// the QA loss) with explicit forward and backward over one flat parameter and one flat gradient buffer:
//   bert_qa<policy<>> model(config, seed);  float loss = model.forward(batch, {.training = true, ...});
//   model.backward();  /* optimizer over model.params() / model.grads() */  model.parameters_changed();
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "cputrain/core/bf16_convert.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/fused.hpp"
#include "cputrain/kernels/softmax.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "cputrain/nn/embeddings.hpp"
#include "cputrain/nn/encoder_layer.hpp"
#include "cputrain/nn/init.hpp"
#include "cputrain/nn/linear.hpp"
#include "cputrain/nn/model_memory.hpp"
#include "cputrain/nn/parameters.hpp"
#include "cputrain/nn/qa_batch.hpp"
#include "cputrain/nn/qa_loss.hpp"
#include "cputrain/policy/policy.hpp"

namespace cputrain::nn {

struct forward_options {
  bool training = true;     // dropout on (with the config's probabilities) and the loss's gradient prepared
  std::uint64_t seed = 42;  // dropout's seed
  std::uint64_t step = 0;   // dropout's stream: every step draws fresh masks, the same ones when replayed
};

template <class Policy = policy<>>
class bert_qa {
  using precision = typename Policy::precision_policy;
  using A = typename precision::activation_type;
  using G = typename precision::gemm_input_type;
  static_assert(std::is_same_v<A, G>, "bert_qa keeps activations in the GEMM input type: they are the operands");
  template <class T>
  using buffer = typename Policy::template buffer<T>;

 public:
  using policy_type = Policy;

  /// A model with Hugging Face's initialisation, drawn from `init_seed`. config.validate() must pass.
  explicit bert_qa(const bert_config& config, std::uint64_t init_seed = 42);

  [[nodiscard]] const bert_config& config() const noexcept { return config_; }
  [[nodiscard]] const parameter_table& table() const noexcept { return table_; }
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

  /// Runs the model on `batch`; returns the QA loss when the batch has labels (NaN otherwise). The logits stay
  /// readable through start_logits()/end_logits() until the next forward.
  float forward(const qa_batch& batch, const forward_options& options = {});

  /// Called during backward with an offset: grads()[offset, end) are final for this backward — the head's, then
  /// each layer's from the last, then the embeddings' (offset 0). Data parallelism starts reducing those
  /// gradients while the earlier layers are still being differentiated.
  using gradients_ready = std::function<void(std::size_t offset)>;

  /// Back-propagates the loss of the last forward (which must have had labels), adding `loss_scale` times its
  /// gradient into grads() (loss_scale = 1 / accumulation steps averages accumulated micro-batches).
  void backward(float loss_scale = 1.0f, const gradients_ready& ready = {});

  /// [batch * seq] start and end logits of the last forward, as strided views (stride 2) over [tokens, 2].
  [[nodiscard]] float start_logit(std::size_t token) const { return logits_[token * 2]; }
  [[nodiscard]] float end_logit(std::size_t token) const { return logits_[token * 2 + 1]; }
  [[nodiscard]] std::span<const float> logits() const { return {logits_.data(), batch_ ? batch_->tokens() * 2 : 0}; }

  /// Bytes of the activations kept for backward at the current workspace size.
  [[nodiscard]] std::size_t activation_bytes() const { return kept_.size() * sizeof(A); }

 private:
  [[nodiscard]] std::size_t hidden() const { return static_cast<std::size_t>(config_.hidden_size); }
  [[nodiscard]] std::size_t inter() const { return static_cast<std::size_t>(config_.intermediate_size); }
  [[nodiscard]] const G* gemm_weights() const {
    if constexpr (std::is_same_v<G, float>) {
      return params_.data();
    } else {
      return gemm_weights_.data();
    }
  }
  [[nodiscard]] attention_shape attention_shape_of(const qa_batch& b) const {
    return attention_shape{b.batch, b.seq, static_cast<std::size_t>(config_.num_attention_heads),
                           static_cast<std::size_t>(config_.head_dim())};
  }
  [[nodiscard]] float hidden_dropout() const { return options_.training ? config_.hidden_dropout_prob : 0.0f; }
  // Dropout sites per step: the embeddings' and three per layer.
  [[nodiscard]] std::uint64_t stream(std::uint64_t site) const {
    return options_.step * (1 + 3 * layers_.size()) + site;
  }
  [[nodiscard]] layer_dropout layer_drop(std::size_t l) const {
    layer_dropout d;
    d.hidden_p = hidden_dropout();
    d.attention_p = options_.training ? config_.attention_probs_dropout_prob : 0.0f;
    d.seed = options_.seed;
    d.attention_stream = stream(1 + 3 * l);
    d.attention_output_stream = stream(2 + 3 * l);
    d.output_stream = stream(3 + 3 * l);
    return d;
  }
  [[nodiscard]] layer_scratch scratch() {
    return layer_scratch{scratch_h_[0].data(), scratch_h_[1].data(), scratch_h_[2].data(), scratch_h_[3].data(),
                         scratch_ff_.data()};
  }

  /// Sizes the workspace for batch x seq; grows only, so steady training allocates nothing.
  void prepare_workspace(std::size_t batch, std::size_t seq);
  template <class T>
  static void grow(buffer<T>& b, std::size_t n) {
    if (b.size() < n) b.resize(n);
  }

  bert_config config_;
  parameter_table table_;
  embeddings embeddings_;
  std::vector<encoder_layer> layers_;
  linear qa_outputs_;
  std::vector<std::size_t> layer_begin_;  // where each layer's parameters start in the flat buffers
  std::size_t head_begin_ = 0;            // where qa_outputs' parameters start
  buffer<float> params_, grads_;
  buffer<G> gemm_weights_;  // bf16 rounding of params_ under bf16 mixed precision; unused under fp32

  // Workspace.
  std::size_t capacity_tokens_ = 0, capacity_seq_ = 0, capacity_batch_ = 0, shaped_batch_ = 0, shaped_seq_ = 0;
  buffer<A> kept_;
  std::vector<layer_activations<A>> acts_;
  buffer<float> stats_;
  buffer<A> emb_sum_, final_hidden_;
  buffer<float> emb_mean_, emb_rstd_, hidden_, dhidden_, scratch_h_[4], scratch_ff_, key_mask_, logits_, dlogits_;
  const qa_batch* batch_ = nullptr;
  forward_options options_;
};

template <class Policy>
bert_qa<Policy>::bert_qa(const bert_config& config, std::uint64_t init_seed) : config_(config) {
  config_.validate();
  // Refused before the first allocation: a config that cannot fit would otherwise grow until the OOM killer.
  require_memory(model_memory(config_, sizeof(G)), read_memory_allowance(), "bert_qa");
  const auto H = static_cast<std::size_t>(config_.hidden_size);
  embeddings_ = embeddings::create(table_, static_cast<std::size_t>(config_.vocab_size), H,
                                   static_cast<std::size_t>(config_.max_position_embeddings),
                                   static_cast<std::size_t>(config_.type_vocab_size), config_.pad_token_id,
                                   config_.layer_norm_eps);
  for (int i = 0; i < config_.num_hidden_layers; ++i) {
    layer_begin_.push_back(table_.total_size());
    layers_.push_back(encoder_layer::create(
        table_, static_cast<std::size_t>(i), H, static_cast<std::size_t>(config_.num_attention_heads),
        static_cast<std::size_t>(config_.intermediate_size), config_.layer_norm_eps));
  }
  head_begin_ = table_.total_size();
  qa_outputs_ = linear::create(table_, "qa_outputs", H, 2);
  params_.assign(table_.total_size(), 0.0f);
  grads_.assign(table_.total_size(), 0.0f);
  hf_initialize(table_, params_, config_.initializer_range, config_.pad_token_id, init_seed);
  parameters_changed();
}

template <class Policy>
float bert_qa<Policy>::forward(const qa_batch& batch, const forward_options& options) {
  batch.validate(static_cast<std::size_t>(config_.vocab_size), static_cast<std::size_t>(config_.type_vocab_size),
                 static_cast<std::size_t>(config_.max_position_embeddings));
  prepare_workspace(batch.batch, batch.seq);
  batch_ = &batch;
  options_ = options;
  const std::size_t T = batch.tokens(), H = hidden();
  const attention_shape shape = attention_shape_of(batch);

  // Additive key mask, as HF's extended attention mask: (1 - mask) * float.min.
  for (std::size_t i = 0; i < T; ++i) {
    key_mask_[i] = batch.attention_mask[i] != 0 ? 0.0f : kernels::attention_mask_min;
  }

  float* h = hidden_.data();
  float* emb_sum = compute_into(emb_sum_.data(), scratch_h_[0].data());
  embeddings_.forward(params_.data(), batch.input_ids.data(), batch.token_type_ids.data(), batch.batch, batch.seq,
                      emb_sum, h, emb_mean_.data(), emb_rstd_.data());
  kernels::keep(emb_sum, emb_sum_.data(), T * H);
  kernels::dropout_forward(h, T * H, hidden_dropout(), options.seed, stream(0), h);

  for (std::size_t l = 0; l < layers_.size(); ++l) {
    kernels::keep(h, acts_[l].x, T * H);
    layers_[l].forward(gemm_weights(), params_.data(), shape, key_mask_.data(), layer_drop(l), acts_[l], scratch(), h);
  }
  kernels::keep(h, final_hidden_.data(), T * H);
  qa_outputs_.forward(gemm_weights(), params_.data(), final_hidden_.data(), T, logits_.data());
  if (!batch.has_labels()) return std::numeric_limits<float>::quiet_NaN();
  return qa_loss(logits_.data(), batch.start_positions.data(), batch.end_positions.data(), batch.batch, batch.seq,
                 dlogits_.data());
}

template <class Policy>
void bert_qa<Policy>::backward(float loss_scale, const gradients_ready& ready) {
  if (batch_ == nullptr || !batch_->has_labels()) {
    throw usage_error("bert_qa::backward: no forward pass with labels to differentiate");
  }
  const qa_batch& batch = *batch_;
  const std::size_t T = batch.tokens(), H = hidden();
  const attention_shape shape = attention_shape_of(batch);
  if (loss_scale != 1.0f) {
    for (std::size_t i = 0; i < T * 2; ++i) dlogits_[i] *= loss_scale;
  }
  float* dh = dhidden_.data();
  qa_outputs_.backward(gemm_weights(), grads_.data(), final_hidden_.data(), dlogits_.data(), T, dh);
  if (ready) ready(head_begin_);
  for (std::size_t l = layers_.size(); l-- > 0;) {
    layers_[l].backward(gemm_weights(), params_.data(), grads_.data(), shape, layer_drop(l), acts_[l], scratch(), dh);
    if (ready) ready(layer_begin_[l]);
  }
  kernels::dropout_backward(dh, T * H, hidden_dropout(), options_.seed, stream(0), dh);
  embeddings_.backward(params_.data(), grads_.data(), batch.input_ids.data(), batch.token_type_ids.data(), batch.batch,
                       batch.seq, emb_sum_.data(), emb_mean_.data(), emb_rstd_.data(), dh);
  if (ready) ready(0);
}

template <class Policy>
void bert_qa<Policy>::prepare_workspace(std::size_t batch, std::size_t seq) {
  if (batch * seq <= capacity_tokens_ && seq <= capacity_seq_ && batch <= capacity_batch_ &&
      (batch == shaped_batch_ && seq == shaped_seq_)) {
    return;
  }
  capacity_tokens_ = std::max(capacity_tokens_, batch * seq);
  capacity_seq_ = std::max(capacity_seq_, seq);
  capacity_batch_ = std::max(capacity_batch_, batch);
  shaped_batch_ = batch;
  shaped_seq_ = seq;
  const std::size_t T = batch * seq, H = hidden(), I = inter();
  const std::size_t heads = static_cast<std::size_t>(config_.num_attention_heads);
  const std::size_t needed = kept_per_layer(batch, seq, H, I, heads) * layers_.size();
  if (kept_.size() < needed) {
    require_memory(activation_memory(config_, sizeof(A), {batch, seq, "batch", "seq"}), read_memory_allowance(),
                   "bert_qa::forward");
    kept_.resize(needed);
  }
  acts_.assign(layers_.size(), layer_activations<A>{});
  stats_.resize(std::max(stats_.size(), 4 * T * layers_.size()));
  A* next = kept_.data();
  auto take = [&](std::size_t n) {
    A* p = next;
    next += n;
    return p;
  };
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    auto& a = acts_[l];
    a.x = take(T * H);
    a.q = take(T * H);
    a.k = take(T * H);
    a.v = take(T * H);
    a.probs = take(batch * heads * seq * seq);
    a.context = take(T * H);
    a.ln1_in = take(T * H);
    a.h1 = take(T * H);
    a.ff_in = take(T * I);
    a.ff_out = take(T * I);
    a.ln2_in = take(T * H);
    float* s = stats_.data() + 4 * T * l;
    a.ln1_mean = s;
    a.ln1_rstd = s + T;
    a.ln2_mean = s + 2 * T;
    a.ln2_rstd = s + 3 * T;
  }
  grow(emb_sum_, T * H);
  grow(final_hidden_, T * H);
  grow(emb_mean_, T);
  grow(emb_rstd_, T);
  grow(hidden_, T * H);
  grow(dhidden_, T * H);
  for (auto& s : scratch_h_) grow(s, T * H);
  grow(scratch_ff_, T * I);
  grow(key_mask_, T);
  grow(logits_, T * 2);
  grow(dlogits_, T * 2);
}

}  // namespace cputrain::nn
