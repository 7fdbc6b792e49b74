// A model's weights as safetensors with Hugging Face's tensor names, so checkpoints move between cputrain and
// PyTorch unchanged: save_weights(model, path) (F32, atomically) and load_weights(model, path [, mode]), where
// weight_loading::exact (our checkpoints) wants every tensor and no other, and ::pretrained (a published BERT)
// accepts its naming variants and reports what it ignored and what it left initialised.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cputrain/io/io_error.hpp"
#include "cputrain/io/safetensors.hpp"
#include "cputrain/nn/parameters.hpp"

namespace cputrain::io {

enum class weight_loading { exact, pretrained };

struct weight_load_report {
  std::vector<std::string> initialized;  // model tensors absent from the file, left as initialised
  std::vector<std::string> ignored;      // file tensors the model has no use for
};

namespace detail {

/// The file tensor that holds model tensor `name` under pretrained loading, or "" when there is none.
inline std::string pretrained_source(const safetensors_file& file, const std::string& name) {
  std::vector<std::string> candidates{name};
  for (const std::string prefix : {"bert.", "roberta."}) {  // saved from a bare BertModel or RobertaModel
    if (name.starts_with(prefix)) candidates.push_back(name.substr(prefix.size()));
  }
  std::vector<std::string> with_old_names;
  for (const auto& c : candidates) {
    if (c.ends_with("LayerNorm.weight")) with_old_names.push_back(c.substr(0, c.size() - 6) + "gamma");
    if (c.ends_with("LayerNorm.bias")) with_old_names.push_back(c.substr(0, c.size() - 4) + "beta");
  }
  candidates.insert(candidates.end(), with_old_names.begin(), with_old_names.end());
  for (const auto& c : candidates) {
    if (file.contains(c)) return c;
  }
  return {};
}

/// Weights are floats: an I64 tensor (which safetensors_file reads, for other uses) under a weight's name is
/// refused before anything is read, so a failed load leaves the model as it was.
inline void require_float_weights(const safetensors_file& file, const std::vector<std::string>& names) {
  std::string bad;
  for (const auto& name : names) {
    const auto& info = file.info(name);
    if (info.dtype == dtype::i64)
      bad += "\n  " + detail::quote_for_message(name) + " is " + std::string(to_string(info.dtype)) +
             ", not a floating-point weight (F32, BF16 or F16)";
  }
  if (!bad.empty()) throw io_error(file.path().string() + ": weights of the wrong dtype:" + bad);
}

}  // namespace detail

/// Reads the weights of `file_path` into model.params() (laid out by model.table()) and calls
/// model.parameters_changed(). Throws io_error naming the file and every problem, a tensor whose checksum does not
/// match included.
template <class Model>
weight_load_report load_weights(Model& model, const std::filesystem::path& file_path,
                                weight_loading mode = weight_loading::exact) {
  const auto file = safetensors_file::open(file_path);
  // Always, before anything is read into the model: hashing runs at memory speed, a small part of what reading
  // the file from disk costs (docs/benchmarks.md), and training on silently damaged weights costs far more.
  file.verify_checksums();
  const nn::parameter_table& table = model.table();
  weight_load_report report;
  if (mode == weight_loading::exact) {
    std::vector<expected_tensor> expected;
    for (const auto& p : table.entries()) expected.push_back(expected_tensor{p.name, p.shape});
    check_tensors(file, expected);
    std::vector<std::string> names;
    for (const auto& p : table.entries()) names.push_back(p.name);
    detail::require_float_weights(file, names);
    for (const auto& p : table.entries()) file.read_float(p.name, model.params().subspan(p.offset, p.size));
    model.parameters_changed();
    return report;
  }

  std::map<std::string, std::string> source_of;  // model name -> file name
  std::vector<std::string> missing;
  std::string wrong_shapes;
  for (const auto& p : table.entries()) {
    const std::string source = detail::pretrained_source(file, p.name);
    if (source.empty()) {
      if (p.name.starts_with("qa_outputs.")) {
        report.initialized.push_back(p.name);
      } else {
        missing.push_back(p.name);
      }
      continue;
    }
    const auto& info = file.info(source);
    if (info.shape != p.shape) {
      wrong_shapes += "\n  " + source + ": shape " + detail::shape_text(info.shape) + " in the file, " +
                      detail::shape_text(p.shape) + " in the model";
    }
    source_of[p.name] = source;
  }
  if (!missing.empty() || !wrong_shapes.empty()) {
    std::string message = file_path.string() + ": cannot fine-tune from these weights:";
    for (const auto& m : missing) message += "\n  missing " + m;
    message += wrong_shapes;
    message += "\n(is config.json the one these weights were trained with?)";
    throw io_error(message);
  }
  std::map<std::string, bool> used;
  std::vector<std::string> sources;
  for (const auto& [model_name, file_name] : source_of) {
    used[file_name] = true;
    sources.push_back(file_name);
  }
  detail::require_float_weights(file, sources);
  for (const auto& name : file.names()) {
    if (!used.contains(name)) report.ignored.push_back(name);
  }
  for (const auto& p : table.entries()) {
    const auto it = source_of.find(p.name);
    if (it != source_of.end()) file.read_float(it->second, model.params().subspan(p.offset, p.size));
  }
  model.parameters_changed();
  return report;
}

/// Writes model.params() as F32 safetensors with the table's names, atomically, with the metadata
/// {"format": "pt"} that transformers expects of a PyTorch checkpoint (and the writer's checksums).
template <class Model>
void save_weights(const Model& model, const std::filesystem::path& file_path) {
  safetensors_writer writer;
  for (const auto& p : model.table().entries()) {
    const auto values = model.params().subspan(p.offset, p.size);
    writer.add_borrowed(p.name, dtype::f32, p.shape, std::as_bytes(values));
  }
  writer.set_metadata("format", "pt");
  writer.write(file_path);
}

}  // namespace cputrain::io
