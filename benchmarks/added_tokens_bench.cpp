// cputrain-bench-added-tokens: how fast the added tokens (tokenizer.json's "added_tokens") are found in a text as
// their number grows: the matcher's trie against trying every token wherever one could start (the matcher before).
//   cputrain-bench-added-tokens [--benchmark_filter=...]
// The text: 1 MB of English-like words with one of the tokens every 50 words or so (fixed seed). The tokens:
// "<extra_id_N>" as T5's and mT5's tokenizers list them, N from 0, with 4, 100 or 5,000 of them. Figures in
// bytes per second of text (docs/benchmarks.md).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cputrain/text/added_tokens.hpp"

namespace {

namespace text = cputrain::text;

std::vector<text::added_token> extra_ids(int count) {
  std::vector<text::added_token> tokens(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    tokens[static_cast<std::size_t>(i)].content = "<extra_id_" + std::to_string(i) + ">";
    tokens[static_cast<std::size_t>(i)].id = 32000 + i;
  }
  return tokens;
}

std::string sample_text(const std::vector<text::added_token>& tokens) {
  std::mt19937 random(42);
  const std::vector<std::string> words{"the", "model", "<", "answer", "of", "a", "question", "id", "extra", "is"};
  std::string out;
  while (out.size() < 1'000'000) {
    out += random() % 50 == 0 ? tokens[random() % tokens.size()].content : words[random() % words.size()];
    out += ' ';
  }
  return out;
}

// The matcher before the trie: at a position where some token's first byte is, every token tried; the longest
// match wins. The same segments as the matcher's (no single_word, lstrip or rstrip among these tokens).
void linear_split(const std::vector<text::added_token>& tokens, const bool (&first_bytes)[256], std::string_view text,
                  std::vector<text::text_segment>& out) {
  std::size_t plain = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    int best = -1;
    if (first_bytes[static_cast<unsigned char>(text[pos])])
      for (std::size_t i = 0; i < tokens.size(); ++i)
        if ((best < 0 || tokens[i].content.size() > tokens[static_cast<std::size_t>(best)].content.size()) &&
            text.substr(pos).starts_with(tokens[i].content))
          best = static_cast<int>(i);
    if (best < 0) {
      ++pos;
      continue;
    }
    const auto end = pos + tokens[static_cast<std::size_t>(best)].content.size();
    const auto at = [](std::size_t p) { return static_cast<std::uint32_t>(p); };
    if (pos > plain) out.push_back({at(plain), at(pos), -1, at(plain), at(pos)});
    out.push_back({at(pos), at(end), best, at(pos), at(end)});
    pos = plain = end;
  }
  if (text.size() > plain)
    out.push_back({static_cast<std::uint32_t>(plain), static_cast<std::uint32_t>(text.size()), -1,
                   static_cast<std::uint32_t>(plain), static_cast<std::uint32_t>(text.size())});
}

void split_with_trie(benchmark::State& state) {
  const auto tokens = extra_ids(static_cast<int>(state.range(0)));
  const text::added_token_matcher matcher(tokens);
  const std::string text = sample_text(tokens);
  std::vector<text::text_segment> segments;
  for (auto _ : state) {
    segments.clear();
    matcher.split(text, segments);
    benchmark::DoNotOptimize(segments.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
}

void every_token_where_one_could_start(benchmark::State& state) {
  const auto tokens = extra_ids(static_cast<int>(state.range(0)));
  bool first_bytes[256] = {};
  for (const auto& t : tokens) first_bytes[static_cast<unsigned char>(t.content[0])] = true;
  const std::string text = sample_text(tokens);
  std::vector<text::text_segment> segments;
  for (auto _ : state) {
    segments.clear();
    linear_split(tokens, first_bytes, text, segments);
    benchmark::DoNotOptimize(segments.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
}

}  // namespace

BENCHMARK(split_with_trie)->Arg(4)->Arg(100)->Arg(5000)->Unit(benchmark::kMillisecond);
BENCHMARK(every_token_where_one_could_start)->Arg(4)->Arg(100)->Arg(5000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
