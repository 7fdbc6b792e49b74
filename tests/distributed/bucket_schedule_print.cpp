// Prints, as JSON, the buckets gradient_reducer.hpp cuts for a BERT of the given shape laid out as trainer.hpp
// lays it out (the word table reduced apart by sparse_row_reducer), so that benchmarks/scaling_model.py can be
// checked against the reducer itself rather than against a copy of its rule.
//   bucket_schedule_print LAYERS HIDDEN INTERMEDIATE VOCAB BUCKET_BYTES
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/distributed/gradient_reducer.hpp"
#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/policy/parallel/single.hpp"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: bucket_schedule_print LAYERS HIDDEN INTERMEDIATE VOCAB BUCKET_BYTES\n";
    return 2;
  }
  namespace ct = cputrain;
  ct::nn::bert_config config;
  config.num_hidden_layers = std::stoi(argv[1]);
  config.hidden_size = std::stoi(argv[2]);
  config.intermediate_size = std::stoi(argv[3]);
  config.vocab_size = std::stoi(argv[4]);
  config.num_attention_heads = config.hidden_size % 64 == 0 ? config.hidden_size / 64 : 1;
  const ct::nn::bert_qa<ct::policy<>> model(config, 1);
  // As qa_trainer's attach_reducers: the dense buffer starts after the word table, the first tensor.
  const auto& entries = model.table().entries();
  const std::size_t dense_begin = entries.at(1).offset;
  std::vector<std::size_t> offsets;
  for (const auto& e : entries)
    if (e.offset >= dense_begin) offsets.push_back(e.offset - dense_begin);
  std::vector<float> grads(model.table().total_size() - dense_begin);
  ct::parallel::single::communicator one;
  ct::dist::reducer_options options;
  options.bucket_bytes = std::stoull(argv[5]);
  const ct::dist::basic_gradient_reducer<ct::parallel::single::communicator> reducer(one, grads, offsets, options);
  nlohmann::json out;
  out["dense_begin"] = dense_begin;
  out["buckets"] = reducer.buckets();
  std::cout << out.dump() << "\n";
  return 0;
}
