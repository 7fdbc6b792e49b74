// cputrain::text::bpe_model — byte-pair encoding as Hugging Face's BPE model applies it: a word's characters
// start as symbols and the adjacent pair of lowest merge rank is merged first (leftmost on ties) until no pair
// of the merge table is left. Characters outside the vocabulary become unk_token (fused when asked), or their
// <0xNN> bytes with byte_fallback, or are dropped when the model has neither, as the reference does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/word_cache.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

/// The model's switches, named as tokenizer.json names them.
struct bpe_options {
  std::optional<std::string> unk_token;
  std::string continuing_subword_prefix;  // prepended to every symbol but a word's first ("##")
  std::string end_of_word_suffix;         // appended to a word's last symbol ("</w>")
  bool fuse_unk = false;                  // consecutive unknown characters become one unk_token
  bool byte_fallback = false;             // unknown characters become their UTF-8 bytes' <0xNN> tokens
  bool ignore_merges = false;             // a word that is itself in the vocabulary is taken whole
};

/// A token of one word: its id and the characters [begin, end) of the word it covers.
struct bpe_token {
  std::int32_t id;
  std::uint32_t begin;
  std::uint32_t end;
};

/// Hashes std::string and std::string_view alike, so lookups build no strings.
struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
using token_ids = std::unordered_map<std::string, std::int32_t, string_hash, std::equal_to<>>;

class bpe_model {
 public:
  /// Merges are pairs of tokens in rank order; each pair and its concatenation must be in `vocab`. Throws
  /// text_error naming `source` and the first merge that is not.
  bpe_model(token_ids vocab, const std::vector<std::pair<std::string, std::string>>& merges, bpe_options options,
            const std::string& source);

  [[nodiscard]] std::optional<std::int32_t> find(std::string_view token) const {
    const auto it = vocab_.find(token);
    if (it == vocab_.end()) return std::nullopt;
    return it->second;
  }
  [[nodiscard]] const token_ids& vocab() const noexcept { return vocab_; }
  /// The merges as given, in rank order (for writing the model out again).
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& merges() const noexcept { return merge_list_; }
  [[nodiscard]] const bpe_options& options() const noexcept { return options_; }

  /// Appends the tokens of `word` (valid UTF-8) to `out`.
  void tokenize(std::string_view word, std::vector<bpe_token>& out) const {
    auto& cache = word_cache<bpe_token>::of(cache_owner_);
    if (const auto* known = cache.find(word)) {
      out.insert(out.end(), known->begin(), known->end());
      return;
    }
    const std::size_t first = out.size();
    tokenize_uncached(word, out);
    cache.insert(word, out.data() + first, out.data() + out.size());
  }

 private:
  void tokenize_uncached(std::string_view word, std::vector<bpe_token>& out) const {
    if (options_.ignore_merges) {
      if (const auto whole = find(word)) {
        out.push_back({*whole, 0, static_cast<std::uint32_t>(count_code_points(word))});
        return;
      }
    }
    std::vector<symbol>& symbols = initial_symbols(word);
    merge_all(symbols);
    for (const auto& s : symbols)
      if (s.length > 0) out.push_back({s.id, s.begin, s.begin + s.length});
  }

  struct merge {
    std::uint32_t rank;
    std::int32_t id;
  };
  // A symbol of the word being merged, linked to its neighbours; length 0 once merged into its left neighbour.
  struct symbol {
    std::int32_t id;
    std::int32_t prev, next;
    std::uint32_t begin, length;  // in characters of the word
  };
  // A merge waiting in the queue: the pair starting at symbol `left`, to become `id`.
  struct candidate {
    std::uint32_t rank;
    std::int32_t left;
    std::int32_t id;
    bool operator>(const candidate& o) const noexcept { return rank != o.rank ? rank > o.rank : left > o.left; }
  };

  static std::uint64_t pair_key(std::int32_t a, std::int32_t b) noexcept {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
  }
  [[nodiscard]] const merge* merge_of(std::int32_t a, std::int32_t b) const {
    const auto it = merges_.find(pair_key(a, b));
    return it == merges_.end() ? nullptr : &it->second;
  }

