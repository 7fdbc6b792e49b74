#!/usr/bin/env node
// Makes the pre-tokenizers' conformance data from Hugging Face's own tokenizer (the Rust `tokenizers` library
// through its npm package), on the small Unigram model of tests/text/data/xlmr_cut:
//
//   npm install --prefix /tmp/tokref tokenizers@0.23.2
//   NODE_PATH=/tmp/tokref/node_modules node scripts/make_pre_tokenizer_reference.cjs <mode>
//
// Modes:
//   classes  include/cputrain/text/detail/reference_pre_tokenizer_classes.hpp: the code points the reference's
//            Whitespace pre-tokenizer counts as word characters (its regex's \w; its spaces, \s, are checked to be
//            Unicode's White_Space, as cputrain has them), those Digits counts as numeric, and UnicodeScripts'
//            classes as ranges: code points that never start a new piece ("any"), and for the others a class number
//            shared by the code points that never split from each other. Each code point c is tried as "a" + c + "a"
//            and "ж" + c + "ж" (no class where neither splits), and after the first code point of each class so far.
//   texts    tests/text/data/unigram_pre_tokenizers_reference.jsonl: xlmr_cut with its pre-tokenizer replaced by each
//            of `preTokenizerVariants` below, for each nasty text and pre-tokenizer text: the variant's index and
//            JSON, the text and, with the special tokens, ids, offsets and word ids (-1 for none), and the
//            pre-tokenizer's own pieces of the raw text ([piece, [begin, end]] in code points).
//   sweep    tests/text/data/pre_tokenizer_sweep.json: for Whitespace, Digits and UnicodeScripts, a hash
//            (tokenizer_reference_common.cjs's fnv over the pieces' code-point offsets, id 0) of the pieces of each
//            block of 4096 code points but the surrogates, each code point c appended as
//                "a" + c + "a ж" + c + "ж " + c + c + "1 ".
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require('tokenizers');
const { nastyTexts } = require('./nasty_texts.cjs');
const { fnv } = require('./tokenizer_reference_common.cjs');

const mode = process.argv[2];
const root = path.resolve(__dirname, '..');
const dataDir = path.join(root, 'tests/text/data');
const base = JSON.parse(fs.readFileSync(path.join(dataDir, 'xlmr_cut/tokenizer.json'), 'utf8'));
const withPreTokenizer = p => tk.Tokenizer.fromString(JSON.stringify({ ...base, pre_tokenizer: p }));
const preTokenizer = p => withPreTokenizer(p).getPreTokenizer();
const orNone = list => list.map(v => (v === null || v === undefined ? -1 : v));
const codePoints = function* () {
  for (let c = 0; c < 0x110000; ++c) if (c < 0xD800 || c > 0xDFFF) yield c;
};

function ranges(list) {
  const out = [];
  for (const c of list) {
    if (out.length && out[out.length - 1][1] === c - 1) out[out.length - 1][1] = c;
    else out.push([c, c]);
  }
  return out;
}

function classes() {
  const whitespace = preTokenizer({ type: 'Whitespace' });
  const digits = preTokenizer({ type: 'Digits', individual_digits: true });
  const scripts = preTokenizer({ type: 'UnicodeScripts' });
  const pieces = (p, s) => p.preTokenizeString(s).length;
  const word = [], space = [], numeric = [];
  const representatives = [];  // the first code point of each script class
  const scriptRuns = [];       // [first, last, class], class -1 for "any"
  let previousClass = -2;
  for (const c of codePoints()) {
    const ch = String.fromCodePoint(c);
    const w = pieces(whitespace, 'a' + ch + 'a');
    if (w === 1) word.push(c);
    else if (w === 2) space.push(c);
    if (pieces(digits, 'a' + ch + 'a') === 3) numeric.push(c);
    let cls = -1;
    if (pieces(scripts, 'a' + ch + 'a') !== 1 || pieces(scripts, '\u0436' + ch + '\u0436') !== 1) {
      const same = r => pieces(scripts, String.fromCodePoint(r) + ch) === 1;
      cls = previousClass >= 0 && same(representatives[previousClass]) ? previousClass
                                                                         : representatives.findIndex(same);
      if (cls < 0) {
        cls = representatives.length;
        representatives.push(c);
      }
    }
    const last = scriptRuns[scriptRuns.length - 1];
    if (last && last[2] === cls && last[1] === c - 1) last[1] = c;
    else scriptRuns.push([c, c, cls]);
    previousClass = cls;
  }
  const whiteSpace = [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
                      0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000];
  if (JSON.stringify(space) !== JSON.stringify(whiteSpace))
    throw new Error(`Whitespace's \\s is not White_Space: ${space.map(c => c.toString(16))}`);
  writeClassesHeader(word, numeric, scriptRuns, representatives);
}

