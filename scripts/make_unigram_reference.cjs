#!/usr/bin/env node
// Makes the SentencePiece Unigram (XLM-RoBERTa) conformance data from Hugging Face's own tokenizer (the Rust
// `tokenizers` library through its npm package), with the small model scripts/make_unigram_model.py trains:
// tests/text/data/xlmr_cut/tokenizer.json (as transformers' XLMRobertaConverter writes it today: Precompiled +
// Strip(right) + Replace(" {2,}", "▁"), Metaspace prepend_scheme always) and tests/text/data/xlmr_cut_hub/
// tokenizer.json (the older form of most Hub checkpoints: Precompiled only, Metaspace add_prefix_space).
//
//   npm install --prefix /tmp/tokref tokenizers@0.23.2
//   /usr/bin/python3 scripts/make_unigram_model.py /work/shared/data/squad/sample.json \
//       /work/shared/data/squad/dev-v2.0.json /work/shared/data/bert-base-uncased/vocab.txt
//   NODE_PATH=/tmp/tokref/node_modules node scripts/make_unigram_reference.cjs <mode> [squad files]
//
// with squad files /work/shared/data/squad/sample.json /work/shared/data/squad/dev-v2.0.json. Offsets are in code
// points (Unicode scalar values) as the binding returns them (checked at start-up with an astral-plane character).
//
// Modes:
//   texts  tests/text/data/unigram_reference.jsonl: for each text (the SQuAD files' texts, the first 150 of each
//          file, nasty texts, the Unigram texts below), with the special tokens: xlmr_cut's ids, offsets,
//          special-tokens mask, word ids (-1 for none) and tokens; its normalized text and the pre-tokenizer's pieces
//          of it ([piece, [begin, end]] in code points of the normalized text); xlmr_cut_hub's ids, offsets and
//          word ids.
//   pairs  tests/text/data/unigram_pair_reference.jsonl: (question, context cut at 240 code points) of the SQuAD
//          files and pairs of the Unigram texts, encoded with the special tokens by xlmr_cut: ids, type ids,
//          offsets, special-tokens mask, word ids, sequence ids (-1 for none).
//   normalizers  tests/text/data/unigram_normalizers_reference.jsonl: xlmr_cut with its normalizer replaced by each
//          of `normalizerVariants` below (Unicode's four forms, Lowercase, StripAccents, Prepend, Nmt,
//          BertNormalizer, ByteLevel, and sequences of them with Strip and Replace), for each nasty text and Unigram
//          text: the variant's index and JSON, the text, and, with the
//          special tokens, ids, offsets and word ids (-1 for none), and the normalizer's own output.
//   forms  /tmp/reference_unicode_forms.json, for scripts/make_unicode_form_overrides.py: the reference's NFD, NFKD
//          and lower case of every code point where they change it, and the code points its NFD moves before U+0345
//          (a non-zero combining class); and tests/text/data/unicode_forms_sweep.json: a hash
//          (tokenizer_reference_common.cjs's fnvBytes) of the UTF-8 of NFC, NFD, NFKC, NFKD, Lowercase and
//          StripAccents applied to each block of 4096 code points, each code point c appended as
//          "a" + c + U+0301 + c + " ".
//   marks  include/cputrain/text/detail/reference_combining_marks.hpp: the code points the StripAccents normalizer
//          removes (the reference crate's combining marks, general category M in its Unicode version), as ranges.
//   sweep  tests/text/data/unigram_sweep.json: a hash (tokenizer_reference_common.cjs's fnv of ids and offsets) of
//          xlmr_cut's encoding, without special tokens, of every Unicode code point but the surrogates, in blocks
//          of 4096 from 0: each code point c of the block, in order, appends
//              "a" + c + " " + c + "b  " + c + "\u0301 "
//          (c after a letter, alone, before a letter and two spaces, before a combining acute accent and a space).
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require('tokenizers');
const { nastyTexts } = require('./nasty_texts.cjs');
const { squadTexts, fnv, fnvBytes } = require('./tokenizer_reference_common.cjs');

const [mode, ...squadFiles] = process.argv.slice(2);
if (!mode) {
  console.error('usage: make_unigram_reference.cjs texts|pairs|sweep|normalizers|marks|forms [squad.json...]');
  process.exit(2);
}
const root = path.resolve(__dirname, '..');
const dataDir = path.join(root, 'tests/text/data');
const load = name => tk.Tokenizer.fromFile(path.join(dataDir, name, 'tokenizer.json'));
const orNone = list => list.map(v => (v === null || v === undefined ? -1 : v));

