// cputrain::text::metaspace — SentencePiece's word boundaries as Hugging Face's Metaspace pre-tokenizer draws them:
// each space becomes the replacement character ("▁"), one is put before the text (always, only before the first
// piece of a text, or never), and the text is cut before each replacement, which stays with the word after it
// unless another replacement follows ("▁▁b" is "▁", "▁b").
#pragma once

#include "cputrain/text/normalized_text.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"

namespace cputrain::text {

enum class prepend_scheme { always, first, never };

struct metaspace_options {
  std::string replacement = "\xE2\x96\x81";  // U+2581
  prepend_scheme prepend = prepend_scheme::always;
  bool split = true;
};

/// Rewrites `text` and appends its pieces, as byte ranges of the rewritten text, to `pieces`. `at_text_start`: the
/// text begins the input (what prepend_scheme::first asks).
CPUTRAIN_DECL void metaspace_split(const metaspace_options& options, normalized_text& text, bool at_text_start,
                                   std::vector<std::pair<std::size_t, std::size_t>>& pieces);

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void metaspace_split(const metaspace_options& options, normalized_text& text, bool at_text_start,
                                   std::vector<std::pair<std::size_t, std::size_t>>& pieces) {
  thread_local std::vector<std::pair<std::size_t, std::size_t>> spaces;
  spaces.clear();
  for (std::size_t at = text.str().find(' '); at != std::string::npos; at = text.str().find(' ', at + 1))
    spaces.emplace_back(at, at + 1);
  if (!spaces.empty()) text.replace(spaces, options.replacement);
  const std::string& s = text.str();
  const bool starts_with_it = s.starts_with(options.replacement);
  if (!starts_with_it && (options.prepend == prepend_scheme::always ||
                          (options.prepend == prepend_scheme::first && at_text_start)))
    text.prepend(options.replacement);
  const std::size_t size = text.str().size();
  if (size == 0) return;
  if (!options.split) {
    pieces.emplace_back(0, size);
    return;
  }
  // A replacement joins the piece after it only when that piece is not one too: "▁▁b" is "▁", "▁b"; "a▁" is "a", "▁".
  const std::string& r = options.replacement;
  const std::string& t = text.str();
  for (std::size_t pos = 0; pos < size;) {
    if (t.compare(pos, r.size(), r) != 0) {
      const std::size_t next = t.find(r, pos);
      pieces.emplace_back(pos, next == std::string::npos ? size : next);
      pos = pieces.back().second;
      continue;
    }
    const std::size_t after = pos + r.size();
    const bool joins = after < size && t.compare(after, r.size(), r) != 0;
    const std::size_t next = joins ? t.find(r, after) : std::string::npos;
    pieces.emplace_back(pos, joins ? (next == std::string::npos ? size : next) : after);
    pos = pieces.back().second;
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
