// cputrain::nn::encoder — the transformer encoder every head sits on (BertModel or RobertaModel without the
// pooler, DistilBertModel, ElectraModel): embeddings, dropout, ELECTRA's embeddings_project when the embedding
// width differs from hidden_size, then num_hidden_layers post-LayerNorm layers, under the config's model_type's
// names, position rule and layer shape. It registers its tensors in a parameter registry, describes
// the workspace a batch needs (encoder_workspace::lay_out), and runs forward and backward over views into a model's
// flat buffers; encoder_model.hpp owns those buffers and composes the encoder with a head.
#pragma once

#include "cputrain/kernels/softmax.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cputrain/kernels/dropout.hpp"
#include "cputrain/kernels/fused.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "cputrain/nn/embeddings.hpp"
#include "cputrain/nn/encoder_batch.hpp"
#include "cputrain/nn/encoder_layer.hpp"
#include "cputrain/nn/linear.hpp"
#include "cputrain/nn/parameters.hpp"

namespace cputrain::nn {

struct forward_options {
  bool training = true;     // dropout on (with the config's probabilities) and the loss's gradient prepared
  std::uint64_t seed = 42;  // dropout's seed
  std::uint64_t step = 0;   // dropout's stream: every step draws fresh masks, the same ones when replayed
  /// false: evaluation that will not call backward; every layer then reuses one layer's activation buffers, so a
  /// forward keeps 1/layers of the activations training keeps.
  bool keep_activations = true;
};

/// Called during backward with an offset: a model's grads()[offset, end) are final for this backward — the
/// head's, then each layer's from the last, then the embeddings' (offset 0). Data parallelism starts reducing
/// those gradients while the earlier layers are still being differentiated.
using gradients_ready = std::function<void(std::size_t offset)>;

/// The encoder's part of a batch's workspace. T = batch * seq tokens, H hidden, I intermediate.
template <class A>
struct encoder_workspace {
  float* key_mask = nullptr;  // [T] additive attention mask
  A* emb_sum = nullptr;       // [T, E] the embeddings' LayerNorm input, kept (E: embedding width, H unless ELECTRA's)
  float* emb_mean = nullptr;  // [T]
  float* emb_rstd = nullptr;  // [T]
  float* emb_out = nullptr;   // [T, E] the embeddings' output when projected; else the residual stream itself
  A* projected = nullptr;     // [T, E] emb_out after dropout, kept (the operand of embeddings_project)
  float* hidden = nullptr;    // [T, H] the residual stream; the encoder's output after forward
  float* dhidden = nullptr;   // [T, H] its gradient: the head writes it, backward consumes it
  layer_scratch scratch;
  std::vector<layer_activations<A>> layers;

  /// Takes the pieces for `layers` layers from a workspace description (workspace_layout.hpp). The memory bill
  /// describes one layer and multiplies (layers_to_lay_out = 1); the model lays out all of them.
  template <class Carver>
  static encoder_workspace lay_out(Carver& c, const bert_config& config, std::uint64_t batch, std::uint64_t seq,
                                   std::size_t layers_to_lay_out) {
    const auto H = static_cast<std::uint64_t>(config.hidden_size);
    const auto I = static_cast<std::uint64_t>(config.intermediate_size);
    const std::uint64_t T = batch * seq;  // the caller's tally has checked batch x seq
    const auto E = static_cast<std::uint64_t>(config.embedding_width());
    encoder_workspace w;
    w.key_mask = c.scratch({T});
    w.emb_sum = c.kept({T, E});
    w.emb_mean = c.kept_float({T});
    w.emb_rstd = c.kept_float({T});
    if (config.projects_embeddings()) {
      w.emb_out = c.scratch({T, E});
      w.projected = c.kept({T, E});
    }
    w.hidden = c.scratch({T, H});
    w.dhidden = c.scratch({T, H});
    w.scratch = layer_scratch::lay_out(c, T, H, I);
    for (std::size_t l = 0; l < layers_to_lay_out; ++l) {
      w.layers.push_back(layer_activations<A>::lay_out(c, batch, seq, H, I,
                                                       static_cast<std::uint64_t>(config.num_attention_heads)));
    }
    return w;
  }
};

struct encoder {
  bert_config config;
  embeddings input;
  linear project;  // ELECTRA's embeddings_project [H, E], when config.projects_embeddings()
  std::vector<encoder_layer> layers;
  std::vector<std::size_t> layer_begin;  // where each layer's tensors start in the flat buffers

  /// Registers the embeddings' tensors and then every layer's, under Hugging Face's names.
  template <parameter_registry R>
  static encoder create(R& table, const bert_config& config) {
    encoder e;
    e.config = config;
    e.input = create_embeddings(table, config);
    if (config.projects_embeddings()) e.project = create_projection(table, config);
    for (int i = 0; i < config.num_hidden_layers; ++i) {
      e.layer_begin.push_back(table.total_size());
      e.layers.push_back(create_layer(table, config, static_cast<std::size_t>(i)));
    }
    return e;
  }

  /// The encoder's share of the flat buffer, counted without building it: the embeddings, and one layer's tensors
  /// num_hidden_layers times (a hostile layer count costs nothing to refuse).
  static void tally(parameter_tally& tally, const bert_config& config) {
    create_embeddings(tally, config);
    if (config.projects_embeddings()) create_projection(tally, config);
    parameter_tally layer(tally.what());
    create_layer(layer, config, 0);
    tally.add_copies(layer, static_cast<std::uint64_t>(config.num_hidden_layers));
  }

  /// Dropout streams the encoder draws from per step: the embeddings' and three per layer.
  [[nodiscard]] std::uint64_t dropout_sites() const noexcept { return 1 + 3 * layers.size(); }