// What the normalizer (the precompiled nmt_nfkc charsmap, the strip, the space runs), the Metaspace pre-tokenizer,
// the Viterbi search and the added tokens decide on.
const unigramTexts = [
  'two  spaces, three   spaces, four    spaces',
  '  leading spaces',
  'trailing spaces   ',
  '   both   ',
  ' ',
  '     ',
  'tab\tand\t\ttabs, new\nline\n\nand\r\ncrlf',
  '\ttab first\n',
  'nbsp\u00a0here, two\u00a0\u00a0nbsp, ideographic\u3000space, em\u2003space, thin\u2009space',
  '\u3000\u3000ideographic first',
  'Ｆｕｌｌｗｉｄｔｈ ＬＥＴＴＥＲＳ ａｎｄ ｄｉｇｉｔｓ １２３４５ ！？',
  'ligatures ﬁne ﬀ ﬂow ﬃce ﬄ ﬅ ﬆ',
  'compatibility ㎏ ㎞ ① ⑳ ½ ¾ ™ Ⅻ ⅻ ㈱ ㍻ ｶﾀｶﾅ ℡ ℃',
  'e\u0301 cafe\u0301 A\u030a n\u0303o e\u0301\u0301',
  'Hangul jamo \u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af composed',
  'stacked a\u0301\u0302\u0303\u0304\u0305\u0306 and o\u0308\u0304\u0301\u0323\u0331',
  'Ａ\u0301 ①② ﬁ\u0301',
  '\u0001start control',
  'middle\u0001control\u007fdel\u200bzwsp\ufeffbom\u00adshy',
  'end control\u0001',
  'end zwsp\u200b',
  '\u200babc',
  '\ufeffbom first',
  '\u00adshy first',
  '\u200b\ufeff\u0001\u007f',
  '\u200b \u200b',
  'zwj 👨‍👩‍👧 👩🏽‍💻 🏴‍☠️ ❤️‍🔥 and 🇩🇪',
  'unknown 𠀀𪛖 𫜴 tamil தமிழ் emoji 🦜🦩 mixed x𠀀y',
  'ன்னு 🦜🦜🦜 𠀀𠀀',
  '<mask> first',
  'a <mask> b',
  'a<mask>b',
  'a  <mask>  b',
  'last <mask>',
  '<mask><mask> <mask>',
  '<s> and </s> in text <pad> <unk> <s></s>',
  'x<s>y </s>z',
  '``quotes\'\' and "double" and \'single\'',
  '𝐀𝐁𝐂 x𝐀y',
  'MIXED Case And UPPER lower',
];

const checkOffsets = async tokenizer => {
  const e = await tokenizer.encode('\u{1D400}b c', null, { addSpecialTokens: false });
  const last = e.getOffsets()[e.getOffsets().length - 1];
  if (last[1] !== 4) throw new Error(`offsets are not in code points: ${JSON.stringify(e.getOffsets())}`);
};

async function texts() {
  const cut = load('xlmr_cut');
  const hub = load('xlmr_cut_hub');
  await checkOffsets(cut);
  const normalizer = cut.getNormalizer();
  const pre = cut.getPreTokenizer();
  const all = [...new Set([...squadFiles.flatMap(f => squadTexts([f]).slice(0, 150)), ...nastyTexts,
                           ...unigramTexts])];
  const out = [];
  for (const text of all) {
    const e = await cut.encode(text, null, { addSpecialTokens: true });
    const h = await hub.encode(text, null, { addSpecialTokens: true });
    const normalized = normalizer.normalizeString(text);
    out.push(JSON.stringify({
      text, ids: e.getIds(), offsets: e.getOffsets(), special: e.getSpecialTokensMask(),
      word_ids: orNone(e.getWordIds()), tokens: e.getTokens(),
      normalized, pieces: pre.preTokenizeString(normalized),
      hub_ids: h.getIds(), hub_offsets: h.getOffsets(), hub_word_ids: orNone(h.getWordIds()),
    }));
  }
  const file = path.join(dataDir, 'unigram_reference.jsonl');
  fs.writeFileSync(file, out.join('\n') + '\n');
  console.error(`wrote ${file}: ${out.length} texts`);
}