  // One symbol per character (with the prefix and suffix), unknown characters handled as the options say.
  std::vector<symbol>& initial_symbols(std::string_view word) const {
    thread_local std::vector<symbol> symbols;
    thread_local std::string piece;
    symbols.clear();
    std::uint32_t index = 0;
    for (std::size_t pos = 0; pos < word.size(); ++index) {
      char32_t cp = 0;
      const std::size_t length = decode_utf8(word, pos, cp);
      if (length == 0) throw text_error("bpe: invalid UTF-8 in a word");
      piece.assign(pos == 0 ? std::string_view{} : std::string_view(options_.continuing_subword_prefix));
      piece.append(word.substr(pos, length));
      if (pos + length == word.size()) piece += options_.end_of_word_suffix;
      if (const auto id = find(piece)) {
        push(symbols, *id, index);
      } else {
        add_unknown(symbols, word.substr(pos, length), index);
      }
      pos += length;
    }
    return symbols;
  }

  static void push(std::vector<symbol>& symbols, std::int32_t id, std::uint32_t index) {
    const auto at = static_cast<std::int32_t>(symbols.size());
    symbols.push_back({id, at - 1, at + 1, index, 1});
  }

  void add_unknown(std::vector<symbol>& symbols, std::string_view character, std::uint32_t index) const {
    if (options_.byte_fallback) {
      std::vector<std::int32_t> bytes;
      for (const char c : character) {
        static constexpr char hex[] = "0123456789ABCDEF";
        const auto b = static_cast<unsigned char>(c);
        const std::string name{'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
        const auto id = find(name);
        if (!id) break;
        bytes.push_back(*id);
      }
      // Every byte of the character, or none (then unk_token, as the reference falls back).
      if (bytes.size() == character.size()) {
        for (const auto id : bytes) push(symbols, id, index);  // each covers the whole character
        return;
      }
    }
    if (!unk_id_) return;
    if (options_.fuse_unk && !symbols.empty() && symbols.back().id == *unk_id_ &&
        symbols.back().begin + symbols.back().length == index) {
      ++symbols.back().length;
      return;
    }
    push(symbols, *unk_id_, index);
  }

  void merge_all(std::vector<symbol>& symbols) const {
    if (symbols.size() < 2) return;
    symbols.back().next = -1;
    thread_local std::vector<candidate> queue;  // a min-heap by (rank, left)
    queue.clear();
    const auto offer = [&](std::int32_t left) {
      if (left < 0) return;
      const symbol& l = symbols[static_cast<std::size_t>(left)];
      if (l.next < 0) return;
      if (const merge* m = merge_of(l.id, symbols[static_cast<std::size_t>(l.next)].id)) {
        queue.push_back({m->rank, left, m->id});
        std::push_heap(queue.begin(), queue.end(), std::greater<>{});
      }
    };
    for (std::int32_t i = 0; i + 1 < static_cast<std::int32_t>(symbols.size()); ++i) offer(i);
    while (!queue.empty()) {
      std::pop_heap(queue.begin(), queue.end(), std::greater<>{});
      const candidate top = queue.back();
      queue.pop_back();
      symbol& left = symbols[static_cast<std::size_t>(top.left)];
      if (left.length == 0 || left.next < 0) continue;
      symbol& right = symbols[static_cast<std::size_t>(left.next)];
      const merge* m = merge_of(left.id, right.id);
      if (m == nullptr || m->id != top.id || m->rank != top.rank) continue;  // stale: a neighbour changed
      left.id = top.id;
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = top.left;
      offer(left.prev);
      offer(top.left);
    }
  }

  token_ids vocab_;
  bpe_options options_;
  std::unordered_map<std::uint64_t, merge> merges_;
  std::vector<std::pair<std::string, std::string>> merge_list_;
  std::optional<std::int32_t> unk_id_;
  std::uint64_t cache_owner_ = new_cache_owner();  // words tokenized before (word_cache.hpp)
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL bpe_model::bpe_model(token_ids vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                                   bpe_options options, const std::string& source)
    : vocab_(std::move(vocab)), options_(std::move(options)), merge_list_(merges) {
  const std::size_t prefix = options_.continuing_subword_prefix.size();
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    const auto ia = find(a), ib = find(b);
    std::string joined = a;
    joined += std::string_view(b).substr(b.starts_with(options_.continuing_subword_prefix) ? prefix : 0);
    const auto ij = find(joined);
    if (!ia || !ib || !ij)
      throw text_error(source + ": merge " + std::to_string(rank) + " (\"" + a + "\" \"" + b + "\") names \"" +
                       (!ia ? a : !ib ? b : joined) + "\", which is not in the vocabulary");
    merges_.try_emplace(pair_key(*ia, *ib), merge{static_cast<std::uint32_t>(rank), *ij});
  }
  if (options_.unk_token) {
    const auto unk = find(*options_.unk_token);
    if (!unk) throw text_error(source + ": unk_token \"" + *options_.unk_token + "\" is not in the vocabulary");
    unk_id_ = *unk;
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
