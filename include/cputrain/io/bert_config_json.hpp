// Hugging Face config.json <-> cputrain::nn::bert_config: read_bert_config(path) reads one as transformers writes
// it (unknown keys ignored, missing ones defaulted; a model_type cputrain does not implement is refused), write_bert_config(config, path)
// writes one from_pretrained loads, atomically and as save_pretrained formats it. Errors are io_error naming the
// file and the key.
#pragma once

#include "cputrain/core/json_nesting.hpp"

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/core/json_message.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/atomic_file.hpp"
#include "cputrain/io/io_error.hpp"
#include "cputrain/io/read_file.hpp"
#include "cputrain/nn/bert_config.hpp"

namespace cputrain::io {

// The reader's helpers, parsed only where the functions are defined (core/separate_compilation.hpp).
#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

inline std::string config_value_text(const nlohmann::json& value) { return json_text_for_message(value); }

/// The float as the double with the same shortest decimal, so nlohmann writes 0.1 rather than the exact value
/// of 0.1f (0.10000000149011612), as Python does for the same number.
inline double config_float(float value) {
  char buffer[64];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, value);
  double out = static_cast<double>(value);
  if (written.ec == std::errc()) (void)std::from_chars(buffer, written.ptr, out);
  return out;
}

class bert_config_reader {
 public:
  bert_config_reader(const std::filesystem::path& path, const nlohmann::json& json) : path_(path), json_(json) {}

  [[noreturn]] void fail(const std::string& problem) const { throw io_error(path_.string() + ": " + problem); }

  /// "\"key\"", appended piece by piece: GCC 12 reports a false -Wrestrict on "\"" + std::string (GCC bug 105651)
  /// wherever this gets inlined, which -Werror builds turn into an error.
  static std::string quoted(const char* key) {
    std::string out(1, '"');
    out += key;
    out += '"';
    return out;
  }

  [[noreturn]] void bad_type(const char* key, const nlohmann::json& value, const char* wanted) const {
    fail(quoted(key) + " is " + config_value_text(value) + ", but must be " + wanted);
  }

