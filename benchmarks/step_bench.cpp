// cputrain-bench-step: one whole training step — forward, backward, gradient clipping and AdamW — of an encoder
// with a task head, timed over several steps after warm-up, on random weights and a random batch: BERT question
// answering by default, or sequence classification (GLUE's shape) on any family, e.g. DistilBERT or RoBERTa.
//   cputrain-bench-step --layers L --hidden H --heads A --intermediate I --seq S --batch B
//                       --precision fp32|bf16 --threads T --steps N [--warmup W] [--vocab V]
//                       [--model_type bert|roberta|xlm-roberta|distilbert|electra]
//                       [--head qa|sequence_classification] [--num_labels N]
// Prints a human line per step and, as its last line, one JSON object with samples_per_s, tokens_per_s,
// gflops, peak_fraction (of this machine's FMA peak measured for T threads), peak_rss_mib and the settings.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "cputrain/kernels/dropout.hpp"
#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/nn/sequence_classification_batch.hpp"
#include "cputrain/nn/sequence_classification_head.hpp"
#include "cputrain/optim/adamw.hpp"
#include "cputrain/optim/grad_clip.hpp"
#include "support/fma_peak.hpp"

namespace po = boost::program_options;
namespace ct = cputrain;

namespace {

struct settings {
  int layers = 2, hidden = 768, heads = 12, intermediate = 3072, seq = 384, batch = 4, threads = 1, steps = 5;
  int warmup = 1, vocab = 30522, num_labels = 2;
  std::string precision = "fp32", model_type = "bert", head = "qa";