// The script names of the classes' first code points, for the header's comments (Perl's Unicode tables).
function scriptNames(codes) {
  const perl = 'use Unicode::UCD qw(charscript); print join("\\n", map { charscript($_) // "?" } @ARGV), "\\n";';
  return require('child_process').execFileSync('perl', ['-e', perl, ...codes.map(String)], { encoding: 'utf8' })
    .trim().split('\n');
}

// `text` as // comment lines of at most 100 characters.
function wrapComment(text) {
  const lines = [''];
  for (const w of text.split(' ')) {
    if (lines[lines.length - 1].length + w.length > 96) lines.push('');
    lines[lines.length - 1] += (lines[lines.length - 1] ? ' ' : '') + w;
  }
  return lines.map(l => '// ' + l);
}

function writeClassesHeader(word, numeric, scriptRuns, representatives) {
  const hex = c => '0x' + c.toString(16).toUpperCase().padStart(4, '0');
  const rangeLines = list => ranges(list).map(([a, b]) => `    {${hex(a)}, ${hex(b)}},`);
  const names = scriptNames(representatives);
  const lines = [
    '// Generated by scripts/make_pre_tokenizer_reference.cjs classes (tokenizers 0.23.2); do not edit.',
    '//',
    "// The character classes of Hugging Face's pre-tokenizers, as the reference answers them for every code point:",
    "// Whitespace's word characters (its regex's \\w, Unicode's Alphabetic, marks, decimal digits, connector",
    "// punctuation and joiners in the Rust regex crate's tables), Digits' numeric characters (Rust's",
    "// char::is_numeric), and UnicodeScripts' scripts (the tokenizers crate's own table, from Unicode 9.0, with",
    '// Hiragana, Katakana and U+30FC counted as Han; code points outside it, and the space, belong to no script).',
    '#pragma once',
    '',
    '#include <cstdint>',
    '',
    '#include "cputrain/text/detail/code_point_ranges.hpp"',
    '',
    'namespace cputrain::text::detail {',
    '',
    'inline constexpr code_point_range reference_word_chars[] = {',
    ...rangeLines(word),
    '};',
    '',
    'inline constexpr code_point_range reference_numeric_chars[] = {',
    ...rangeLines(numeric),
    '};',
    '',
    'struct script_range {',
    '  char32_t first;',
    '  char32_t last;',
    '  std::uint8_t script;',
    '};',
    '',
    ...wrapComment(`Scripts 0 to ${representatives.length - 1}: ` + names.map((n, k) => `${k} ${n}`).join(', ')),
    'inline constexpr script_range reference_scripts[] = {',
    ...scriptRuns.filter(r => r[2] >= 0).map(([a, b, s]) => `    {${hex(a)}, ${hex(b)}, ${s}},`),
    '};',
    '',
    '}  // namespace cputrain::text::detail',
    '',
  ];
  const file = path.join(root, 'include/cputrain/text/detail/reference_pre_tokenizer_classes.hpp');
  fs.writeFileSync(file, lines.join('\n'));
  console.error(`wrote ${file}: ${word.length} word, ${numeric.length} numeric code points, ` +
                `${representatives.length} scripts in ${scriptRuns.length} runs`);
}

// What the pre-tokenizers decide on: runs of digits and other numbers, scripts meeting, punctuation runs, the
// delimiters of the Split and CharDelimiterSplit variants, spaces of every kind.
const preTokenizerTexts = [
  'Hey man! How are you doing?',
  'Hello, world... (quoted) "double" -dash- end.',
  '!!! ?? ... --- a--b a-b-c -',
  'numbers 12345 and 1,234.56 and 3rd 2nd 1st x1y2z3',
  'other numbers ² ³ ½ ¾ Ⅻ ⅻ ① ⑳ ٣٤ ४५ 〇 𝟙𝟚',
  'どこで生れ。Yes',
  'Apples are りんご 林檎 and ラーメン ー カタカナ',
  'mixed Latin Ελληνικά Кириллица עברית العربية',
  'हिन्दी 한국어 中文 ไทย mixed',
  'x\u0301 e\u0301 combining after a letter, \u0301 alone',
  'unassigned \u0378 \u{30000} new \u{1F9CB} \u0897 after',
  'under_score and snake_case_name __dunder__',
  'ⓐⓑⓒ circled Ⓐ and 🄰 squared',
  'zwj a\u200db zwnj a\u200cb',
  'tab\tand\nnew line\r\nand\u00a0nbsp\u3000ideographic\u2009thin',
  '  leading and trailing  ',
  'ababab abba aab baa bab',
  'split-by-dash--twice---thrice',
  'café naïve résumé Ünïcödé',
  '▁already▁has▁replacements ▁ ▁▁',
  '',
  ' ',
  'a',
];

