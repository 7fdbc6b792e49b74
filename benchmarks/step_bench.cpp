// cputrain-bench-step: one whole training step of BertForQuestionAnswering — forward, backward, gradient
// clipping and AdamW — timed over several steps after warm-up, on random weights and a random batch.
//   cputrain-bench-step --layers L --hidden H --heads A --intermediate I --seq S --batch B
//                       --precision fp32|bf16 --threads T --steps N [--warmup W] [--vocab V]
// Prints a human line per step and, as its last line, one JSON object with samples_per_s, tokens_per_s,
// gflops, peak_fraction (of this machine's FMA peak measured for T threads), peak_rss_mib and the settings.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "cputrain/kernels/dropout.hpp"
#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/optim/adamw.hpp"
#include "cputrain/optim/grad_clip.hpp"
#include "support/fma_peak.hpp"

namespace po = boost::program_options;
namespace ct = cputrain;

namespace {

struct settings {
  int layers = 2, hidden = 768, heads = 12, intermediate = 3072, seq = 384, batch = 4, threads = 1, steps = 5;
  int warmup = 1, vocab = 30522;
  std::string precision = "fp32";
};

/// Training FLOPs of one step: every matrix product three times (forward, and two in backward).
double step_flops(const settings& s) {
  const double T = static_cast<double>(s.batch) * s.seq, H = s.hidden, I = s.intermediate;
  const double per_layer = 2 * T * H * H * 4      // query, key, value, attention output
                           + 2 * T * H * I * 2    // intermediate, output
                           + 2 * T * s.seq * H * 2;  // scores and context, all heads
  return 3.0 * (per_layer * s.layers + 2 * T * H * 2);
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

ct::nn::qa_batch random_batch(const settings& s) {
  ct::nn::qa_batch b;
  b.batch = static_cast<std::size_t>(s.batch);
  b.seq = static_cast<std::size_t>(s.seq);
  for (std::size_t i = 0; i < b.tokens(); ++i) {
    const auto r = ct::kernels::counter_random(7, 0, i);
    b.input_ids.push_back(1 + static_cast<std::int32_t>(r % static_cast<std::uint64_t>(s.vocab - 1)));
    b.token_type_ids.push_back((i % b.seq) > b.seq / 4 ? 1 : 0);
    b.attention_mask.push_back(1);
  }
  for (std::size_t i = 0; i < b.batch; ++i) {
    b.start_positions.push_back(static_cast<std::int64_t>((i * 37) % b.seq));
    b.end_positions.push_back(static_cast<std::int64_t>((i * 37 + 5) % b.seq));
  }
  return b;
}

template <class Policy>
nlohmann::json run(const settings& s) {
  ct::nn::bert_config config;
  config.vocab_size = s.vocab;
  config.hidden_size = s.hidden;
  config.num_hidden_layers = s.layers;
  config.num_attention_heads = s.heads;
  config.intermediate_size = s.intermediate;
  config.max_position_embeddings = std::max(512, s.seq);
  ct::nn::bert_qa<Policy> model(config, 1);
  ct::optim::adamw_options options;
  options.lr = 1e-5;
  options.weight_decay = 0.01;
  ct::optim::adamw optimizer(model.params().size(), model.table().ranges(), options);
  const auto batch = random_batch(s);

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
  const double median = seconds[seconds.size() / 2];
  const double flops = step_flops(s);
  const double peak = ct::bench::fma_peak_flops(s.threads, 0.3);
  nlohmann::json out;
  out["implementation"] = "cputrain";
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
  out["activation_mib"] = static_cast<double>(model.activation_bytes()) / (1024.0 * 1024.0);
  out["parameters"] = model.table().parameter_count();
  out["final_loss"] = loss;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
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
      "vocab", po::value(&s.vocab)->default_value(s.vocab), "vocabulary size");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return 0;
    }
    for (auto [name, value] : {std::pair{"--layers", s.layers}, {"--hidden", s.hidden}, {"--heads", s.heads},
                               {"--intermediate", s.intermediate}, {"--seq", s.seq}, {"--batch", s.batch},
                               {"--threads", s.threads}, {"--steps", s.steps}, {"--vocab", s.vocab}}) {
      if (value < 1) throw ct::usage_error(std::string(name) + " must be a positive integer");
    }
    if (s.warmup < 0) throw ct::usage_error("--warmup must be >= 0");
    if (s.hidden % s.heads != 0) throw ct::usage_error("--hidden must be divisible by --heads");
    if (s.precision != "fp32" && s.precision != "bf16") throw ct::usage_error("--precision must be fp32 or bf16");
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-step: " << e.what() << "\n" << options << "\n";
    return 2;
  }
  try {
    const auto result = s.precision == "fp32" ? run<ct::policy<ct::precision::fp32>>(s)
                                              : run<ct::policy<ct::precision::bf16_mixed>>(s);
    std::cout << result.dump() << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-step: " << e.what() << "\n";
    return 1;
  }
}