  [[nodiscard]] bool classifies_sequences() const { return head == "sequence_classification"; }
};

/// Training FLOPs of one step: every matrix product three times (forward, and two in backward).
double step_flops(const settings& s) {
  const double B = s.batch, T = B * s.seq, H = s.hidden, I = s.intermediate;
  const double per_layer = 2 * T * H * H * 4      // query, key, value, attention output
                           + 2 * T * H * I * 2    // intermediate, output
                           + 2 * T * s.seq * H * 2;  // scores and context, all heads
  // Every family's sequence head reads only the first token, through an H x H layer (BERT's pooler, RoBERTa's
  // and ELECTRA's classifier.dense, DistilBERT's pre_classifier) and then H x num_labels; QA reads every token.
  const double head = s.classifies_sequences() ? 2 * B * H * H + 2 * B * H * s.num_labels : 2 * T * H * 2;
  return 3.0 * (per_layer * s.layers + head);
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

/// The benchmarked model's config, with the family's own defaults where they differ from BERT's.
ct::nn::bert_config make_config(const settings& s) {
  ct::nn::bert_config config;
  config.model_type = s.model_type;
  config.vocab_size = s.vocab;
  config.hidden_size = s.hidden;
  config.num_hidden_layers = s.layers;
  config.num_attention_heads = s.heads;
  config.intermediate_size = s.intermediate;
  config.num_labels = s.num_labels;
  config.max_position_embeddings = std::max(512, s.seq);
  if (config.positions_after_padding()) {
    // RobertaConfig's: real tokens' positions start after the padding id 1 (514 rows for 512 tokens), one segment.
    config.pad_token_id = 1;
    config.type_vocab_size = 1;
    config.max_position_embeddings = std::max(514, s.seq + 2);
  }
  return config;
}

/// Ids skip the padding id, which RoBERTa would place at the padding position. Only BERT's and ELECTRA's inputs
/// get a second segment: RoBERTa has one token type and DistilBERT none.
template <class Batch>
Batch random_inputs(const settings& s, const ct::nn::bert_config& config) {
  Batch b;
  b.batch = static_cast<std::size_t>(s.batch);
  b.seq = static_cast<std::size_t>(s.seq);
  const auto first_id = static_cast<std::uint64_t>(config.pad_token_id) + 1;
  const bool segments = config.type_vocab_size > 1 && !config.distilbert();
  for (std::size_t i = 0; i < b.tokens(); ++i) {
    const auto r = ct::kernels::counter_random(7, 0, i);
    b.input_ids.push_back(static_cast<std::int32_t>(first_id + r % (static_cast<std::uint64_t>(s.vocab) - first_id)));
    b.token_type_ids.push_back(segments && (i % b.seq) > b.seq / 4 ? 1 : 0);
    b.attention_mask.push_back(1);
  }
  return b;
}

void add_labels(const settings&, ct::nn::qa_batch& b) {
  for (std::size_t i = 0; i < b.batch; ++i) {
    b.start_positions.push_back(static_cast<std::int64_t>((i * 37) % b.seq));
    b.end_positions.push_back(static_cast<std::int64_t>((i * 37 + 5) % b.seq));
  }
}

/// One class id per sequence; with a single label Hugging Face regresses (STS-B), so then a score in [0, 5).
void add_labels(const settings& s, ct::nn::sequence_classification_batch& b) {
  for (std::size_t i = 0; i < b.batch; ++i) {
    if (s.num_labels == 1)
      b.label_values.push_back(static_cast<float>(i % 5));
    else
      b.labels.push_back(static_cast<std::int64_t>(i % static_cast<std::size_t>(s.num_labels)));
  }
}

template <class Batch>
Batch random_batch(const settings& s, const ct::nn::bert_config& config) {
  auto b = random_inputs<Batch>(s, config);
  add_labels(s, b);
  return b;
}

/// Warm-up, then the timed steps: their seconds, sorted, and the last step's loss.
template <class Model>
std::pair<std::vector<double>, float> time_steps(const settings& s, Model& model,
                                                 const typename Model::batch_type& batch) {
  ct::optim::adamw_options options;
  options.lr = 1e-5;
  options.weight_decay = 0.01;
  ct::optim::adamw optimizer(model.params().size(), model.table().ranges(), options);
  tbb::global_control control(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(s.threads));
  tbb::task_arena arena(s.threads);
  std::vector<double> seconds;
  float loss = 0;
  for (int step = 0; step < s.warmup + s.steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    arena.execute([&] {
      model.zero_grad();
      loss = model.forward(batch, {.training = true, .seed = 1, .step = static_cast<std::uint64_t>(step)});
      model.backward();
      ct::optim::clip_grad_norm(model.grads(), 1.0f);
      optimizer.step(model.params(), model.grads(), options.lr);
      model.parameters_changed();
    });
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "step %d: %.3f s, loss %.4f%s\n", step, took, static_cast<double>(loss),
                 step < s.warmup ? " (warm-up)" : "");
    if (step >= s.warmup) seconds.push_back(took);
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds, loss};
}

/// The JSON line's settings and rates for a step of `median` seconds.
nlohmann::json report(const settings& s, double median, float loss) {
  const double flops = step_flops(s);
  const double peak = ct::bench::fma_peak_flops(s.threads, 0.3);
  nlohmann::json out;
  out["implementation"] = "cputrain";
  out["model_type"] = s.model_type;
  out["head"] = s.head;
  if (s.classifies_sequences()) out["num_labels"] = s.num_labels;
  out["precision"] = s.precision;
  out["layers"] = s.layers;
  out["hidden"] = s.hidden;
  out["heads"] = s.heads;
  out["intermediate"] = s.intermediate;
  out["seq"] = s.seq;
  out["batch"] = s.batch;
  out["threads"] = s.threads;
  out["steps"] = s.steps;
  out["step_seconds_median"] = median;
  out["samples_per_s"] = s.batch / median;
  out["tokens_per_s"] = static_cast<double>(s.batch) * s.seq / median;
  out["gflops"] = flops / median * 1e-9;
  out["measured_peak_gflops"] = peak * 1e-9;
  out["peak_fraction"] = flops / median / peak;
  out["peak_rss_mib"] = peak_rss_mib();
  out["final_loss"] = loss;
  return out;
}

template <class Model>
nlohmann::json run(const settings& s, const ct::nn::bert_config& config) {
  Model model(config, 1);
  const auto batch = random_batch<typename Model::batch_type>(s, config);
  const auto [seconds, loss] = time_steps(s, model, batch);
  auto out = report(s, seconds[seconds.size() / 2], loss);
  out["activation_mib"] = static_cast<double>(model.activation_bytes()) / (1024.0 * 1024.0);
  out["parameters"] = model.table().parameter_count();
  return out;
}

template <class Head, class Policy>
using model_with = ct::nn::encoder_model<Head, typename Policy::precision_policy, typename Policy::allocator_policy>;

template <class Policy>
nlohmann::json run_head(const settings& s, const ct::nn::bert_config& config) {
  if (s.classifies_sequences()) return run<model_with<ct::nn::sequence_classification_head, Policy>>(s, config);
  return run<ct::nn::bert_qa<Policy>>(s, config);
}

po::options_description describe(settings& s) {
  po::options_description options("cputrain-bench-step options");
  options.add_options()("help,h", "show this help")("layers", po::value(&s.layers)->default_value(s.layers), "encoder layers")(
      "hidden", po::value(&s.hidden)->default_value(s.hidden), "hidden size")(
      "heads", po::value(&s.heads)->default_value(s.heads), "attention heads")(
      "intermediate", po::value(&s.intermediate)->default_value(s.intermediate), "feed-forward size")(
      "seq", po::value(&s.seq)->default_value(s.seq), "sequence length")(
      "batch", po::value(&s.batch)->default_value(s.batch), "sequences per step")(
      "precision", po::value(&s.precision)->default_value(s.precision), "fp32 or bf16")(
      "threads", po::value(&s.threads)->default_value(s.threads), "threads")(
      "steps", po::value(&s.steps)->default_value(s.steps), "timed steps")(
      "warmup", po::value(&s.warmup)->default_value(s.warmup), "untimed steps first")(
      "vocab", po::value(&s.vocab)->default_value(s.vocab), "vocabulary size")(
      "model_type", po::value(&s.model_type)->default_value(s.model_type),
      "bert, roberta, xlm-roberta, distilbert or electra")(
      "head", po::value(&s.head)->default_value(s.head), "qa or sequence_classification")(
      "num_labels", po::value(&s.num_labels)->default_value(s.num_labels),
      "classes of sequence_classification (1: regression)");
  return options;
}

/// Throws usage_error naming the first option the benchmark cannot run with.
void check(const settings& s) {
  for (auto [name, value] : {std::pair{"--layers", s.layers}, {"--hidden", s.hidden}, {"--heads", s.heads},
                             {"--intermediate", s.intermediate}, {"--seq", s.seq}, {"--batch", s.batch},
                             {"--threads", s.threads}, {"--steps", s.steps}, {"--vocab", s.vocab},
                             {"--num_labels", s.num_labels}}) {
    if (value < 1) throw ct::usage_error(std::string(name) + " must be a positive integer");
  }
  if (s.warmup < 0) throw ct::usage_error("--warmup must be >= 0");
  if (s.hidden % s.heads != 0) throw ct::usage_error("--hidden must be divisible by --heads");
  if (s.precision != "fp32" && s.precision != "bf16") throw ct::usage_error("--precision must be fp32 or bf16");
  const auto& types = ct::nn::supported_model_types;
  if (std::find(std::begin(types), std::end(types), s.model_type) == std::end(types))
    throw ct::usage_error("--model_type must be bert, roberta, xlm-roberta, distilbert or electra");
  if (s.head != "qa" && !s.classifies_sequences())
    throw ct::usage_error("--head must be qa or sequence_classification");
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  const auto options = describe(s);
  ct::nn::bert_config config;
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return 0;
    }
    check(s);
    config = make_config(s);
    config.validate();
    if (s.vocab < config.pad_token_id + 2)  // the random ids skip the padding id
      throw ct::usage_error("--vocab must be at least " + std::to_string(config.pad_token_id + 2) + " for " +
                            s.model_type);
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-step: " << e.what() << "\n" << options << "\n";
    return 2;
  }
  try {
    const auto result = s.precision == "fp32" ? run_head<ct::policy<ct::precision::fp32>>(s, config)
                                              : run_head<ct::policy<ct::precision::bf16_mixed>>(s, config);
    std::cout << result.dump() << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-step: " << e.what() << "\n";
    return 1;
  }
}