  void read(const char* key, int& field) const {
    const auto it = json_.find(key);
    if (it == json_.end()) return;
    // A JSON 768.0 is a float to Python too, and BertConfig would then build layers of size 768.0 and fail later:
    // integers must be written as integers.
    if (it->is_number_unsigned()) {
      const auto v = it->get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) bad_type(key, *it, "a 32-bit int");
      field = static_cast<int>(v);
    } else if (it->is_number_integer()) {
      const auto v = it->get<std::int64_t>();
      if (v < std::numeric_limits<int>::min()) bad_type(key, *it, "a 32-bit int");
      field = static_cast<int>(v);
    } else {
      bad_type(key, *it, "an integer");
    }
  }

  void read(const char* key, float& field) const {
    const auto it = json_.find(key);
    if (it == json_.end()) return;
    if (!it->is_number()) bad_type(key, *it, "a number");
    const double value = it->get<double>();
    // Converting a double beyond float's range is undefined behaviour; as infinity, validate() names it.
    constexpr double largest = std::numeric_limits<float>::max();
    if (value > largest || value < -largest) {
      field = value > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
    } else {
      field = static_cast<float>(value);
    }
  }

  void read(const char* key, std::string& field) const {
    const auto it = json_.find(key);
    if (it == json_.end()) return;
    if (!it->is_string()) bad_type(key, *it, "a string");
    field = it->get<std::string>();
  }

  /// A key that cputrain does not store but that must have one particular value (or be absent).
  void require_string(const char* key, std::string_view expected, const std::string& why) const {
    const auto it = json_.find(key);
    if (it == json_.end()) return;
    if (!it->is_string()) bad_type(key, *it, "a string");
    if (it->get_ref<const std::string&>() != expected) {
      fail(quoted(key) + " is " + config_value_text(*it) + ", but " + why);
    }
  }

  /// A string key that must be one of `allowed` (absent: the field keeps its default).
  void read_one_of(const char* key, std::string& field, std::span<const char* const> allowed) const {
    const auto it = json_.find(key);
    if (it == json_.end()) return;
    if (!it->is_string()) bad_type(key, *it, "a string");
    const auto& value = it->get_ref<const std::string&>();
    std::string known;
    for (const char* a : allowed) {
      if (value == a) {
        field = value;
        return;
      }
      known += std::string(known.empty() ? "" : ", ") + "\"" + a + "\"";
    }
    fail(quoted(key) + " is " + config_value_text(*it) + ", which cputrain does not implement; it implements " + known);
  }

  /// A number or null (Python's None): null and absent leave the field empty.
  void read_optional(const char* key, std::optional<float>& field) const {
    const auto it = json_.find(key);
    if (it == json_.end() || it->is_null()) return;
    float value = 0.0f;
    read(key, value);
    field = value;
  }

  /// id2label ({"0": "NEGATIVE", "1": "POSITIVE"}) into names by id; the ids must be 0 .. n-1.
  void read_label_names(std::vector<std::string>& names) const {
    const auto it = json_.find("id2label");
    if (it == json_.end() || it->is_null()) return;
    if (!it->is_object()) bad_type("id2label", *it, "an object of label names by id");
    std::vector<std::optional<std::string>> by_id(it->size());
    for (const auto& [key, value] : it->items()) {
      int id = -1;
      const auto parsed = std::from_chars(key.data(), key.data() + key.size(), id);
      if (parsed.ec != std::errc() || parsed.ptr != key.data() + key.size() || id < 0 ||
          static_cast<std::size_t>(id) >= by_id.size()) {
        fail("\"id2label\" has the key " + config_value_text(key) + ", but its keys must be the ids 0 to " +
             std::to_string(by_id.size() - 1));
      }
      if (!value.is_string()) fail("\"id2label\" names label " + key + " as " + config_value_text(value) + ", not as a string");
      by_id[static_cast<std::size_t>(id)] = value.get<std::string>();
    }
    names.clear();
    for (auto& name : by_id) names.push_back(std::move(*name));  // n distinct ids below n: every id is there
  }

  /// PretrainedConfig's keys of every family: the labels and the problem type.
  void read_label_fields(nn::bert_config& config) const {
    read_label_names(config.label_names);
    if (!config.label_names.empty()) {
      const int named = static_cast<int>(config.label_names.size());
      config.num_labels = named;
      read("num_labels", config.num_labels);  // written by hand only; validate() refuses a contradiction
      if (config.num_labels != named)
        fail("\"num_labels\" is " + std::to_string(config.num_labels) + ", but \"id2label\" names " +
             std::to_string(named) + " labels");
      // Hugging Face's own names are kept as "no names", so that a config reads back equal to what was written.
      const std::vector<std::string> named_by_hf = config.default_label_names();
      if (named_by_hf == config.label_names) config.label_names.clear();
    } else {
      read("num_labels", config.num_labels);
    }
    const auto it = json_.find("label2id");
    if (it != json_.end() && !it->is_null() && !it->is_object()) bad_type("label2id", *it, "an object of ids by label name");
    if (const auto p = json_.find("problem_type"); p == json_.end() || p->is_null()) return;
    static constexpr const char* problem_types[] = {"regression", "single_label_classification",
                                                    "multi_label_classification"};
    read_one_of("problem_type", config.problem_type, problem_types);
  }

  void require_not_true(const char* key, const std::string& why) const {
    const auto it = json_.find(key);
    if (it != json_.end() && it->is_boolean() && it->get<bool>()) {
      fail(quoted(key) + " is true, but " + why);
    }
  }

 private:
  const std::filesystem::path& path_;
  const nlohmann::json& json_;
};

}  // namespace detail

namespace detail {

/// DistilBertConfig's own keys into the BERT-named fields, with its defaults (6 layers, seq_classif_dropout 0.2,
/// LayerNorm eps fixed at 1e-12 in its modeling code whatever the file says).
inline void read_distilbert_fields(const bert_config_reader& reader, nn::bert_config& config) {
  reader.require_not_true("sinusoidal_pos_embds", "cputrain implements learned position embeddings only");
  config.num_hidden_layers = 6;
  reader.read("vocab_size", config.vocab_size);
  reader.read("max_position_embeddings", config.max_position_embeddings);
  reader.read("dim", config.hidden_size);
  reader.read("n_layers", config.num_hidden_layers);
  reader.read("n_heads", config.num_attention_heads);
  reader.read("hidden_dim", config.intermediate_size);
  reader.read("dropout", config.hidden_dropout_prob);
  reader.read("attention_dropout", config.attention_probs_dropout_prob);
  reader.read("activation", config.hidden_act);
  reader.read("initializer_range", config.initializer_range);
  reader.read("qa_dropout", config.qa_dropout);
  reader.read("seq_classif_dropout", config.seq_classif_dropout);
  reader.read("pad_token_id", config.pad_token_id);
  reader.read_label_fields(config);
  config.layer_norm_eps = 1e-12f;
}

}  // namespace detail
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

