// cputrain::nn::bert_qa<Policy> — Hugging Face's BertForQuestionAnswering: the encoder (encoder.hpp, no pooler)
// with the span QA head (qa_head.hpp), as an encoder_model of the policy's precision and allocator:
//   bert_qa<policy<>> model(config, seed);  float loss = model.forward(batch, {.training = true, ...});
//   model.backward();  /* optimizer over model.params() / model.grads() */  model.parameters_changed();
// The policy's parallelism is not part of the type: bert_qa<policy<P, parallel::per_socket>> is the same model as
// bert_qa<policy<P>>.
#pragma once

#include "cputrain/nn/encoder_model.hpp"
#include "cputrain/nn/qa_head.hpp"
#include "cputrain/policy/policy.hpp"

namespace cputrain::nn {

template <class Policy = policy<>>
using bert_qa = encoder_model<qa_head, typename Policy::precision_policy, typename Policy::allocator_policy>;

}  // namespace cputrain::nn
