// cputrain::text::unigram_model — SentencePiece's Unigram model as Hugging Face runs it: the split of a piece whose
// tokens' scores sum highest (Viterbi over every vocabulary token that starts at each character), a character no
// token covers scored as unknown (the lowest score minus 10), runs of unknown characters fused into one <unk>, and
// optionally unknown text spelled as <0xNN> byte tokens (byte_fallback). Ties go to the reference's choice: the
// first candidate found, shorter tokens and earlier starts first.
#pragma once

#include "cputrain/text/word_cache.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/byte_trie.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/token_sequence.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

/// A score as Hugging Face reads it from tokenizer.json: serde_json without its exact-float option takes the
/// decimal digits as an integer, then multiplies or divides once by a power of ten, which is 1 ulp off the exact
/// value for about one score in twenty. The digits are those of the shortest form that reads back as `parsed`, the
/// form Python's json and Rust's serde_json write; and the ulp decides near-ties between splits.
CPUTRAIN_DECL double score_as_reference_reads(double parsed);

class unigram_model {
 public:
  /// `vocab`: each token with its score, the id being its index. Scores read from tokenizer.json (`from_json`) are
  /// used as the reference reads them (score_as_reference_reads); those of a SentencePiece model file reach the
  /// reference's converter without JSON and are used as they are. Throws text_error naming `source` for an empty
  /// vocabulary or an unk_id outside it.
  unigram_model(std::vector<std::pair<std::string, double>> vocab, std::optional<std::int32_t> unk_id,
                bool byte_fallback, const std::string& source, bool from_json = true);

  /// The tokens with their scores as given (written back unchanged).
  [[nodiscard]] const std::vector<std::pair<std::string, double>>& vocab() const noexcept { return vocab_; }
  [[nodiscard]] std::size_t size() const noexcept { return vocab_.size(); }
  /// The token with id `id` (below size()).
  [[nodiscard]] const std::string& token(std::int32_t id) const noexcept {
    return vocab_[static_cast<std::size_t>(id)].first;
  }
  [[nodiscard]] std::optional<std::int32_t> unk_id() const noexcept { return unk_id_; }
  [[nodiscard]] bool byte_fallback() const noexcept { return byte_fallback_; }

  /// The id of `token` (the last one, when the vocabulary lists it twice).
  [[nodiscard]] std::optional<std::int32_t> find(std::string_view token) const noexcept { return trie_.find(token); }

  /// Appends the tokens of `piece` (valid, non-empty UTF-8) to `out`. Throws text_error when the piece needs
  /// <unk> and the model has none.
  void tokenize(std::string_view piece, std::vector<model_token>& out) const {
    auto& cache = word_cache<model_token>::of(cache_owner_);
    if (const auto* known = cache.find(piece)) {
      out.insert(out.end(), known->begin(), known->end());
      return;
    }
    const std::size_t first = out.size();
    tokenize_uncached(piece, out);
    cache.insert(piece, out.data() + first, out.data() + out.size());
  }

 private:
  void tokenize_uncached(std::string_view piece, std::vector<model_token>& out) const {
    thread_local std::vector<best_path> best;
    best.assign(piece.size() + 1, best_path{});
    best[0].start = 0;
    const double unk_score = min_score_ - 10.0;
    for (std::size_t start = 0; start < piece.size();) {
      const double so_far = best[start].score;
      const std::size_t char_bytes = std::min(utf8_char_length(piece, start), piece.size() - start);
      bool covers_char = false;
      std::uint32_t node = byte_trie::root;
      for (std::size_t end = start; end < piece.size();) {
        node = trie_.child(node, static_cast<unsigned char>(piece[end++]));
        if (node == byte_trie::no_node) break;
        const std::int32_t id = trie_.value(node);
        if (id < 0) continue;
        offer(best[end], id, start, scores_[static_cast<std::size_t>(id)] + so_far);
        covers_char |= end - start == char_bytes;
      }
      if (!covers_char) offer(best[start + char_bytes], unk(), start, unk_score + so_far);
      start += char_bytes;
    }
    emit(piece, best, out);
  }

  struct best_path {
    double score = 0.0;
    std::int64_t start = -1;  // -1: no path ends here yet
    std::int32_t id = 0;
  };
  static void offer(best_path& target, std::int32_t id, std::size_t start, double score) {
    if (target.start < 0 || score > target.score) target = {score, static_cast<std::int64_t>(start), id};
  }
  std::int32_t unk() const {
    if (!unk_id_) throw text_error("text: the Unigram model has no unk_id, and a character is not in its vocabulary");
    return *unk_id_;
  }

