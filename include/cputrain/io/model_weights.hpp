// A model's weights as safetensors with Hugging Face's tensor names, so checkpoints move between cputrain and
// PyTorch unchanged: save_weights(model, path) (F32, atomically) and load_weights(model, path [, mode]), where
// weight_loading::exact (our checkpoints) wants every tensor and no other, and ::pretrained (a published
// checkpoint, as from_pretrained loads it) reports what it ignored and what it initialised.
#pragma once

#include "cputrain/io/safetensors.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/io_error.hpp"
#include "cputrain/nn/parameters.hpp"

namespace cputrain::io {

enum class weight_loading { exact, pretrained };

struct weight_load_report {
  std::vector<std::string> initialized;  // model tensors absent from the file, left as initialised
  std::vector<std::string> mismatched;   // "name: [3, 768] in the file, [2, 768] in the model", re-initialised
  std::vector<std::string> ignored;      // file tensors the model has no use for
};

/// How pretrained loading treats a file tensor whose shape differs from the model's (transformers'
/// from_pretrained(ignore_mismatched_sizes=...)): refused by default; re-initialised and reported when asked.
struct pretrained_options {
  bool ignore_mismatched_sizes = false;
};

namespace detail {

/// The file tensor that holds model tensor `name` under pretrained loading, or "" when there is none: the name
/// itself, without the family's prefix (a bare BertModel, RobertaModel, DistilBertModel or ElectraModel
/// checkpoint), or in the TensorFlow-era LayerNorm names (gamma, beta).
CPUTRAIN_DECL std::string pretrained_source(const safetensors_file& file, const std::string& name,
                                            const std::string& prefix);

/// File tensors Hugging Face ties to a tensor the model already has (a masked-LM decoder is the word table):
/// read as used, not reported, and not loaded twice.
template <class Model>
std::vector<std::string> tied_copies(const Model& model) {
  if constexpr (requires { Model::head_type::tied_copies(model.config()); }) {
    return Model::head_type::tied_copies(model.config());
  } else {
    return {};
  }
}

/// Weights are floats: an I64 tensor (which safetensors_file reads, for other uses) under a weight's name is
/// refused before anything is read, so a failed load leaves the model as it was.
CPUTRAIN_DECL void require_float_weights(const safetensors_file& file, const std::vector<std::string>& names);

/// Which file tensor loads into which model tensor (model name -> file name), filling the report's initialized
/// and mismatched lists and naming the file tensors passed over for their shape in `reinitialised`; io_error
/// naming every encoder tensor the file lacks and every refused shape.
template <class Model>
std::map<std::string, std::string> match_pretrained(const Model& model, const safetensors_file& file,
                                                    const pretrained_options& options, weight_load_report& report,
                                                    std::vector<std::string>& reinitialised) {
  std::map<std::string, std::string> source_of;
  std::vector<std::string> missing;
  std::string wrong_shapes;
  for (const auto& p : model.table().entries()) {
    const std::string source = pretrained_source(file, p.name, model.config().weights_prefix());
    // The head (and BERT's pooler, which a masked-LM checkpoint lacks) starts as Hugging Face initialises it
    // when the file does not have it; the encoder is what fine-tuning starts from and must be there.
    const bool head = p.offset >= model.head_offset();
    if (source.empty()) {
      (head ? report.initialized : missing).push_back(p.name);
      continue;
    }
    const auto& info = file.info(source);
    if (info.shape != p.shape) {
      const std::string both = source + ": shape " + shape_text(info.shape) + " in the file, " + shape_text(p.shape) +
                               " in the model";
      if (options.ignore_mismatched_sizes) {
        report.mismatched.push_back(both);
        reinitialised.push_back(source);
      } else {
        wrong_shapes += "\n  " + both;
      }
      continue;
    }
    source_of[p.name] = source;
  }
  if (!missing.empty() || !wrong_shapes.empty()) {
    std::string message = file.path().string() + ": cannot fine-tune from these weights:";
    for (const auto& m : missing) message += "\n  missing " + m;
    message += wrong_shapes;
    message += wrong_shapes.empty() ? "\n(is config.json the one these weights were trained with?)"
                                    : "\n(another config.json, or a head of another size, such as another "
                                      "num_labels: to train new tensors of the model's shapes in their place, "
                                      "ask for ignore_mismatched_sizes)";
    throw io_error(message);
  }
  return source_of;
}

/// Pretrained loading (weight_loading::pretrained): see load_weights.
template <class Model>
weight_load_report load_pretrained(Model& model, const safetensors_file& file, const pretrained_options& options) {
  weight_load_report report;
  std::vector<std::string> reinitialised;
  const std::map<std::string, std::string> source_of = match_pretrained(model, file, options, report, reinitialised);
  std::map<std::string, bool> used;
  for (const auto& name : reinitialised) used[name] = true;  // reported as mismatched, not as unused
  std::vector<std::string> sources;
  for (const auto& [model_name, file_name] : source_of) {
    used[file_name] = true;
    sources.push_back(file_name);
  }
  for (const auto& tied : tied_copies(model)) used[tied] = true;
  require_float_weights(file, sources);
  for (const auto& name : file.names()) {
    if (!used.contains(name)) report.ignored.push_back(name);
  }
  for (const auto& p : model.table().entries()) {
    const auto it = source_of.find(p.name);
    if (it != source_of.end()) file.read_float(it->second, model.params().subspan(p.offset, p.size));
  }
  model.parameters_changed();
  return report;
}

}  // namespace detail

/// Reads the weights of `file_path` into model.params() (laid out by model.table()) and calls
/// model.parameters_changed(). Throws io_error naming the file and every problem, a tensor whose checksum does not
/// match included; on any error the model is left as it was.
///
/// weight_loading::pretrained is transformers' from_pretrained: the file may be a base model's (with or without
/// the family's prefix) or another head's; the head's tensors it lacks keep their initialisation, tensors of the
/// file the model does not use are reported, and a tensor of another shape is refused naming both shapes unless
/// `options` asks to re-initialise it.
template <class Model>
weight_load_report load_weights(Model& model, const std::filesystem::path& file_path,
                                weight_loading mode = weight_loading::exact, const pretrained_options& options = {}) {
  const auto file = safetensors_file::open(file_path);
  // Always, before anything is read into the model: hashing runs at memory speed, a small part of what reading
  // the file from disk costs (docs/benchmarks.md), and training on silently damaged weights costs far more.
  file.verify_checksums();
  if (mode == weight_loading::pretrained) return detail::load_pretrained(model, file, options);
  const nn::parameter_table& table = model.table();
  std::vector<expected_tensor> expected;
  for (const auto& p : table.entries()) expected.push_back(expected_tensor{p.name, p.shape});
  check_tensors(file, expected);
  std::vector<std::string> names;
  for (const auto& p : table.entries()) names.push_back(p.name);
  detail::require_float_weights(file, names);
  for (const auto& p : table.entries()) file.read_float(p.name, model.params().subspan(p.offset, p.size));
  model.parameters_changed();
  return {};
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

#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

CPUTRAIN_DECL std::string pretrained_source(const safetensors_file& file, const std::string& name,
                                            const std::string& prefix) {
  std::vector<std::string> candidates{name};
  if (name.starts_with(prefix + ".")) candidates.push_back(name.substr(prefix.size() + 1));
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

CPUTRAIN_DECL void require_float_weights(const safetensors_file& file, const std::vector<std::string>& names) {
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
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::io