  /// w.hidden[T, H] = the last layer's output for `batch`. `first_stream` is the step's first dropout stream.
  template <class A, class TW>
  void forward(const TW* gemm_weights, const float* params, const encoder_batch& batch,
               const forward_options& options, std::uint64_t first_stream, encoder_workspace<A>& w) const {
    const std::size_t T = batch.tokens(), H = hidden();
    // Additive key mask, as HF's extended attention mask: (1 - mask) * float.min.
    for (std::size_t i = 0; i < T; ++i) {
      w.key_mask[i] = batch.attention_mask[i] != 0 ? 0.0f : kernels::attention_mask_min;
    }
    float* h = w.hidden;
    const std::size_t E = input.hidden;
    float* emb_out = config.projects_embeddings() ? w.emb_out : h;
    float* emb_sum = compute_into(w.emb_sum, w.scratch.h_a);  // [T, E] fits: E <= H (bert_config::validate)
    input.forward(params, batch.input_ids.data(), batch.token_type_ids.data(), batch.batch, batch.seq, emb_sum,
                  emb_out, w.emb_mean, w.emb_rstd);
    kernels::keep(emb_sum, w.emb_sum, T * E);
    kernels::dropout_forward(emb_out, T * E, hidden_dropout(options), options.seed, first_stream, emb_out);
    if (config.projects_embeddings()) {  // h[T, H] = embeddings_project(dropout(embeddings))
      kernels::keep(emb_out, w.projected, T * E);
      project.forward(gemm_weights, params, w.projected, T, h);
    }
    const attention_shape shape = shape_of(batch);
    for (std::size_t l = 0; l < layers.size(); ++l) {
      kernels::keep(h, w.layers[l].x, T * H);
      layers[l].forward(gemm_weights, params, shape, w.key_mask, layer_drop(options, first_stream, l), w.layers[l],
                        w.scratch, h);
    }
  }

  /// Back-propagates w.dhidden (the gradient of the last forward's output, consumed) into `grads`, calling
  /// `ready` after each layer and after the embeddings.
  template <class A, class TW>
  void backward(const TW* gemm_weights, const float* params, float* grads, const encoder_batch& batch,
                const forward_options& options, std::uint64_t first_stream, encoder_workspace<A>& w,
                const gradients_ready& ready) const {
    const std::size_t T = batch.tokens();
    const attention_shape shape = shape_of(batch);
    float* dh = w.dhidden;
    for (std::size_t l = layers.size(); l-- > 0;) {
      layers[l].backward(gemm_weights, params, grads, shape, layer_drop(options, first_stream, l), w.layers[l],
                         w.scratch, dh);
      if (ready) ready(layer_begin[l]);
    }
    float* d_emb = dh;
    if (config.projects_embeddings()) {
      d_emb = w.emb_out;
      project.backward(gemm_weights, grads, w.projected, dh, T, d_emb);
    }
    const std::size_t E = input.hidden;
    kernels::dropout_backward(d_emb, T * E, hidden_dropout(options), options.seed, first_stream, d_emb);
    input.backward(params, grads, batch.input_ids.data(), batch.token_type_ids.data(), batch.batch, batch.seq,
                   w.emb_sum, w.emb_mean, w.emb_rstd, d_emb);
    if (ready) ready(0);
  }

  [[nodiscard]] std::size_t hidden() const noexcept { return static_cast<std::size_t>(config.hidden_size); }

 private:
  template <parameter_registry R>
  static embeddings create_embeddings(R& table, const bert_config& c) {
    return embeddings::create(table, c.weights_prefix(), static_cast<std::size_t>(c.vocab_size),
                              static_cast<std::size_t>(c.embedding_width()),
                              static_cast<std::size_t>(c.max_position_embeddings),
                              static_cast<std::size_t>(c.type_vocab_size), c.pad_token_id, c.layer_norm_eps,
                              c.positions_after_padding() ? position_rule::after_padding : position_rule::index,
                              !c.distilbert());
  }
  template <parameter_registry R>
  static linear create_projection(R& table, const bert_config& c) {
    return linear::create(table, c.weights_prefix() + ".embeddings_project",
                          static_cast<std::size_t>(c.embedding_width()), static_cast<std::size_t>(c.hidden_size));
  }
  template <parameter_registry R>
  static encoder_layer create_layer(R& table, const bert_config& c, std::size_t index) {
    const layer_names names =
        c.distilbert() ? layer_names::distilbert(index) : layer_names::bert(c.weights_prefix(), index);
    return encoder_layer::create(table, names,
                                 static_cast<std::size_t>(c.hidden_size),
                                 static_cast<std::size_t>(c.num_attention_heads),
                                 static_cast<std::size_t>(c.intermediate_size), c.layer_norm_eps);
  }

  [[nodiscard]] attention_shape shape_of(const encoder_batch& b) const {
    return attention_shape{b.batch, b.seq, static_cast<std::size_t>(config.num_attention_heads),
                           static_cast<std::size_t>(config.head_dim())};
  }
  [[nodiscard]] float hidden_dropout(const forward_options& o) const {
    return o.training ? config.hidden_dropout_prob : 0.0f;
  }
  [[nodiscard]] layer_dropout layer_drop(const forward_options& o, std::uint64_t first_stream, std::size_t l) const {
    layer_dropout d;
    d.hidden_p = hidden_dropout(o);
    d.attention_output_p = config.distilbert() ? 0.0f : d.hidden_p;
    d.attention_p = o.training ? config.attention_probs_dropout_prob : 0.0f;
    d.seed = o.seed;
    d.attention_stream = first_stream + 1 + 3 * l;
    d.attention_output_stream = first_stream + 2 + 3 * l;
    d.output_stream = first_stream + 3 + 3 * l;
    return d;
  }
};

}  // namespace cputrain::nn
