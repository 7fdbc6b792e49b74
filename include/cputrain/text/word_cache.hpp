// cputrain::text::word_cache — the tokens of words already tokenized, kept per thread for one model at a time: a BPE
// or Unigram split depends on the word alone, and text repeats its words (Hugging Face's models keep such a cache
// too). Per thread, so encoding stays lock-free; bounded (10,000 words of under 256 bytes, then no more are added,
// as there), so a stream of distinct words cannot grow it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cputrain::text {

/// A number for a model's contents, for its cache entries: copies of a model share it, no two models built share it.
inline std::uint64_t new_cache_owner() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

template <class Token>
class word_cache {
 public:
  static constexpr std::size_t max_words = 10000;
  static constexpr std::size_t max_word_bytes = 256;

  /// The calling thread's cache, emptied when it last served another model.
  static word_cache& of(std::uint64_t owner) {
    thread_local word_cache cache;
    if (cache.owner_ != owner) {
      cache.map_.clear();
      cache.owner_ = owner;
    }
    return cache;
  }

  [[nodiscard]] const std::vector<Token>* find(std::string_view word) const {
    const auto it = map_.find(word);
    return it == map_.end() ? nullptr : &it->second;
  }
  void insert(std::string_view word, const Token* first, const Token* last) {
    if (map_.size() >= max_words || word.size() >= max_word_bytes) return;
    map_.emplace(std::string(word), std::vector<Token>(first, last));
  }

 private:
  struct hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::uint64_t owner_ = 0;
  std::unordered_map<std::string, std::vector<Token>, hash, std::equal_to<>> map_;
};

}  // namespace cputrain::text
