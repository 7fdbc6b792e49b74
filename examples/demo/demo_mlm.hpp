// The demo's text for masked language modelling: make_demo_mlm(options) writes the QA demo's paragraphs
// (demo_paragraph_builder.hpp), one a line, and write_demo_mlm_text(lines, path) writes them. A masked word is
// mostly guessable from its paragraph: a person's name recurs in every sentence about them, siblings share a last
// name, a town drawn for one sentence often comes back in another, and the wordings are few. Deterministic like
// make_demo_squad; an eval split names what a train split never does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "cputrain/io/atomic_file.hpp"
#include "demo/demo_names.hpp"
#include "demo/demo_paragraph_builder.hpp"
#include "demo/demo_rng.hpp"
#include "demo/demo_squad.hpp"

namespace cputrain::demo {

struct demo_mlm_options {
  std::uint64_t seed = 1;
  demo_split split = demo_split::train;
  std::size_t paragraphs = 30000;  // about 6 MB
  /// Share of long paragraphs (200+ tokens), as in the QA demo: they fill run_mlm's blocks of 128 tokens and more.
  double long_paragraph_fraction = 1.0 / 40.0;
};

/// Paragraphs of made-up facts, one a string, without line breaks. Deterministic: the same options give the same
/// paragraphs.
[[nodiscard]] inline std::vector<std::string> make_demo_mlm(const demo_mlm_options& options) {
  // As in make_demo_squad: the split is mixed into the seed, so a train and an eval set of one seed differ.
  detail::demo_rng rng(options.seed * 2 + (options.split == demo_split::eval ? 1 : 0));
  std::vector<std::string> lines;
  lines.reserve(options.paragraphs);
  std::string title;
  std::vector<std::size_t> fact_start;
  for (std::size_t n = 0; n < options.paragraphs; ++n) {
    const bool long_paragraph = rng.chance(options.long_paragraph_fraction);
    const detail::demo_paragraph p = detail::demo_make_paragraph(rng, options.split, long_paragraph, title);
    lines.push_back(detail::demo_context(rng, p, fact_start));
  }
  return lines;
}

/// Writes `lines` as plain text, each ended by "\n" (run_mlm's --line_by_line takes each as an example), atomically.
/// io_error on failure.
inline void write_demo_mlm_text(std::span<const std::string> lines, const std::filesystem::path& path) {
  std::string text;
  for (const std::string& line : lines) {
    text += line;
    text += '\n';
  }
  io::write_file_atomically(path, text);
}

}  // namespace cputrain::demo
