// cputrain::text::byte_level_bpe_tokenizer — GPT-2's and RoBERTa's tokenizer as Hugging Face's tokenizer.json sets it
// up: added tokens found in the raw text first, the normalizers (none in GPT-2's and RoBERTa's files, NFC in
// GPT-NeoX's) on each stretch between them and the added tokens marked `normalized` found in the result, the
// ByteLevel pre-tokenizer (GPT-2's split, each byte shown as a character of byte_alphabet()), BPE on each piece, and
// offsets trimmed of the spaces a token starts or ends with (RoBERTa's trim_offsets). Ids and offsets (code points and
// bytes) equal the reference's; a token that covers part of a character's bytes gets that whole character, as there.
// Thread-safe: encode() is const.
#pragma once

#include "cputrain/text/byte_level.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/added_tokens.hpp"
#include "cputrain/text/bpe_model.hpp"
#include "cputrain/text/char_positions.hpp"
#include "cputrain/text/normalized_text.hpp"
#include "cputrain/text/normalizer_steps.hpp"
#include "cputrain/text/text_error.hpp"
#include "cputrain/text/token_sequence.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

/// The ByteLevel pre-tokenizer's and post-processor's switches, as tokenizer.json names them.
struct byte_level_options {
  bool add_prefix_space = false;  // a space before each text that does not start with one (RoBERTa for run_ner)
  bool use_regex = true;          // split with GPT-2's pattern; false: each text is one piece
  bool trim_offsets = true;       // the post-processor's: offsets leave out a token's leading and trailing spaces
  // The trimming post-processor's own add_prefix_space: the first token keeps one leading space in its offsets.
  // Unset: as add_prefix_space (files and RobertaTokenizerFast set both alike; a file may set them apart).
  std::optional<bool> trim_keeps_prefix_space;

  [[nodiscard]] bool keeps_prefix_space() const noexcept { return trim_keeps_prefix_space.value_or(add_prefix_space); }
};

class byte_level_bpe_tokenizer {
 public:
  byte_level_bpe_tokenizer(bpe_model model, const std::vector<added_token>& added, byte_level_options options,
                           normalizer_chain normalizer = {});

  [[nodiscard]] const bpe_model& model() const noexcept { return model_; }
  [[nodiscard]] const normalizer_chain& normalizer() const noexcept { return normalizer_; }
  /// Every added token, those matched in the raw text first.
  [[nodiscard]] std::vector<added_token> added_tokens() const { return added_.all(); }
  [[nodiscard]] const byte_level_options& options() const noexcept { return options_; }

  /// The id of `token`: an added token's, else the model's.
  [[nodiscard]] std::optional<std::int32_t> find(std::string_view token) const {
    if (const auto id = added_.find(token)) return id;
    return model_.find(token);
  }
  /// The token `id` stands for: an added token's content, else the model's token.
  [[nodiscard]] std::optional<std::string> token(std::int32_t id) const {
    if (auto content = added_.content(id)) return content;
    for (const auto& [text, i] : model_.vocab())
      if (i == id) return text;
    return std::nullopt;
  }
  /// One past the largest id either vocabulary gives (Hugging Face's len(tokenizer)).
  [[nodiscard]] std::size_t id_count() const noexcept {
    std::size_t n = 0;
    for (const auto& [token, id] : model_.vocab()) n = std::max(n, static_cast<std::size_t>(id) + 1);
    return added_.id_count(n);
  }

  /// Appends the tokens of `text` (no special tokens added) to `out`. Throws text_error for invalid UTF-8 or a
  /// text of 4 GiB or more.
  void encode(std::string_view text, token_sequence& out) const;

  token_sequence encode(std::string_view text) const {
    token_sequence out;
    encode(text, out);
    return out;
  }

 private:
  // An added token's offsets: trimmed ones leave out the whitespace lstrip/rstrip took, as RobertaProcessing's
  // trimming does.
  [[nodiscard]] text_span added_span(const text_segment& s) const noexcept {
    return options_.trim_offsets ? text_span{s.begin, s.end} : text_span{s.outer_begin, s.outer_end};
  }

