// A BERT small enough to train many steps in a unit test, over the demo vocabulary, with a few dozen demo
// questions made into features (64 tokens, stride 16): the start the trainer and checkpoint tests share.
#pragma once

#include <cstddef>
#include <string>

#include "cputrain/data/qa_features.hpp"
#include "cputrain/nn/bert_config.hpp"
#include "cputrain/text/load_bert_tokenizer.hpp"
#include "demo/demo_model.hpp"
#include "demo/demo_squad.hpp"
#include "support/temp_dir.hpp"

namespace cputrain::test {

struct tiny_qa_run {
  temp_dir dir;
  nn::bert_config config;
  data::qa_features features;

  /// The model's files in dir/model; `paragraphs` demo paragraphs of three questions each.
  explicit tiny_qa_run(const std::string& prefix, std::size_t paragraphs) : dir(prefix) {
    config = demo::demo_bert_config();
    config.hidden_size = 16;
    config.num_hidden_layers = 1;
    config.num_attention_heads = 2;
    config.intermediate_size = 32;
    config.max_position_embeddings = 128;
    demo::write_demo_model_dir(dir.path() / "model", config);
    const auto tokenizer = text::load_bert_tokenizer(dir.path() / "model");
    demo::demo_squad_options demo;
    demo.paragraphs = paragraphs;
    demo.questions_per_paragraph = 3;
    data::qa_feature_options options;
    options.max_seq_length = 64;
    options.doc_stride = 16;
    features = data::make_qa_features(demo::make_demo_squad(demo), tokenizer, options);
  }
};

}  // namespace cputrain::test