const metaspace = (replacement, scheme, split) =>
  ({ type: 'Metaspace', replacement, prepend_scheme: scheme, split });
const splitOn = (pattern, behavior) => ({ type: 'Split', pattern: { String: pattern }, behavior, invert: false });

const preTokenizerVariants = [
  { type: 'BertPreTokenizer' },
  { type: 'Whitespace' },
  { type: 'WhitespaceSplit' },
  { type: 'Punctuation', behavior: 'Isolated' },
  { type: 'Punctuation', behavior: 'Removed' },
  { type: 'Punctuation', behavior: 'MergedWithPrevious' },
  { type: 'Punctuation', behavior: 'MergedWithNext' },
  { type: 'Punctuation', behavior: 'Contiguous' },
  { type: 'Digits', individual_digits: false },
  { type: 'Digits', individual_digits: true },
  splitOn(' ', 'Removed'),
  splitOn(' ', 'MergedWithPrevious'),
  { ...splitOn('a', 'MergedWithNext'), invert: true },
  splitOn('ab', 'Contiguous'),
  splitOn('\u2581', 'Isolated'),
  { type: 'CharDelimiterSplit', delimiter: '-' },
  { type: 'CharDelimiterSplit', delimiter: '\u00e9' },
  { type: 'UnicodeScripts' },
  { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' },
                                      metaspace('\u2581', 'first', true)] },
  { type: 'Sequence', pretokenizers: [{ type: 'Punctuation', behavior: 'Isolated' },
                                      metaspace('\u2581', 'always', false)] },
  { type: 'Sequence', pretokenizers: [{ type: 'UnicodeScripts' }, { type: 'Digits', individual_digits: true },
                                      metaspace('\u2581', 'always', true)] },
  { type: 'Sequence', pretokenizers: [splitOn(' ', 'MergedWithNext'),
                                      metaspace('_', 'never', true)] },
  { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' }, { type: 'Digits', individual_digits: false }] },
  { type: 'Sequence', pretokenizers: [] },
];

async function texts() {
  const all = [...new Set([...nastyTexts, ...preTokenizerTexts])];
  const out = [];
  for (const [index, variant] of preTokenizerVariants.entries()) {
    const t = withPreTokenizer(variant);
    const pre = t.getPreTokenizer();
    for (const text of all) {
      const e = await t.encode(text, null, { addSpecialTokens: true });
      out.push(JSON.stringify({
        variant: index, pre_tokenizer: variant, text, ids: e.getIds(), offsets: e.getOffsets(),
        word_ids: orNone(e.getWordIds()), pieces: pre.preTokenizeString(text),
      }));
    }
  }
  const file = path.join(dataDir, 'unigram_pre_tokenizers_reference.jsonl');
  fs.writeFileSync(file, out.join('\n') + '\n');
  console.error(`wrote ${file}: ${out.length} encodings, ${preTokenizerVariants.length} pre-tokenizers`);
}

const sweepBlock = 4096;
const sweepVariants = [
  { type: 'Whitespace' }, { type: 'Digits', individual_digits: false }, { type: 'UnicodeScripts' },
];

function sweep() {
  const out = [];
  for (const variant of sweepVariants) {
    const pre = preTokenizer(variant);
    const blocks = [];
    for (let first = 0; first < 0x110000; first += sweepBlock) {
      let text = '';
      for (let c = first; c < first + sweepBlock; ++c) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        const ch = String.fromCodePoint(c);
        text += 'a' + ch + 'a \u0436' + ch + '\u0436 ' + ch + ch + '1 ';
      }
      const pieces = pre.preTokenizeString(text);
      blocks.push({ first, pieces: pieces.length, hash: fnv(pieces.map(() => 0), pieces.map(p => p[1])) });
    }
    out.push({ pre_tokenizer: variant, blocks });
  }
  const file = path.join(dataDir, 'pre_tokenizer_sweep.json');
  fs.writeFileSync(file, JSON.stringify({ block: sweepBlock, sweeps: out }) + '\n');
  console.error(`wrote ${file}`);
}

(async () => {
  if (mode === 'classes') classes();
  else if (mode === 'texts') await texts();
  else if (mode === 'sweep') sweep();
  else { console.error('usage: make_pre_tokenizer_reference.cjs classes|texts|sweep'); process.exit(2); }
})().catch(e => { console.error(e); process.exit(1); });