namespace detail {

/// DistilBertConfig's keys, as save_pretrained writes them.
CPUTRAIN_DECL nlohmann::json distilbert_config_json(const nn::bert_config& config, const std::string& class_name);

}  // namespace detail

/// Reads a Hugging Face BERT config.json (see the header comment for what is accepted). Throws io_error.
[[nodiscard]] CPUTRAIN_DECL nn::bert_config read_bert_config(const std::filesystem::path& config_json);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL nn::bert_config read_bert_config(const std::filesystem::path& config_json) {
  const std::string text = read_whole_file(config_json);
  // nlohmann would stop at a NUL byte as if the input ended there; JSON text cannot contain one.
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    throw io_error(config_json.string() + ": not valid JSON: a NUL byte at offset " + std::to_string(nul));
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text, json_nesting_limit<nlohmann::json>([&] {
      throw io_error(config_json.string() + ": not a config.json: the JSON nests deeper than " +
                     std::to_string(json_max_nesting) + " levels");
    }));
  } catch (const nlohmann::json::exception& e) {
    throw io_error(config_json.string() + ": not valid JSON: " + e.what());
  }
  if (!json.is_object()) {
    throw io_error(config_json.string() + ": the top level is " + std::string(json.type_name()) +
                   ", not a JSON object");
  }
  const detail::bert_config_reader reader(config_json, json);
  nn::bert_config config;
  reader.read_one_of("model_type", config.model_type, nn::supported_model_types);
  reader.require_string("position_embedding_type", "absolute", "cputrain implements absolute position embeddings only");
  reader.require_not_true("is_decoder", "cputrain implements the encoder only");
  reader.require_not_true("add_cross_attention", "cputrain implements the encoder only");
  // RobertaConfig's default padding id (and so its first position) is 1, BertConfig's 0; ElectraConfig's sizes
  // are ELECTRA-small's discriminator's.
  if (config.positions_after_padding()) config.pad_token_id = 1;
  if (config.model_type == "electra") {
    config.hidden_size = 256;
    config.num_attention_heads = 4;
    config.intermediate_size = 1024;
    int embedding_size = 128;
    reader.read("embedding_size", embedding_size);
    config.embedding_size = embedding_size;
  }
  if (config.distilbert()) {
    detail::read_distilbert_fields(reader, config);
    try {
      config.validate();
    } catch (const usage_error& e) {
      throw io_error(config_json.string() + ": " + e.what());
    }
    return config;
  }

  reader.read("vocab_size", config.vocab_size);
  reader.read("hidden_size", config.hidden_size);
  reader.read("num_hidden_layers", config.num_hidden_layers);
  reader.read("num_attention_heads", config.num_attention_heads);
  reader.read("intermediate_size", config.intermediate_size);
  reader.read("max_position_embeddings", config.max_position_embeddings);
  reader.read("type_vocab_size", config.type_vocab_size);
  reader.read("layer_norm_eps", config.layer_norm_eps);
  reader.read("hidden_dropout_prob", config.hidden_dropout_prob);
  reader.read("attention_probs_dropout_prob", config.attention_probs_dropout_prob);
  reader.read("initializer_range", config.initializer_range);
  reader.read("pad_token_id", config.pad_token_id);
  reader.read("hidden_act", config.hidden_act);
  reader.read_optional("classifier_dropout", config.classifier_dropout);
  reader.read_label_fields(config);
  try {
    config.validate();
  } catch (const usage_error& e) {
    throw io_error(config_json.string() + ": " + e.what());
  }
  return config;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

/// PretrainedConfig's keys that save_pretrained writes only when they differ from its defaults: the labels'
/// names (with label2id, derived from them) when not "LABEL_<i>" of two labels, and problem_type when set.
inline void add_label_fields(const nn::bert_config& config, nlohmann::json& json) {
  const std::vector<std::string> names = config.label_names.empty() ? config.default_label_names() : config.label_names;
  if (config.num_labels != 2 || !config.label_names.empty()) {
    nlohmann::json id2label = nlohmann::json::object(), label2id = nlohmann::json::object();
    for (std::size_t id = 0; id < names.size(); ++id) {
      id2label[std::to_string(id)] = names[id];
      label2id[names[id]] = id;
    }
    json["id2label"] = std::move(id2label);
    json["label2id"] = std::move(label2id);
  }
  if (!config.problem_type.empty()) json["problem_type"] = config.problem_type;
}

}  // namespace detail
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// Hugging Face's class-name prefix of a model_type: "Bert", "Roberta", "XLMRoberta".
[[nodiscard]] CPUTRAIN_DECL std::string hf_class_prefix(const std::string& model_type);

