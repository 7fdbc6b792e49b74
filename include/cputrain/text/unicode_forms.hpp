// cputrain::text::unicode_forms — Unicode normalization (NFC, NFD, NFKC, NFKD) and lower case as Hugging Face's
// normalizers apply them to a normalized_text: the new characters and, for each, the change its transform takes, so
// that offsets map back exactly as there. The changes follow the reference's unicode-normalization-alignments crate:
// each character decomposed (its first piece replaces it, the others are inserted), the combining marks of a run
// put in canonical order carrying their changes, then each mark composed into the starter before it where it can
// (the composite takes the starter's change plus the mark's, minus one). utf8proc supplies the decompositions,
// combining classes, compositions and lower case, except where the reference's tables answer otherwise
// (detail/reference_unicode_forms.hpp: its Unicode version is older than utf8proc's, its lower case newer).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include <utf8proc.h>

#include "cputrain/core/separate_compilation.hpp"
#include "cputrain/text/detail/reference_unicode_forms.hpp"
#include "cputrain/text/normalized_text.hpp"
#include "cputrain/text/utf8.hpp"

namespace cputrain::text {

enum class unicode_form { nfc, nfd, nfkc, nfkd };

/// The changes that put valid UTF-8 `text` in `form`, appended to `out`.
CPUTRAIN_DECL void unicode_form_changes(std::string_view text, unicode_form form, std::vector<char_change>& out);

/// The changes that lower-case valid UTF-8 `text` as Rust's char::to_lowercase does, appended to `out`.
CPUTRAIN_DECL void lowercase_changes(std::string_view text, std::vector<char_change>& out);

/// `text` rewritten by unicode_form_changes or lowercase_changes.
inline void apply_unicode_form(normalized_text& text, unicode_form form) {
  thread_local std::vector<char_change> changes;
  changes.clear();
  unicode_form_changes(text.str(), form, changes);
  text.transform(changes);
}
inline void apply_lowercase(normalized_text& text) {
  thread_local std::vector<char_change> changes;
  changes.clear();
  lowercase_changes(text.str(), changes);
  text.transform(changes);
}

namespace detail {

inline int combining_class(char32_t c) noexcept {
  if (c < 0x300 || in_ranges(reference_class_zero, c)) return 0;
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(c))->combining_class;
}

/// The primary composite of `starter` and `next`, or 0 (also where the reference does not decompose the composite).
inline char32_t compose_pair(char32_t starter, char32_t next) noexcept {
  if (next < 0x80) return 0;  // no composite ends in ASCII
  utf8proc_int32_t pair[2] = {static_cast<utf8proc_int32_t>(starter), static_cast<utf8proc_int32_t>(next)};
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE);
  if (utf8proc_normalize_utf32(pair, 2, options) != 1) return 0;
  const auto composite = static_cast<char32_t>(pair[0]);
  return in_ranges(reference_no_canonical_decomposition, composite) ? 0 : composite;
}

/// `c`'s lower case: the reference's where it differs from utf8proc's (Rust's tables are newer).
inline char32_t lower_case(char32_t c) noexcept {
  const auto* end = std::end(reference_lower_case);
  const auto* it = std::lower_bound(std::begin(reference_lower_case), end, c,
                                    [](const lower_case_pair& p, char32_t v) { return p.upper < v; });
  if (it != end && it->upper == c) return it->lower;
  return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
}

struct classed_change {
  int cls;
  char_change c;
};

// Decomposes each character and puts each run of combining marks in canonical order (a stable sort by class).
inline void decompose_in_order(std::string_view text, bool compatibility, std::vector<char_change>& out) {
  thread_local std::vector<classed_change> pending;  // the last starter and the marks after it, not yet ordered
  pending.clear();
  const auto flush = [&] {
    std::stable_sort(pending.begin(), pending.end(),
                     [](const classed_change& a, const classed_change& b) { return a.cls < b.cls; });
    for (const auto& p : pending) out.push_back(p.c);
    pending.clear();
  };
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | (compatibility ? UTF8PROC_COMPAT : 0));
  utf8proc_int32_t pieces[32];
  for (std::size_t pos = 0; pos < text.size();) {
    char32_t cp = 0;
    pos += decode_utf8(text, pos, cp);
    utf8proc_ssize_t n = 1;
    pieces[0] = static_cast<utf8proc_int32_t>(cp);
    const bool kept = compatibility ? in_ranges(reference_no_compatibility_decomposition, cp)
                                    : in_ranges(reference_no_canonical_decomposition, cp);
    if (cp >= 0xA0 && !kept)
      n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), pieces, 32, options, nullptr);
    for (utf8proc_ssize_t i = 0; i < n; ++i) {
      const auto piece = static_cast<char32_t>(pieces[i]);
      const int cls = combining_class(piece);
      if (cls == 0) flush();
      pending.push_back({cls, {piece, i == 0 ? 0 : 1}});
    }
  }
  flush();
}

}  // namespace detail

#if CPUTRAIN_DEFINE_FUNCTIONS
CPUTRAIN_DECL void unicode_form_changes(std::string_view text, unicode_form form, std::vector<char_change>& out) {
  const bool compatibility = form == unicode_form::nfkc || form == unicode_form::nfkd;
  if (form == unicode_form::nfd || form == unicode_form::nfkd) {
    detail::decompose_in_order(text, compatibility, out);
    return;
  }
  thread_local std::vector<char_change> decomposed;
  decomposed.clear();
  detail::decompose_in_order(text, compatibility, decomposed);
  // Composition: `starter` collects the marks that compose into it; the marks it cannot take wait in `blocked`,
  // in order, and follow it out. A mark of a class not above the last waiting one's is blocked from the starter.
  std::optional<char_change> starter;
  thread_local std::vector<char_change> blocked;
  blocked.clear();
  int last_blocked_class = -1;  // -1: none waiting
  const auto emit_starter = [&] {
    out.push_back(*starter);
    out.insert(out.end(), blocked.begin(), blocked.end());
    blocked.clear();
    last_blocked_class = -1;
  };
  for (const char_change& d : decomposed) {
    const int cls = detail::combining_class(d.c);
    if (!starter) {
      if (cls != 0) {
        out.push_back(d);
        continue;
      }
      starter = d;
      continue;
    }
    if (last_blocked_class < 0 || last_blocked_class < cls) {
      if (const char32_t composite = detail::compose_pair(starter->c, d.c)) {
        starter = char_change{composite, starter->change + d.change - 1};
        continue;
      }
    }
    if (cls == 0) {
      emit_starter();
      starter = d;
      continue;
    }
    blocked.push_back(d);
    last_blocked_class = cls;
  }
  if (starter) emit_starter();
}

CPUTRAIN_DECL void lowercase_changes(std::string_view text, std::vector<char_change>& out) {
  for (std::size_t pos = 0; pos < text.size();) {
    char32_t cp = 0;
    pos += decode_utf8(text, pos, cp);
    if (cp < 0x80) {
      out.push_back({cp >= 'A' && cp <= 'Z' ? cp + ('a' - 'A') : cp, 0});
    } else if (cp == 0x130) {  // İ: the one character whose full lower case is two, i and a combining dot above
      out.push_back({U'i', 0});
      out.push_back({char32_t{0x307}, 1});
    } else {
      out.push_back({detail::lower_case(cp), 0});
    }
  }
}
#endif  // CPUTRAIN_DEFINE_FUNCTIONS

}  // namespace cputrain::text
