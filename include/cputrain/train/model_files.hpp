// A Hugging Face model directory, in and out: find_model_files (what --model_name_or_path, --config_name and
// --tokenizer_name point at, or a usage_error naming the flag; a pickle checkpoint gets the command converting it),
// check_model_fits_tokenizer (a vocabulary the model's embeddings cannot index), and save_pretrained (the
// directory transformers' save_pretrained writes, which AutoModelForQuestionAnswering / AutoTokenizer load).
#pragma once

#include "cputrain/io/bert_config_json.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cputrain/core/error.hpp"
#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/io/atomic_file.hpp"
#include "cputrain/io/model_weights.hpp"
#include "cputrain/text/bert_tokenizer.hpp"
#include "cputrain/text/load_bert_tokenizer.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/tokenizer.hpp"
#include "cputrain/text/tokenizer_json_writer.hpp"
#include "cputrain/text/unigram_json_writer.hpp"
#include "cputrain/text/wordpiece_json_writer.hpp"

namespace cputrain::train {

/// The files a run loads.
struct model_files {
  std::filesystem::path config;                  // config.json
  std::optional<std::filesystem::path> weights;  // model.safetensors; none: a new model
  std::filesystem::path tokenizer;               // a model directory (tokenizer.json, vocab.txt, ...) or one file
};

/// Where the model comes from, as run_qa.py's ModelArguments name it (local paths only).
struct model_sources {
  /// Directory of a saved model (config.json, weights, vocab.txt).
  std::optional<std::string> model_name_or_path;
  /// config.json (or its directory) if not the model's; alone: random weights.
  std::optional<std::string> config_name;
  /// vocab.txt (or its directory) if not the model's.
  std::optional<std::string> tokenizer_name;
};

namespace detail {

// weights_only: the loader refuses code in the pickle. clone(): tied tensors (a decoder sharing the word embeddings)
// share storage, which safetensors' save_file refuses.
inline std::string pickle_conversion_hint(const std::filesystem::path& dir) {
  return dir.string() + " holds PyTorch pickle weights (pytorch_model.bin) and no model.safetensors; cputrain reads "
         "safetensors only (pickle files can run code when loaded). Convert once with Python:\n"
         "  python3 -c \"import torch; from safetensors.torch import save_file; "
         "sd = torch.load('" + (dir / "pytorch_model.bin").string() + "', map_location='cpu', weights_only=True); "
         "save_file({k: v.clone().contiguous() for k, v in sd.items()}, '" + (dir / "model.safetensors").string() +
         "', metadata={'format': 'pt'})\"\n"
         "or load it with transformers and call model.save_pretrained(dir) (safetensors is its default).";
}

}  // namespace detail

/// The files a run will load; usage_error (exit 2) naming the flag when something is missing.
CPUTRAIN_DECL model_files find_model_files(const model_sources& sources);

namespace detail {

/// A sentence pair's second part (1 in BERT's layout, 0 in RoBERTa's) must have a token type embedding.
inline void check_type_vocab(const model_files& files, const nn::bert_config& config, std::int32_t second_type) {
  if (config.type_vocab_size <= second_type)
    throw usage_error(files.config.string() + ": type_vocab_size = " + std::to_string(config.type_vocab_size) +
                      ", but the inputs are sentence pairs (a question and its context, or two sentences) whose "
                      "second part has token type " + std::to_string(second_type) + ": it needs type_vocab_size >= " +
                      std::to_string(second_type + 1));
}

}  // namespace detail

/// Refuses, before any work, a model whose embeddings the inputs would index past: the tokenizer's vocabulary
/// larger than config.json's vocab_size (its last ids have no word embedding), or, where the inputs are sentence
/// pairs (`pairs`: run_qa's question and context, run_glue's two sentences), a type_vocab_size below 2 where the
/// layout types the second part 1. Both happen when a config.json and a tokenizer from different models meet; the
/// batch check in the model would only catch them at the first step, naming neither file.
CPUTRAIN_DECL void check_model_fits_tokenizer(const model_files& files, const nn::bert_config& config,
                                              const text::bert_tokenizer& tokenizer, bool pairs = true);

/// The same for a tokenizer of any family.
CPUTRAIN_DECL void check_model_fits_tokenizer(const model_files& files, const nn::bert_config& config,
                                              const text::tokenizer& tokenizer, bool pairs = true);

/// Writes vocab.txt, tokenizer_config.json and special_tokens_map.json for `tokenizer` into `dir`.
CPUTRAIN_DECL void save_tokenizer(const text::bert_tokenizer& tokenizer, int model_max_length,
                                  const std::filesystem::path& dir);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void save_tokenizer(const text::bert_tokenizer& tokenizer, int model_max_length,
                                  const std::filesystem::path& dir) {
  const auto& vocab = tokenizer.vocab();
  io::write_file_atomically(dir / "vocab.txt", [&](io::atomic_file_sink& out) {
    for (std::size_t id = 0; id < vocab.size(); ++id) {
      const std::string& token = vocab.token(static_cast<std::int32_t>(id));
      out.write(token);
      out.write("\n");
    }
  });
  nlohmann::ordered_json config;
  config["clean_up_tokenization_spaces"] = true;
  config["cls_token"] = "[CLS]";
  config["do_lower_case"] = tokenizer.options().lower_case;
  config["mask_token"] = "[MASK]";
  config["model_max_length"] = model_max_length;
  config["pad_token"] = "[PAD]";
  config["sep_token"] = "[SEP]";
  if (tokenizer.options().strip_accents) config["strip_accents"] = *tokenizer.options().strip_accents;
  else config["strip_accents"] = nullptr;
  config["tokenize_chinese_chars"] = tokenizer.options().handle_chinese_chars;
  config["tokenizer_class"] = "BertTokenizer";
  config["unk_token"] = "[UNK]";
  io::write_file_atomically(dir / "tokenizer_config.json", config.dump(2) + "\n");
  const nlohmann::ordered_json specials = {{"cls_token", "[CLS]"}, {"mask_token", "[MASK]"}, {"pad_token", "[PAD]"},
                                           {"sep_token", "[SEP]"}, {"unk_token", "[UNK]"}};
  io::write_file_atomically(dir / "special_tokens_map.json", specials.dump(2) + "\n");
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// What pretrained loading did, as from_pretrained reports it: the file's tensors the model did not use, the
/// model's tensors the file did not have, and those re-initialised for their shape. One line each; none when the
/// file fitted the model exactly.
[[nodiscard]] CPUTRAIN_DECL std::vector<std::string> weight_load_messages(const io::weight_load_report& report,
                                                                          const std::filesystem::path& file);

/// Writes a tokenizer of any family: BERT's WordPiece as above; byte-level BPE, Unigram and other WordPiece setups
/// as tokenizer.json, tokenizer_config.json (the layout's tokenizer class, byte-level's add_prefix_space and
/// trim_offsets, the special tokens) and special_tokens_map.json.
CPUTRAIN_DECL void save_tokenizer(const text::tokenizer& tokenizer, int model_max_length,
                                  const std::filesystem::path& dir);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void save_tokenizer(const text::tokenizer& tokenizer, int model_max_length,
                                  const std::filesystem::path& dir) {
  if (const auto* wordpiece = std::get_if<text::bert_tokenizer>(&tokenizer.get()))
    return save_tokenizer(*wordpiece, model_max_length, dir);
  const text::special_tokens& specials = tokenizer.specials();
  const bool roberta = specials.layout == text::special_layout::roberta;
  nlohmann::ordered_json settings;  // the class and the switches its fast tokenizer reads
  if (const auto* bpe = std::get_if<text::byte_level_bpe_tokenizer>(&tokenizer.get())) {
    io::write_file_atomically(dir / "tokenizer.json", text::to_tokenizer_json(*bpe, specials).dump(2) + "\n");
    settings["add_prefix_space"] = bpe->options().add_prefix_space;
    settings["tokenizer_class"] = roberta ? "RobertaTokenizer" : "GPT2Tokenizer";
    settings["trim_offsets"] = bpe->options().trim_offsets;
  } else if (const auto* wordpiece = std::get_if<text::wordpiece_tokenizer>(&tokenizer.get())) {
    // Not BertTokenizer: its fast class would rebuild a BertNormalizer from its own defaults.
    io::write_file_atomically(dir / "tokenizer.json", text::to_tokenizer_json(*wordpiece, specials).dump() + "\n");
    settings["tokenizer_class"] = "PreTrainedTokenizerFast";
  } else {
    const auto& unigram = std::get<text::unigram_tokenizer>(tokenizer.get());
    io::write_file_atomically(dir / "tokenizer.json", text::to_tokenizer_json(unigram, specials).dump() + "\n");
    settings["tokenizer_class"] = roberta ? "XLMRobertaTokenizer" : "PreTrainedTokenizerFast";
  }
  nlohmann::ordered_json map;
  const auto name = [&](const char* key, std::optional<std::int32_t> id) {
    if (!id) return;
    if (const auto token = tokenizer.id_to_token(*id)) map[key] = *token;
  };
  const bool wraps = specials.layout != text::special_layout::none;
  name("bos_token", wraps ? std::optional(specials.cls) : std::nullopt);
  name("cls_token", wraps ? std::optional(specials.cls) : std::nullopt);
  name("eos_token", wraps ? std::optional(specials.sep) : std::nullopt);
  name("mask_token", specials.mask);
  name("pad_token", specials.pad);
  name("sep_token", wraps ? std::optional(specials.sep) : std::nullopt);
  name("unk_token", specials.unk);
  nlohmann::ordered_json config = map;
  config["model_max_length"] = model_max_length;
  config.update(settings);
  io::write_file_atomically(dir / "tokenizer_config.json", config.dump(2) + "\n");
  io::write_file_atomically(dir / "special_tokens_map.json", map.dump(2) + "\n");
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

/// The model and its tokenizer as transformers' save_pretrained leaves a directory.
template <class Model>
void save_pretrained(const std::filesystem::path& dir, const Model& model, const text::tokenizer& tokenizer) {
  std::filesystem::create_directories(dir);
  io::save_weights(model, dir / "model.safetensors");
  io::write_model_config(model, dir / "config.json");
  save_tokenizer(tokenizer, model.config().max_sequence_length(), dir);
}

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL model_files find_model_files(const model_sources& sources) {
  namespace fs = std::filesystem;
  std::error_code ec;
  model_files files;
  if (sources.config_name) {
    const fs::path c = *sources.config_name;
    files.config = fs::is_directory(c, ec) ? c / "config.json" : c;
    if (!fs::is_regular_file(files.config, ec))
      throw usage_error("--config_name " + *sources.config_name + ": no config.json there");
  }
  if (sources.model_name_or_path) {
    const fs::path dir = *sources.model_name_or_path;
    if (!fs::is_directory(dir, ec))
      throw usage_error("--model_name_or_path " + dir.string() +
                        ": not a directory (cputrain downloads nothing: give a local Hugging Face model directory)");
    if (!sources.config_name) {
      files.config = dir / "config.json";
      if (!fs::is_regular_file(files.config, ec))
        throw usage_error("--model_name_or_path " + dir.string() + ": no config.json in this directory");
    }
    if (fs::is_regular_file(dir / "model.safetensors", ec)) {
      files.weights = dir / "model.safetensors";
    } else if (fs::exists(dir / "pytorch_model.bin", ec)) {
      throw usage_error("--model_name_or_path " + detail::pickle_conversion_hint(dir));
    } else if (fs::exists(dir / "model.safetensors.index.json", ec)) {
      throw usage_error("--model_name_or_path " + dir.string() +
                        ": the weights are sharded (model.safetensors.index.json); cputrain reads one "
                        "model.safetensors: save the model with save_pretrained(dir, max_shard_size=\"100GB\")");
    } else {
      throw usage_error("--model_name_or_path " + dir.string() +
                        ": no model.safetensors in this directory (to train a new model from scratch, give "
                        "--config_name without --model_name_or_path)");
    }
  }
  if (!sources.model_name_or_path && !sources.config_name)
    throw usage_error("give --model_name_or_path (a model to fine-tune) or --config_name (a new model's config.json)");

  if (sources.tokenizer_name) {
    files.tokenizer = *sources.tokenizer_name;
  } else if (sources.model_name_or_path) {
    files.tokenizer = *sources.model_name_or_path;
  } else {
    files.tokenizer = files.config.parent_path();
  }
  const bool has_tokenizer =
      fs::is_directory(files.tokenizer, ec)
          ? fs::is_regular_file(files.tokenizer / "tokenizer.json", ec) ||
                fs::is_regular_file(files.tokenizer / "vocab.txt", ec) ||
                fs::is_regular_file(files.tokenizer / "vocab.json", ec)
          : fs::is_regular_file(files.tokenizer, ec);
  if (!has_tokenizer)
    throw usage_error((sources.tokenizer_name ? "--tokenizer_name " : "the tokenizer ") + files.tokenizer.string() +
                      ": no tokenizer.json, vocab.txt or vocab.json (give --tokenizer_name with a directory holding "
                      "the model's tokenizer files)");
  return files;
}

CPUTRAIN_DECL void check_model_fits_tokenizer(const model_files& files, const nn::bert_config& config,
                                              const text::bert_tokenizer& tokenizer, bool pairs) {
  const std::size_t tokens = tokenizer.vocab().size();
  if (tokens > static_cast<std::size_t>(config.vocab_size))
    throw usage_error("the tokenizer's vocabulary " + tokenizer.vocab().source() + " has " + std::to_string(tokens) +
                      " tokens, more than vocab_size " + std::to_string(config.vocab_size) + " in " +
                      files.config.string() + ": ids from " + std::to_string(config.vocab_size) +
                      " up would index past the word embeddings (are both files from the same model?)");
  if (pairs) detail::check_type_vocab(files, config, 1);
}

CPUTRAIN_DECL void check_model_fits_tokenizer(const model_files& files, const nn::bert_config& config,
                                              const text::tokenizer& tokenizer, bool pairs) {
  if (const auto* wordpiece = std::get_if<text::bert_tokenizer>(&tokenizer.get()); wordpiece &&
      tokenizer.specials().layout == text::special_layout::bert)
    return check_model_fits_tokenizer(files, config, *wordpiece, pairs);
  const std::size_t ids = tokenizer.id_count();
  if (ids > static_cast<std::size_t>(config.vocab_size))
    throw usage_error("the " + std::string(tokenizer.family()) + " tokenizer " + files.tokenizer.string() +
                      " gives ids up to " + std::to_string(ids - 1) + ", beyond vocab_size " +
                      std::to_string(config.vocab_size) + " in " + files.config.string() +
                      ": they would index past the word embeddings (are both from the same model?)");
  if (pairs) detail::check_type_vocab(files, config, tokenizer.specials().second_type_id());
  if (config.positions_after_padding() && tokenizer.specials().pad != config.pad_token_id)
    throw usage_error(files.config.string() + ": pad_token_id = " + std::to_string(config.pad_token_id) +
                      ", but the tokenizer pads with " +
                      (tokenizer.specials().pad ? std::to_string(*tokenizer.specials().pad) : std::string("no token")) +
                      ": RoBERTa's positions count from the padding id, so the two must agree");
}

CPUTRAIN_DECL std::vector<std::string> weight_load_messages(const io::weight_load_report& report,
                                                            const std::filesystem::path& file) {
  const auto listed = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
    return out;
  };
  std::vector<std::string> lines;
  if (!report.ignored.empty())
    lines.push_back("weights of " + file.string() + " not used by this model: " + listed(report.ignored));
  if (!report.initialized.empty())
    lines.push_back("newly initialized (not in " + file.string() + "): " + listed(report.initialized));
  if (!report.mismatched.empty())
    lines.push_back("newly initialized because the shapes did not match: " + listed(report.mismatched));
  return lines;
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::train