  // The best path backwards, runs of <unk> fused into one token, then each token looked up by its text.
  void emit(std::string_view piece, const std::vector<best_path>& best, std::vector<model_token>& out) const {
    const std::size_t first = out.size();
    std::size_t end = piece.size(), fused_end = 0;
    bool fusing = false;
    while (end > 0) {
      const best_path& node = best[end];
      const auto start = static_cast<std::size_t>(node.start);
      if (unk_id_ && node.id == *unk_id_) {
        if (!fusing) fused_end = end;
        fusing = true;
      } else {
        if (fusing) push_reversed(piece, end, fused_end, out);
        fusing = false;
        push_reversed(piece, start, end, out);
      }
      end = start;
    }
    if (fusing) push_reversed(piece, 0, fused_end, out);
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
  }
  // One token of the path (pushed in reverse order), as the reference names it: the id its text has, else the
  // bytes as <0xNN> tokens when byte_fallback has them all, else <unk>.
  void push_reversed(std::string_view piece, std::size_t begin, std::size_t end, std::vector<model_token>& out) const {
    const auto b = static_cast<std::uint32_t>(begin), e = static_cast<std::uint32_t>(end);
    if (const auto id = find(piece.substr(begin, end - begin))) {
      out.push_back({*id, b, e});
      return;
    }
    if (byte_fallback_) {
      thread_local std::vector<std::int32_t> bytes;
      bytes.clear();
      for (std::size_t i = begin; i < end; ++i) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned>(static_cast<unsigned char>(piece[i])));
        const auto id = find(name);
        if (!id) break;
        bytes.push_back(*id);
      }
      if (bytes.size() == end - begin) {
        for (auto it = bytes.rbegin(); it != bytes.rend(); ++it) out.push_back({*it, b, e});
        return;
      }
    }
    out.push_back({unk(), b, e});
  }

  std::vector<std::pair<std::string, double>> vocab_;
  std::vector<double> scores_;  // as the reference reads them
  std::optional<std::int32_t> unk_id_;
  bool byte_fallback_ = false;
  double min_score_ = 0.0;
  byte_trie trie_;
  std::uint64_t cache_owner_ = new_cache_owner();  // pieces tokenized before (word_cache.hpp)
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL double score_as_reference_reads(double parsed) {
  if (!std::isfinite(parsed) || parsed == 0.0) return parsed;
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, parsed, std::chars_format::scientific);
  if (ec != std::errc()) return parsed;
  const std::string_view text(buffer, static_cast<std::size_t>(end - buffer));
  const std::size_t e = text.find('e');
  std::uint64_t digits = 0;
  int count = 0;
  for (const char c : text.substr(0, e))
    if (c >= '0' && c <= '9') {
      digits = digits * 10 + static_cast<std::uint64_t>(c - '0');
      ++count;
    }
  int exponent = std::stoi(std::string(text.substr(e + 1))) - (count - 1);
  static const auto powers = [] {
    std::array<double, 309> p{};
    for (int k = 0; k <= 308; ++k) p[static_cast<std::size_t>(k)] = std::strtod(("1e" + std::to_string(k)).c_str(), nullptr);
    return p;
  }();
  double f = static_cast<double>(digits);
  while (exponent < -308) {
    f /= 1e308;
    exponent += 308;
  }
  f = exponent >= 0 ? f * powers[static_cast<std::size_t>(exponent)] : f / powers[static_cast<std::size_t>(-exponent)];
  return parsed < 0 ? -f : f;
}

CPUTRAIN_DECL unigram_model::unigram_model(std::vector<std::pair<std::string, double>> vocab,
                                           std::optional<std::int32_t> unk_id, bool byte_fallback,
                                           const std::string& source, bool from_json)
    : vocab_(std::move(vocab)), unk_id_(unk_id), byte_fallback_(byte_fallback) {
  if (vocab_.empty()) throw text_error(source + ": the Unigram vocabulary is empty");
  if (unk_id_ && static_cast<std::size_t>(*unk_id_) >= vocab_.size())
    throw text_error(source + ": unk_id " + std::to_string(*unk_id_) + " is outside the vocabulary of " +
                     std::to_string(vocab_.size()));
  scores_.reserve(vocab_.size());
  for (const auto& entry : vocab_) scores_.push_back(from_json ? score_as_reference_reads(entry.second) : entry.second);
  min_score_ = *std::min_element(scores_.begin(), scores_.end());
  trie_ = byte_trie(vocab_.size(), [&](std::size_t i) -> std::string_view { return vocab_[i].first; },
                    byte_trie::repeated_key::keeps_last);
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