  // The normalized form of the raw stretch [begin, end) of `text`: its normalized added tokens and the words of the
  // rest.
  void encode_normalized(std::string_view text, std::uint32_t begin, std::uint32_t end, const char_positions& positions,
                         token_sequence& out, std::uint32_t& word_index) const;

  // One stretch without added tokens, `bytes` (the raw text's or a normalized one's): each piece of GPT-2's split (or
  // the whole, without use_regex) is a word, `word_index` numbering them through the text. `original(from, to)` gives
  // the original bytes that bytes [from, to) of the stretch came from.
  template <class Original>
  void encode_stretch(std::string_view bytes, Original original, const char_positions& positions, token_sequence& out,
                      std::uint32_t& word_index) const {
    thread_local std::vector<std::pair<std::uint32_t, std::uint32_t>> pieces;
    pieces.clear();
    if (bytes.empty()) return;
    // A prefix space stands before the stretch's first byte and is placed on it.
    const bool prefix = options_.add_prefix_space && bytes[0] != ' ';
    const auto size = static_cast<std::uint32_t>(bytes.size());
    if (options_.use_regex) {
      thread_local std::string spaced;
      if (prefix) {
        spaced.assign(1, ' ');
        spaced.append(bytes);
        split_gpt2(spaced, pieces);
      } else {
        split_gpt2(bytes, pieces);
      }
    } else {
      pieces.emplace_back(0, size + (prefix ? 1 : 0));
    }
    thread_local std::string word;
    thread_local std::vector<bpe_token> tokens;
    // Byte b of the piece as a byte of the stretch; the prefix space is the stretch's first byte's.
    const auto in_stretch = [&](std::uint32_t b) { return prefix ? (b == 0 ? 0 : b - 1) : b; };
    for (const auto& [piece_begin, piece_end] : pieces) {
      word.clear();
      for (std::uint32_t b = piece_begin; b < piece_end; ++b) {
        const bool virtual_space = prefix && b == 0;
        word += byte_chars_[virtual_space ? static_cast<unsigned char>(' ')
                                          : static_cast<unsigned char>(bytes[in_stretch(b)])];
      }
      tokens.clear();
      model_.tokenize(word, tokens);
      for (const auto& t : tokens) {
        const text_span o = original(in_stretch(piece_begin + t.begin), in_stretch(piece_begin + t.end - 1) + 1);
        out.push_back(t.id, positions.chars(o.begin, o.end), positions.whole_bytes(o.begin, o.end), word_index);
      }
      ++word_index;
    }
  }

  // Leading and trailing spaces ('Ġ') of a token's text.
  static std::pair<std::uint8_t, std::uint8_t> spaces_at_ends(std::string_view token) {
    static constexpr std::string_view space = "\xC4\xA0";  // U+0120, the alphabet's space
    std::uint8_t lead = 0, trail = 0;
    for (std::string_view t = token; t.starts_with(space) && lead < 255; t.remove_prefix(space.size())) ++lead;
    for (std::string_view t = token; t.ends_with(space) && trail < 255; t.remove_suffix(space.size())) ++trail;
    return {lead, trail};
  }

  // RoBERTa's trim_offsets: a token's offsets leave out the spaces it starts or ends with; the one space a prefix
  // added stays with the first token.
  void trim_offsets(token_sequence& out, std::size_t first) const {
    for (std::size_t i = first; i < out.size(); ++i) {
      const auto id = static_cast<std::size_t>(out.ids[i]);
      if (id >= id_spaces_.size()) continue;  // an added token: no spaces
      auto [lead, trail] = id_spaces_[id];
      if (lead == 0 && trail == 0) continue;
      text_span& chars = out.offsets[i];
      text_span& bytes = out.byte_offsets[i];
      if (lead > 0 && options_.keeps_prefix_space() && lead == 1 && (i == first || chars.begin == 0)) lead = 0;
      const std::uint32_t cut_lead = std::min<std::uint32_t>(lead, chars.end - chars.begin);
      chars.begin += cut_lead;
      bytes.begin = std::min(bytes.begin + cut_lead, bytes.end);
      if (trail > 0 && chars.end >= trail) {
        const std::uint32_t cut_trail = std::min<std::uint32_t>(trail, chars.end - chars.begin);
        chars.end -= cut_trail;
        bytes.end = std::max(bytes.end - cut_trail, bytes.begin);
      }
    }
  }