// (question, start of its context), every question of the SQuAD files, contexts cut at 240 code points.
function squadPairs(files, count) {
  const pairs = [];
  for (const file of files) {
    for (const record of JSON.parse(fs.readFileSync(file, 'utf8')).data) {
      const items = record.paragraphs
        ? record.paragraphs.flatMap(p => p.qas.map(qa => [qa.question.trimStart(), p.context]))
        : [[record.question.trimStart(), record.context]];
      for (const [q, c] of items) pairs.push([q, Array.from(c).slice(0, 240).join('')]);
    }
  }
  return pairs.slice(0, count);
}

async function pairs() {
  const cut = load('xlmr_cut');
  await checkOffsets(cut);
  const cases = squadPairs(squadFiles, 40);
  for (let i = 0; i + 1 < unigramTexts.length; i += 3) {
    cases.push([unigramTexts[i], unigramTexts[i + 1]]);
  }
  cases.push(['', ''], ['', 'x'], ['x', ''], ['  ', ' y '], ['<mask>', '<mask> z'], ['\u200b', 'a\u200b']);
  const out = [];
  for (const [first, second] of cases) {
    const e = await cut.encode(first, second, { addSpecialTokens: true });
    out.push(JSON.stringify({
      first, second, ids: e.getIds(), type_ids: e.getTypeIds(), offsets: e.getOffsets(),
      special: e.getSpecialTokensMask(), word_ids: orNone(e.getWordIds()),
      sequence_ids: orNone(e.getSequenceIds()),
    }));
  }
  const file = path.join(dataDir, 'unigram_pair_reference.jsonl');
  fs.writeFileSync(file, out.join('\n') + '\n');
  console.error(`wrote ${file}: ${out.length} pairs`);
}

const sweepBlock = 4096;
function sweepText(first) {
  let text = '';
  for (let c = first; c < first + sweepBlock && c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const ch = String.fromCodePoint(c);
    text += 'a' + ch + ' ' + ch + 'b  ' + ch + '\u0301 ';
  }
  return text;
}

// The normalizers of tokenizer.json files on the Hub beyond XLM-R's Precompiled one: Unicode's forms alone (NFKC in
// ALBERT-style and many multilingual files) and in sequences with Lowercase, Strip and Replace, and the rest of
// Hugging Face's normalizers.
const normalizerVariants = [
  { type: 'NFC' },
  { type: 'NFD' },
  { type: 'NFKC' },
  { type: 'NFKD' },
  { type: 'Lowercase' },
  { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
  { type: 'Sequence', normalizers: [{ type: 'NFKD' }, { type: 'Lowercase' }] },
  { type: 'Sequence', normalizers: [{ type: 'Lowercase' }, { type: 'NFC' },
                                    { type: 'Strip', strip_left: true, strip_right: true }] },
  { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }] },
  { type: 'Prepend', prepend: '\u2581' },
  { type: 'Nmt' },
  { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: false, strip_accents: true, lowercase: false },
  { type: 'BertNormalizer', clean_text: false, handle_chinese_chars: true, strip_accents: false, lowercase: true },
  { type: 'ByteLevel' },
  { type: 'Sequence', normalizers: [{ type: 'Nmt' }, { type: 'NFKC' },
                                    { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
                                    { type: 'Prepend', prepend: '\u2581' }] },
];

async function normalizers() {
  const base = JSON.parse(fs.readFileSync(path.join(dataDir, 'xlmr_cut/tokenizer.json'), 'utf8'));
  const all = [...new Set([...nastyTexts, ...unigramTexts])];
  const out = [];
  for (const [index, variant] of normalizerVariants.entries()) {
    const t = tk.Tokenizer.fromString(JSON.stringify({ ...base, normalizer: variant }));
    await checkOffsets(t);
    const normalizer = t.getNormalizer();
    for (const text of all) {
      const e = await t.encode(text, null, { addSpecialTokens: true });
      out.push(JSON.stringify({
        variant: index, normalizer: variant, text, ids: e.getIds(), offsets: e.getOffsets(),
        word_ids: orNone(e.getWordIds()), normalized: normalizer.normalizeString(text),
      }));
    }
  }
  const file = path.join(dataDir, 'unigram_normalizers_reference.jsonl');
  fs.writeFileSync(file, out.join('\n') + '\n');
  console.error(`wrote ${file}: ${out.length} encodings, ${normalizerVariants.length} normalizers`);
}

const formsSweepBlock = 4096;

