// The user guide's example (docs/user-guide.md, "From your own C++ code"): a question-answering BERT trained and
// evaluated through the library directly, without run_qa. It reads a directory written by
// cputrain-make-demo-data (model/, train.json, dev.json), trains from scratch in bf16 mixed precision, hangs three
// callbacks on the trainer, evaluates with the SQuAD v2.0 metric and saves a Hugging Face model directory.
//
//   train_qa DATA_DIR OUTPUT_DIR [STEPS]
//
// Exit status: 0; 2 for a usage error; 1 for anything else, with the message.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include <cputrain/cputrain.hpp>

namespace ct = cputrain;
namespace fs = std::filesystem;

// Precision, parallelism and allocator, chosen at compile time. fp32 instead: ct::precision::fp32. This policy's
// model and trainer are among those cputrain::instances holds prebuilt (CMakeLists.txt).
using policy = ct::policy<ct::precision::bf16_mixed, ct::parallel::single, ct::alloc::numa_local>;

int main(int argc, char** argv) {
  try {
    ct::check_cpu_supports_build();  // a clear message instead of SIGILL on a CPU older than the build's flags
    if (argc < 3 || argc > 4) {
      std::fprintf(stderr, "usage: %s DATA_DIR OUTPUT_DIR [STEPS]\n", argv[0]);
      return 2;
    }
    const fs::path data = argv[1];
    const fs::path out = argv[2];
    int steps = 300;
    if (argc == 4) {
      const std::string text = argv[3];
      std::size_t used = 0;
      try {
        steps = std::stoi(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != text.size() || steps < 1) {
        std::fprintf(stderr, "train_qa: STEPS \"%s\" is not a positive whole number\n", text.c_str());
        return 2;
      }
    }

    // The machine: NUMA nodes, threads by the guide's rule (or OMP_NUM_THREADS), one pinned arena per node.
    const auto layout = policy::parallel_policy::discover(ct::topology::detect(), {});
    std::printf("%s", layout.describe().c_str());
    ct::numa_arenas arenas(layout.nodes, layout.threads);

    return arenas.execute(0, [&] {
      // Model and tokenizer: config.json and the tokenizer files as Hugging Face writes them.
      const auto tokenizer = ct::text::load_tokenizer(data / "model");
      const auto config = ct::io::read_bert_config(data / "model" / "config.json");
      ct::nn::bert_qa<policy> model(config, /*init_seed=*/42);
      // To fine-tune instead: ct::io::load_weights(model, dir / "model.safetensors", ct::io::weight_loading::pretrained);

      // SQuAD files to features: [CLS] question [SEP] window [SEP], with answer positions for training.
      const auto train_set = ct::data::read_squad(data / "train.json");
      ct::data::qa_feature_options options;
      options.max_seq_length = 128;
      options.doc_stride = 32;
      const auto train_features = ct::data::make_qa_features(train_set, tokenizer, options);
      std::printf("%zu training features of %zu questions\n", train_features.size(), train_set.examples.size());

      // The training loop's options: Hugging Face's TrainingArguments, by their field names.
      ct::train::training_options train_options;
      train_options.output_dir = out.string();
      train_options.per_device_train_batch_size = 32;
      train_options.learning_rate = 2e-3;
      train_options.max_steps = steps;
      train_options.logging_steps = 100;
      train_options.save_steps = 150;
      train_options.group_by_length = true;
      train_options.pad_to_max_length = false;  // each batch padded to its longest window

      // Callbacks: observe the loop; none of them can change it.
      ct::train::trainer_callbacks callbacks;
      double lowest_loss = 1e30;
      callbacks.on_log = [&](const nlohmann::ordered_json& entry) {  // the trainer has printed the entry itself
        lowest_loss = std::min(lowest_loss, entry["loss"].get<double>());
      };
      callbacks.on_step_end = [&](const ct::train::trainer_state& state) {
        if (state.global_step == 1) std::printf("first step done, epoch %.4f\n", state.epoch);
      };
      callbacks.on_save = [](const fs::path& checkpoint) { std::printf("saved %s\n", checkpoint.c_str()); };
      callbacks.save_tokenizer = [&](const fs::path& dir) {  // checkpoints then hold the tokenizer files too
        ct::train::save_tokenizer(tokenizer, config.max_position_embeddings, dir);
      };

      ct::train::qa_trainer<policy> trainer(model, train_options, callbacks);
      const auto result = trainer.train(train_features);
      std::printf("%lld steps in %.1f s (%.1f steps/s), lowest logged loss %.4f\n",
                  static_cast<long long>(result.global_step), result.train_runtime, result.train_steps_per_second,
                  lowest_loss);

      // Evaluation: logits, answers as run_qa.py's post-processing picks them, the official SQuAD v2.0 metric.
      const auto dev_set = ct::data::read_squad(data / "dev.json");
      options.labels = false;
      const auto dev_features = ct::data::make_qa_features(dev_set, tokenizer, options);
      const auto logits = trainer.predict(dev_features);
      ct::data::qa_postprocess_options post;
      post.version_2_with_negative = true;
      const auto answers = ct::data::postprocess_qa_predictions(dev_set, dev_features, logits.start, logits.end,
                                                                logits.row_length, post);
      const auto scores = ct::data::evaluate_squad_v2(dev_set, answers.as_map());
      std::printf("eval: exact %.2f, f1 %.2f over %zu questions\n", scores.exact, scores.f1, scores.total);

      // model.safetensors, config.json and the tokenizer files, as save_pretrained leaves them.
      ct::train::save_pretrained(out, model, tokenizer);
      std::printf("model written to %s\n", out.c_str());
      return 0;
    });
  } catch (const ct::usage_error& e) {
    std::fprintf(stderr, "train_qa: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_qa: %s\n", e.what());
    return 1;
  }
}