  bpe_model model_;
  added_token_sets added_;
  byte_level_options options_;
  normalizer_chain normalizer_;
  std::vector<std::pair<std::uint8_t, std::uint8_t>> id_spaces_;  // per model id: leading and trailing spaces
  std::string byte_chars_[256];
};

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL byte_level_bpe_tokenizer::byte_level_bpe_tokenizer(bpe_model model, const std::vector<added_token>& added,
                                                                 byte_level_options options,
                                                                 normalizer_chain normalizer)
    : model_(std::move(model)), added_(added), options_(options), normalizer_(std::move(normalizer)) {
  for (const auto& [token, id] : model_.vocab()) {
    if (static_cast<std::size_t>(id) >= id_spaces_.size()) id_spaces_.resize(static_cast<std::size_t>(id) + 1);
    id_spaces_[static_cast<std::size_t>(id)] = spaces_at_ends(token);
  }
  constexpr auto alphabet = byte_alphabet();
  for (std::size_t b = 0; b < 256; ++b) {
    byte_chars_[b].clear();
    append_utf8(byte_chars_[b], alphabet[b]);
  }
}

CPUTRAIN_DECL void byte_level_bpe_tokenizer::encode(std::string_view text, token_sequence& out) const {
  check_tokenizer_input(text);
  thread_local std::vector<text_segment> segments;
  segments.clear();
  added_.raw().split(text, segments);
  char_positions positions(text);
  const std::size_t first = out.size();
  std::uint32_t word = 0;
  const bool normalizes = !normalizer_.steps().empty() || !added_.normalized().empty();
  for (const auto& s : segments) {
    if (s.token >= 0) {
      const text_span bytes = added_span(s);
      const std::int32_t id = added_.raw().tokens()[static_cast<std::size_t>(s.token)].id;
      out.push_back(id, positions.chars(bytes.begin, bytes.end), bytes, word++);
    } else if (normalizes) {
      encode_normalized(text, s.begin, s.end, positions, out, word);
    } else {
      const std::uint32_t begin = s.begin;
      encode_stretch(
          text.substr(s.begin, s.end - s.begin),
          [begin](std::uint32_t from, std::uint32_t to) { return text_span{begin + from, begin + to}; }, positions,
          out, word);
    }
  }
  if (options_.trim_offsets) trim_offsets(out, first);
}

CPUTRAIN_DECL void byte_level_bpe_tokenizer::encode_normalized(std::string_view text, std::uint32_t begin,
                                                             std::uint32_t end, const char_positions& positions,
                                                             token_sequence& out, std::uint32_t& word_index) const {
  thread_local normalized_text normalized;
  thread_local std::vector<text_segment> parts;
  normalized.assign(text.substr(begin, end - begin));
  normalizer_.apply(normalized);
  parts.clear();
  if (normalized.empty()) return;
  added_.normalized().split(normalized.str(), parts);
  // Original bytes of the stretch's normalized bytes [from, to).
  const auto original = [&](std::size_t from, std::size_t to) {
    const text_span o = normalized.original(from, to);
    return text_span{begin + o.begin, begin + o.end};
  };
  for (const auto& p : parts) {
    if (p.token >= 0) {
      const text_span inner = added_span(p);
      const text_span o = original(inner.begin, inner.end);
      const std::int32_t id = added_.normalized().tokens()[static_cast<std::size_t>(p.token)].id;
      out.push_back(id, positions.chars(o.begin, o.end), o, word_index++);
      continue;
    }
    const std::uint32_t part_begin = p.begin;
    encode_stretch(
        std::string_view(normalized.str()).substr(p.begin, p.end - p.begin),
        [&](std::uint32_t from, std::uint32_t to) { return original(part_begin + from, part_begin + to); },
        positions, out, word_index);
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