/// Writes `config` as a config.json that transformers loads (architectures = [architecture], by default the
/// model_type's *ForQuestionAnswering; absolute position embeddings), atomically. usage_error if the config does
/// not validate; io_error on failure to write.
CPUTRAIN_DECL void write_bert_config(const nn::bert_config& config, const std::filesystem::path& path,
                                     std::string_view architecture = {});

/// Writes a model's config.json with its head's Hugging Face class as `architectures` ("RobertaForSequenceClassification"),
/// so that AutoModel and the pipelines pick the head that was trained.
template <class Model>
void write_model_config(const Model& model, const std::filesystem::path& path) {
  write_bert_config(model.config(), path,
                    hf_class_prefix(model.config().model_type) + Model::head_type::hf_class_suffix);
}

#if CPUTRAIN_DEFINE_FUNCTIONS
namespace detail {

CPUTRAIN_DECL nlohmann::json distilbert_config_json(const nn::bert_config& config, const std::string& class_name) {
  return {
      {"activation", config.hidden_act},
      {"architectures", nlohmann::json::array({class_name})},
      {"attention_dropout", config_float(config.attention_probs_dropout_prob)},
      {"dim", config.hidden_size},
      {"dropout", config_float(config.hidden_dropout_prob)},
      {"hidden_dim", config.intermediate_size},
      {"initializer_range", config_float(config.initializer_range)},
      {"max_position_embeddings", config.max_position_embeddings},
      {"model_type", "distilbert"},
      {"n_heads", config.num_attention_heads},
      {"n_layers", config.num_hidden_layers},
      {"pad_token_id", config.pad_token_id},
      {"qa_dropout", config_float(config.qa_dropout)},
      {"seq_classif_dropout", config_float(config.seq_classif_dropout)},
      {"sinusoidal_pos_embds", false},
      {"vocab_size", config.vocab_size},
  };
}

}  // namespace detail

CPUTRAIN_DECL std::string hf_class_prefix(const std::string& model_type) {
  if (model_type == "roberta") return "Roberta";
  if (model_type == "xlm-roberta") return "XLMRoberta";
  if (model_type == "distilbert") return "DistilBert";
  if (model_type == "electra") return "Electra";
  return "Bert";
}

CPUTRAIN_DECL void write_bert_config(const nn::bert_config& config, const std::filesystem::path& path,
                                     std::string_view architecture) {
  config.validate();
  const std::string class_name =
      architecture.empty() ? hf_class_prefix(config.model_type) + "ForQuestionAnswering" : std::string(architecture);
  if (config.distilbert()) {
    nlohmann::json json = detail::distilbert_config_json(config, class_name);
    detail::add_label_fields(config, json);
    write_file_atomically(path, json.dump(2) + "\n");
    return;
  }
  // nlohmann::json keeps object keys sorted, which gives the sort_keys=True order save_pretrained uses.
  nlohmann::json json = {
      {"architectures", nlohmann::json::array({class_name})},
      {"attention_probs_dropout_prob", detail::config_float(config.attention_probs_dropout_prob)},
      {"classifier_dropout", config.classifier_dropout ? nlohmann::json(detail::config_float(*config.classifier_dropout))
                                                       : nlohmann::json(nullptr)},
      {"hidden_act", config.hidden_act},
      {"hidden_dropout_prob", detail::config_float(config.hidden_dropout_prob)},
      {"hidden_size", config.hidden_size},
      {"initializer_range", detail::config_float(config.initializer_range)},
      {"intermediate_size", config.intermediate_size},
      {"layer_norm_eps", detail::config_float(config.layer_norm_eps)},
      {"max_position_embeddings", config.max_position_embeddings},
      {"model_type", config.model_type},
      {"num_attention_heads", config.num_attention_heads},
      {"num_hidden_layers", config.num_hidden_layers},
      {"pad_token_id", config.pad_token_id},
      {"position_embedding_type", "absolute"},
      {"type_vocab_size", config.type_vocab_size},
      {"use_cache", true},
      {"vocab_size", config.vocab_size},
  };
  if (config.embedding_size) json["embedding_size"] = *config.embedding_size;
  detail::add_label_fields(config, json);
  write_file_atomically(path, json.dump(2) + "\n");
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::io
