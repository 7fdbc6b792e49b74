// cputrain-bench-scaling-inputs: the compute side of the scaling model (benchmarks/scaling_model.py,
// docs/scaling.md), measured on one process: forward, backward with the moment each layer's gradients are final
// (the model's ready callback, which is what hands buckets to the reducer), and clipping + AdamW; and the buckets
// the gradient reducer cuts for this model, laid out as the trainer lays them out (word table reduced apart).
//   cputrain-bench-scaling-inputs --layers L --hidden H --heads A --intermediate I --vocab V --seq S --batch B
//                                 --threads T --steps N [--warmup W] [--bucket-mb 25]
// Prints one JSON object: medians over the timed steps of forward_s, backward_s, optimizer_s, and ready_s (for
// each ready call of backward: its offset and the seconds since backward began), plus tensors and buckets.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "cputrain/distributed/gradient_reducer.hpp"
#include "cputrain/kernels/dropout.hpp"
#include "cputrain/nn/bert_qa.hpp"
#include "cputrain/optim/adamw.hpp"
#include "cputrain/optim/grad_clip.hpp"
#include "cputrain/policy/parallel/single.hpp"

namespace po = boost::program_options;
namespace ct = cputrain;

namespace {

struct settings {
  int layers = 2, hidden = 768, heads = 12, intermediate = 3072, seq = 384, batch = 4, threads = 1, steps = 5;
  int warmup = 1, vocab = 30522;
  double bucket_mb = 25;
};

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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

nlohmann::json run(const settings& s) {
  ct::nn::bert_config config;
  config.vocab_size = s.vocab;
  config.hidden_size = s.hidden;
  config.num_hidden_layers = s.layers;
  config.num_attention_heads = s.heads;
  config.intermediate_size = s.intermediate;
  config.max_position_embeddings = std::max(512, s.seq);
  ct::nn::bert_qa<ct::policy<>> model(config, 1);
  ct::optim::adamw_options options;
  options.lr = 1e-5;
  options.weight_decay = 0.01;
  ct::optim::adamw optimizer(model.params().size(), model.table().ranges(), options);
  const auto batch = random_batch(s);

  // The trainer's layout (trainer.hpp, attach_reducers): the word table is reduced by its used rows, so the
  // bucketed buffer starts at the second tensor.
  const auto& entries = model.table().entries();
  const std::size_t dense_begin = entries.at(1).offset;
  std::vector<std::size_t> offsets;
  for (const auto& e : entries)
    if (e.offset >= dense_begin) offsets.push_back(e.offset - dense_begin);
  ct::parallel::single::communicator one;
  ct::dist::reducer_options reduce_options;
  reduce_options.bucket_bytes = static_cast<std::size_t>(s.bucket_mb * (1 << 20));
  const ct::dist::basic_gradient_reducer<ct::parallel::single::communicator> reducer(
      one, model.grads().subspan(dense_begin), offsets, reduce_options);

  tbb::global_control control(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(s.threads));
  tbb::task_arena arena(s.threads);
  using clock = std::chrono::steady_clock;
  std::vector<double> forward, backward, optimizer_s;
  std::vector<std::size_t> ready_offsets;
  std::vector<std::vector<double>> ready_times;
  for (int step = 0; step < s.warmup + s.steps; ++step) {
    std::vector<std::pair<std::size_t, double>> ready;
    clock::time_point t0, t1, t2, t3;
    arena.execute([&] {
      model.zero_grad();
      t0 = clock::now();
      model.forward(batch, {.training = true, .seed = 1, .step = static_cast<std::uint64_t>(step)});
      t1 = clock::now();
      model.backward(1.0f, [&](std::size_t offset) {
        ready.emplace_back(offset, std::chrono::duration<double>(clock::now() - t1).count());
      });
      t2 = clock::now();
      ct::optim::clip_grad_norm(model.grads(), 1.0f);
      optimizer.step(model.params(), model.grads(), options.lr);
      model.parameters_changed();
      t3 = clock::now();
    });
    std::fprintf(stderr, "step %d: forward %.3f s, backward %.3f s, optimizer %.3f s%s\n", step,
                 std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
                 std::chrono::duration<double>(t3 - t2).count(), step < s.warmup ? " (warm-up)" : "");
    if (step < s.warmup) continue;
    forward.push_back(std::chrono::duration<double>(t1 - t0).count());
    backward.push_back(std::chrono::duration<double>(t2 - t1).count());
    optimizer_s.push_back(std::chrono::duration<double>(t3 - t2).count());
    ready_times.resize(ready.size());
    ready_offsets.clear();
    for (std::size_t i = 0; i < ready.size(); ++i) {
      ready_offsets.push_back(ready[i].first);
      ready_times[i].push_back(ready[i].second);
    }
  }
  nlohmann::json out;
  out["layers"] = s.layers;
  out["hidden"] = s.hidden;
  out["heads"] = s.heads;
  out["intermediate"] = s.intermediate;
  out["vocab"] = s.vocab;
  out["seq"] = s.seq;
  out["batch"] = s.batch;
  out["threads"] = s.threads;
  out["steps"] = s.steps;
  out["forward_s"] = median(forward);
  out["backward_s"] = median(backward);
  out["optimizer_s"] = median(optimizer_s);
  out["ready_s"] = nlohmann::json::array();
  for (std::size_t i = 0; i < ready_offsets.size(); ++i)
    out["ready_s"].push_back({ready_offsets[i], median(ready_times[i])});
  out["dense_begin"] = dense_begin;
  out["tensors"] = nlohmann::json::array();
  for (const auto& e : entries) out["tensors"].push_back({e.name, e.offset, e.size});
  out["bucket_bytes"] = reduce_options.bucket_bytes;
  out["buckets"] = reducer.buckets();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  po::options_description options("cputrain-bench-scaling-inputs options");
  options.add_options()("help,h", "show this help")("layers", po::value(&s.layers)->default_value(s.layers), "encoder layers")(
      "hidden", po::value(&s.hidden)->default_value(s.hidden), "hidden size")(
      "heads", po::value(&s.heads)->default_value(s.heads), "attention heads")(
      "intermediate", po::value(&s.intermediate)->default_value(s.intermediate), "feed-forward size")(
      "seq", po::value(&s.seq)->default_value(s.seq), "sequence length")(
      "batch", po::value(&s.batch)->default_value(s.batch), "sequences per step")(
      "threads", po::value(&s.threads)->default_value(s.threads), "threads")(
      "steps", po::value(&s.steps)->default_value(s.steps), "timed steps")(
      "warmup", po::value(&s.warmup)->default_value(s.warmup), "untimed steps first")(
      "vocab", po::value(&s.vocab)->default_value(s.vocab), "vocabulary size")(
      "bucket-mb", po::value(&s.bucket_mb)->default_value(s.bucket_mb), "reducer bucket size, MiB");
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
    if (s.bucket_mb < 0) throw ct::usage_error("--bucket-mb must be >= 0");
    if (s.hidden % s.heads != 0) throw ct::usage_error("--hidden must be divisible by --heads");
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-scaling-inputs: " << e.what() << "\n" << options << "\n";
    return 2;
  }
  try {
    std::cout << run(s).dump() << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "cputrain-bench-scaling-inputs: " << e.what() << "\n";
    return 1;
  }
}