async function forms() {
  const normalizers = {
    NFC: tk.nfcNormalizer(), NFD: tk.nfdNormalizer(), NFKC: tk.nfkcNormalizer(), NFKD: tk.nfkdNormalizer(),
    Lowercase: tk.lowercase(), StripAccents: tk.stripAccentsNormalizer(),
  };
  const codePointsOf = s => Array.from(s).map(ch => ch.codePointAt(0));
  const facts = { nfd: {}, nfkd: {}, lower: {}, marks: [] };
  for (let c = 0; c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const ch = String.fromCodePoint(c);
    const d = normalizers.NFD.normalizeString(ch);
    const kd = normalizers.NFKD.normalizeString(ch);
    const lower = normalizers.Lowercase.normalizeString(ch);
    if (d !== ch) facts.nfd[c] = codePointsOf(d);
    if (kd !== ch) facts.nfkd[c] = codePointsOf(kd);
    if (lower !== ch) facts.lower[c] = codePointsOf(lower);
    // U+0345 has the highest class (240): a character NFD puts before it has a class between 1 and 239.
    const moved = normalizers.NFD.normalizeString('a\u0345' + ch) !== 'a\u0345' + ch;
    if (d === ch && c !== 0x345 && moved) facts.marks.push(c);
  }
  fs.writeFileSync('/tmp/reference_unicode_forms.json', JSON.stringify(facts));
  const sweep = {};
  for (const [name, n] of Object.entries(normalizers)) {
    sweep[name] = [];
    for (let first = 0; first < 0x110000; first += formsSweepBlock) {
      let text = '';
      for (let c = first; c < first + formsSweepBlock && c < 0x110000; ++c) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        const ch = String.fromCodePoint(c);
        text += 'a' + ch + '\u0301' + ch + ' ';
      }
      sweep[name].push(fnvBytes(Buffer.from(n.normalizeString(text), 'utf8')));
    }
  }
  const file = path.join(dataDir, 'unicode_forms_sweep.json');
  fs.writeFileSync(file, JSON.stringify({ block: formsSweepBlock, forms: sweep }) + '\n');
  console.error(`wrote /tmp/reference_unicode_forms.json and ${file}`);
}

async function marks() {
  const strip = tk.stripAccentsNormalizer();
  const ranges = [];
  for (let c = 0; c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    if (strip.normalizeString('a' + String.fromCodePoint(c) + 'b') !== 'ab') continue;
    const last = ranges[ranges.length - 1];
    if (last && last[1] === c - 1) last[1] = c;
    else ranges.push([c, c]);
  }
  const hex = c => '0x' + c.toString(16).toUpperCase().padStart(4, '0');
  const lines = [
    '// Generated by scripts/make_unigram_reference.cjs marks (tokenizers 0.23.2); do not edit.',
    '//',
    "// The code points Hugging Face's StripAccents normalizer removes: its crate's combining marks (general",
    '// category M in the Unicode version of its tables), which differ from current Unicode for the marks assigned',
    '// since.',
    '#pragma once',
    '',
    '#include "cputrain/text/detail/code_point_ranges.hpp"',
    '',
    'namespace cputrain::text::detail {',
    '',
    'inline constexpr code_point_range reference_combining_marks[] = {',
    ...ranges.map(([a, b]) => `    {${hex(a)}, ${hex(b)}},`),
    '};',
    '',
    '}  // namespace cputrain::text::detail',
    '',
  ];
  const file = path.join(root, 'include/cputrain/text/detail/reference_combining_marks.hpp');
  fs.writeFileSync(file, lines.join('\n'));
  console.error(`wrote ${file}: ${ranges.length} ranges`);
}

async function sweep() {
  const cut = load('xlmr_cut');
  await checkOffsets(cut);
  const blocks = [];
  for (let first = 0; first < 0x110000; first += sweepBlock) {
    const e = await cut.encode(sweepText(first), null, { addSpecialTokens: false });
    blocks.push({ first, tokens: e.getIds().length, hash: fnv(e.getIds(), e.getOffsets()) });
  }
  const file = path.join(dataDir, 'unigram_sweep.json');
  fs.writeFileSync(file, JSON.stringify({ block: sweepBlock, blocks }) + '\n');
  console.error(`wrote ${file}: ${blocks.length} blocks`);
}

(async () => {
  if (mode === 'texts') await texts();
  else if (mode === 'pairs') await pairs();
  else if (mode === 'sweep') await sweep();
  else if (mode === 'normalizers') await normalizers();
  else if (mode === 'marks') await marks();
  else if (mode === 'forms') await forms();
  else { console.error(`unknown mode ${mode}`); process.exit(2); }
})().catch(e => { console.error(e); process.exit(1); });
