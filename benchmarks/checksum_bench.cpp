// What the per-tensor checksums (io/tensor_checksum.hpp) cost on a
// BERT-base-size file (108.9 M F32 values, about 436 MB, 199 tensors shaped as
// bert-base-uncased's): writing it with the checksums, and, with the file in
// the page cache, opening it and verifying every tensor against reading every
// tensor into floats, which every load does anyway. Usage:
// cputrain-bench-checksum [directory for the file, default /tmp]. Results:
// docs/benchmarks.md.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cputrain/io/safetensors.hpp"

namespace {

namespace io = cputrain::io;

struct shaped {
  std::string name;
  std::vector<std::int64_t> shape;
};

std::vector<shaped> bert_base_tensors() {
  constexpr std::int64_t h = 768, ff = 3072;
  std::vector<shaped> t = {{"bert.embeddings.word_embeddings.weight", {30522, h}},
                           {"bert.embeddings.position_embeddings.weight", {512, h}},
                           {"bert.embeddings.token_type_embeddings.weight", {2, h}},
                           {"bert.embeddings.LayerNorm.weight", {h}},
                           {"bert.embeddings.LayerNorm.bias", {h}},
                           {"qa_outputs.weight", {2, h}},
                           {"qa_outputs.bias", {2}}};
  for (int l = 0; l < 12; ++l) {
    const std::string p = "bert.encoder.layer." + std::to_string(l) + ".";
    for (const char* m :
         {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"}) {
      t.push_back({p + m + ".weight", {h, h}});
      t.push_back({p + m + ".bias", {h}});
    }
    t.push_back({p + "intermediate.dense.weight", {ff, h}});
    t.push_back({p + "intermediate.dense.bias", {ff}});
    t.push_back({p + "output.dense.weight", {h, ff}});
    t.push_back({p + "output.dense.bias", {h}});
    for (const char* ln : {"attention.output.LayerNorm", "output.LayerNorm"}) {
      t.push_back({p + ln + ".weight", {h}});
      t.push_back({p + ln + ".bias", {h}});
    }
  }
  return t;
}

template <class F>
double best_ms(int repeats, F&& f) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path path = std::filesystem::path(argc > 1 ? argv[1] : "/tmp") / "checksum_bench.safetensors";
  const auto tensors = bert_base_tensors();
  std::vector<std::vector<float>> values;
  std::size_t total = 0;
  for (const auto& t : tensors) {
    std::int64_t n = 1;
    for (const auto d : t.shape) n *= d;
    values.emplace_back(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < values.back().size(); ++i) values.back()[i] = static_cast<float>(i % 977) * 1e-3f;
    total += values.back().size();
  }
  io::safetensors_writer writer;
  for (std::size_t i = 0; i < tensors.size(); ++i)
    writer.add_borrowed(tensors[i].name, io::dtype::f32, tensors[i].shape,
                        std::as_bytes(std::span<const float>(values[i])));
  const double write_ms = best_ms(3, [&] { writer.write(path); });
  std::vector<float> out;
  const auto read_all = [&](const io::safetensors_file& file) {
    for (const auto& t : tensors) {
      out.resize(static_cast<std::size_t>(file.info(t.name).numel));
      file.read_float(t.name, out);
    }
  };
  // What a load did before the checksums, what it does now, and the hashing alone on a file already mapped.
  const double read_ms = best_ms(5, [&] { read_all(io::safetensors_file::open(path)); });
  const double load_ms = best_ms(5, [&] {
    const auto file = io::safetensors_file::open(path);
    file.verify_checksums();
    read_all(file);
  });
  const auto mapped = io::safetensors_file::open(path);
  read_all(mapped);
  const double hash_ms = best_ms(5, [&] { mapped.verify_checksums(); });
  const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  std::printf("file: %zu tensors, %zu values, %.1f MB\n", tensors.size(), total, mb);
  std::printf("write (atomic, synced, with checksums): %.0f ms\n", write_ms);
  std::printf("open + read_float of every tensor (page cache): %.0f ms\n", read_ms);
  std::printf("open + verify_checksums + read_float of every tensor (page cache): %.0f ms (+%.0f%%)\n", load_ms,
              100.0 * (load_ms - read_ms) / read_ms);
  std::printf("verify_checksums alone, file mapped: %.0f ms (%.1f GB/s)\n", hash_ms, mb / hash_ms);
  std::filesystem::remove(path);
}
