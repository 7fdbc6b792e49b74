// cputrain::text::normalizer_chain — the normalizers a SentencePiece tokenizer.json lists (Precompiled, NFC, NFD,
// NFKC, NFKD, Lowercase, Strip, Replace, in a Sequence or alone), applied in order to a normalized_text so that
// alignments follow each rewrite.
// Replace takes a literal string or a regex of one repeated character ("X{n,}", "X+"): the patterns Hugging Face's
// converters write; any other regex is refused when the file is read.
#pragma once

#include "cputrain/text/precompiled_charsmap.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/normalized_text.hpp"
#include "cputrain/text/unicode_forms.hpp"

namespace cputrain::text {

struct strip_step {
  bool left = false;
  bool right = true;
};

/// Replace: each match of a literal string, or each run of at least `min_run` copies of one character.
struct replace_step {
  std::string pattern;     // the literal, or the repeated character
  std::size_t min_run = 0;  // 0: `pattern` is a literal
  std::string content;
  std::string regex;        // the regex as the file wrote it (empty for a literal), to write back
};

struct lowercase_step {};

class normalizer_chain {
 public:
  using step =
      std::variant<std::shared_ptr<const precompiled_charsmap>, strip_step, replace_step, unicode_form, lowercase_step>;

  normalizer_chain() = default;
  explicit normalizer_chain(std::vector<step> steps) : steps_(std::move(steps)) {}

  [[nodiscard]] const std::vector<step>& steps() const noexcept { return steps_; }

  void apply(normalized_text& text) const;

 private:
  static void replace(const replace_step& r, normalized_text& text) {
    thread_local std::vector<std::pair<std::size_t, std::size_t>> matches;
    matches.clear();
    const std::string& s = text.str();
    if (r.min_run == 0) {
      for (std::size_t at = s.find(r.pattern); at != std::string::npos; at = s.find(r.pattern, at + r.pattern.size()))
        matches.emplace_back(at, at + r.pattern.size());
    } else {
      for (std::size_t at = s.find(r.pattern); at != std::string::npos; at = s.find(r.pattern, at)) {
        std::size_t end = at, copies = 0;
        for (; s.compare(end, r.pattern.size(), r.pattern) == 0; end += r.pattern.size()) ++copies;
        if (copies >= r.min_run) matches.emplace_back(at, end);
        at = end;
      }
    }
    if (!matches.empty()) text.replace(matches, r.content);
  }

  std::vector<step> steps_;
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void normalizer_chain::apply(normalized_text& text) const {
  for (const auto& s : steps_) {
    if (const auto* map = std::get_if<std::shared_ptr<const precompiled_charsmap>>(&s)) {
      (*map)->normalize(text);
    } else if (const auto* strip = std::get_if<strip_step>(&s)) {
      text.strip(strip->left, strip->right);
    } else if (const auto* form = std::get_if<unicode_form>(&s)) {
      apply_unicode_form(text, *form);
    } else if (std::holds_alternative<lowercase_step>(s)) {
      apply_lowercase(text);
    } else {
      replace(std::get<replace_step>(s), text);
    }
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
