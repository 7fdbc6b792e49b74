// cputrain::text::load_xlm_roberta_sentencepiece — XLM-RoBERTa's tokenizer from its legacy sentencepiece.bpe.model,
// built as transformers' XLMRobertaConverter builds the fast tokenizer from it: fairseq's ids (<s> <pad> </s> <unk>,
// then SentencePiece's pieces after its own first three, <mask> last), unk id 3, the model's charsmap with Strip and
// Replace(" {2,}", "▁"), Metaspace, RoBERTa's layout, <mask> taking the spaces on its left.
#pragma once

#include "cputrain/text/metaspace.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/added_tokens.hpp"
#include "cputrain/text/normalizer_steps.hpp"
#include "cputrain/text/precompiled_charsmap.hpp"
#include "cputrain/text/sentencepiece_model.hpp"
#include "cputrain/text/special_tokens.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/unigram_json.hpp"
#include "cputrain/text/unigram_model.hpp"
#include "cputrain/text/unigram_tokenizer.hpp"

namespace cputrain::text {

/// `file`: a SentencePiece Unigram model. `prepend`: Metaspace's prepend scheme (tokenizer_config.json's
/// add_prefix_space false makes it never). Throws text_error naming the file.
CPUTRAIN_DECL unigram_file load_xlm_roberta_sentencepiece(const std::filesystem::path& file,
                                                          prepend_scheme prepend = prepend_scheme::always);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL unigram_file load_xlm_roberta_sentencepiece(const std::filesystem::path& file, prepend_scheme prepend) {
  const sentencepiece_model spm = read_sentencepiece_model(file);
  const std::string source = file.string();
  if (spm.model_type != 1)
    throw text_error(source + ": a SentencePiece " + (spm.model_type == 2 ? std::string("BPE") : "word or char") +
                     " model; cputrain reads Unigram models (XLM-RoBERTa's) from sentencepiece.bpe.model");
  if (spm.pieces.size() < 3) throw text_error(source + ": fewer than SentencePiece's 3 leading pieces");
  std::vector<std::pair<std::string, double>> vocab = {{"<s>", 0.0}, {"<pad>", 0.0}, {"</s>", 0.0}, {"<unk>", 0.0}};
  std::vector<added_token> added;
  for (std::size_t i = 3; i < spm.pieces.size(); ++i) {
    const auto& p = spm.pieces[i];
    vocab.emplace_back(p.piece, static_cast<double>(p.score));
    if (p.type == 3 || p.type == 4)  // control and user-defined pieces match as written
      added.push_back({p.piece, static_cast<std::int32_t>(vocab.size() - 1), false, false, false, false, p.type == 3});
  }
  vocab.emplace_back("<mask>", 0.0);
  const auto mask = static_cast<std::int32_t>(vocab.size() - 1);
  const auto special = [](const char* content, std::int32_t id, bool lstrip) {
    return added_token{content, id, false, lstrip, false, false, true};
  };
  for (const auto& s : {special("<s>", 0, false), special("<pad>", 1, false), special("</s>", 2, false),
                        special("<unk>", 3, false), special("<mask>", mask, true)})
    added.push_back(s);

  std::vector<normalizer_chain::step> steps;
  if (!spm.precompiled_charsmap.empty()) {
    try {
      steps.emplace_back(std::make_shared<const precompiled_charsmap>(spm.precompiled_charsmap, "its charsmap"));
    } catch (const text_error& e) {
      throw text_error(source + ": " + e.what());
    }
  }
  steps.emplace_back(strip_step{false, true});
  steps.emplace_back(replace_step{" ", 2, "\xE2\x96\x81", " {2,}"});
  metaspace_options metaspace;
  metaspace.prepend = prepend;
  auto model = std::make_shared<const unigram_model>(std::move(vocab), 3, false, source, /*from_json=*/false);
  special_tokens specials;
  specials.layout = special_layout::roberta;
  specials.cls = 0;
  specials.sep = 2;
  specials.pad = 1;
  specials.unk = 3;
  specials.mask = mask;
  return {unigram_tokenizer(std::move(model), normalizer_chain(std::move(steps)),
                            pre_tokenizer_chain({metaspace}), added),
          specials};
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
