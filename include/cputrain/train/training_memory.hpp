// cputrain::train::training_memory — the memory bill of fine-tuning an encoder model with a head (bert_qa by
// default), from the config and the options alone: the model's buffers, AdamW's two moments and the activations of
// the larger of the training and evaluation batches. The trainer requires its part before allocating it; run_qa
// requires the whole bill before building anything and prints it in its header.
#pragma once

#include "cputrain/nn/model_memory.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

#include "cputrain/machine/memory_bill.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "cputrain/nn/qa_head.hpp"
#include "cputrain/train/training_options.hpp"

namespace cputrain::train {

/// AdamW's first and second moments: two floats per parameter.
template <class Head = nn::qa_head>
[[nodiscard]] memory_bill optimizer_memory(const nn::bert_config& config) {
  memory_bill bill;
  bill.add("AdamW moments", 8.0 * static_cast<double>(nn::parameter_count<Head>(config)), nn::parameter_cause(config));
  return bill;
}

/// The workspace of the training batch at sequence length `seq`, or of the evaluation batch when `evaluates` and
/// it is the larger. `prefix` goes before the option names in the causes ("--" for a command line).
template <class Head = nn::qa_head>
[[nodiscard]] memory_bill batch_memory(const nn::bert_config& config, const training_options& options,
                                              std::size_t activation_bytes, std::size_t seq, bool evaluates,
                                              const std::string& prefix = "") {
  const bool eval_larger = evaluates && options.per_device_eval_batch_size > options.per_device_train_batch_size;
  const int batch = eval_larger ? options.per_device_eval_batch_size : options.per_device_train_batch_size;
  const std::string batch_name = eval_larger ? "per_device_eval_batch_size" : "per_device_train_batch_size";
  const nn::activation_shape shape{static_cast<std::size_t>(std::max(1, batch)), seq, prefix + batch_name,
                                   prefix + "max_seq_length"};
  return nn::activation_memory<Head>(config, activation_bytes, shape);
}

/// Everything training allocates beyond what the process holds before the model exists. `gemm_input_bytes` is
/// the policy's matrix-product input size (2 for bf16 mixed precision, 4 for fp32); the rest as batch_memory.
template <class Head = nn::qa_head>
[[nodiscard]] memory_bill training_memory(const nn::bert_config& config, const training_options& options,
                                                 std::size_t gemm_input_bytes, std::size_t seq, bool evaluates,
                                                 const std::string& prefix = "") {
  memory_bill bill = nn::model_memory<Head>(config, gemm_input_bytes);
  bill.add(optimizer_memory<Head>(config));
  bill.add(batch_memory<Head>(config, options, gemm_input_bytes, seq, evaluates, prefix));
  return bill;
}

}  // namespace cputrain::train
