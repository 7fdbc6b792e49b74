#!/usr/bin/env node
// Makes the tokenizer conformance data from Hugging Face's own tokenizer (the Rust `tokenizers` library through
// its npm package), set up exactly as bert-base-uncased's tokenizer.json: BertNormalizer (clean text, Chinese
// characters, accents stripped, lower case), BertPreTokenizer, WordPiece (##, [UNK], 100 characters) and the
// five special tokens matched on the raw text.
//
//   npm install --prefix /tmp/tokref tokenizers@0.23.2
//   NODE_PATH=/tmp/tokref/node_modules node scripts/make_tokenizer_reference.cjs <mode> <vocab.txt> [squad files]
//
// Modes:
//   overrides  include/cputrain/text/detail/reference_char_classes.hpp: the code points whose class (punctuation,
//              control, non-spacing mark, Chinese character) in the reference differs from current Unicode. The
//              reference classifies with Unicode 8.0 tables (the `unicode_categories` crate), so characters added
//              or re-categorised since then behave differently there; cputrain matches it.
//   texts      tests/text/data/tokenizer_reference.jsonl: ids and offsets for real text (the SQuAD files given)
//              and nasty text.
//   sweep      tests/text/data/tokenizer_sweep.json: a hash of ids and offsets for every Unicode code point, in
//              blocks of 4096, each code point inside a word and alone (see sweep_text below).
//   pairs      tests/data/data/qa_windows_reference.jsonl: question/context pairs truncated "only_second" with
//              overflowing windows and stride, as run_qa.py's tokenizer call makes them.
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require('tokenizers');

const [mode, vocabPath, ...extra] = process.argv.slice(2);
if (!mode || !vocabPath) {
  console.error('usage: make_tokenizer_reference.cjs overrides|texts|sweep|pairs <vocab.txt> [squad.json...]');
  process.exit(2);
}
const root = path.resolve(__dirname, '..');

function loadVocab(file) {
  const vocab = {};
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((line, i) => { vocab[line.replace(/\r$/, '')] = i; });
  return vocab;
}

function bertTokenizer(vocab) {
  const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  const json = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: special.map(t => ({ id: vocab[t], content: t, single_word: false, lstrip: false, rstrip: false,
                                      normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null,
                  lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
               { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
             { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } },
             { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
                        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100,
             vocab },
  };
  return tk.Tokenizer.fromString(JSON.stringify(json));
}

function* codePoints() {
  for (let c = 0; c < 0x110000; ++c) if (c < 0xD800 || c > 0xDFFF) yield c;
}

// --- overrides -------------------------------------------------------------------------------------------------
function overrides() {
  const pre = tk.bertPreTokenizer();
  const clean = tk.bertNormalizer({ cleanText: true, handleChineseChars: false, stripAccents: false, lowercase: false });
  const chinese = tk.bertNormalizer({ cleanText: false, handleChineseChars: true, stripAccents: false, lowercase: false });
  const strip = tk.bertNormalizer({ cleanText: false, handleChineseChars: false, stripAccents: true, lowercase: false });
  const asciiPunct = c => (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
  const classes = { punctuation: [], control: [], nonspacing_mark: [] };
  const chineseRanges = [];
  for (const c of codePoints()) {
    const ch = String.fromCodePoint(c);
    const s = 'a' + ch + 'b';
    const pieces = pre.preTokenizeString(s);
    const refPunct = pieces.length === 3 && pieces[1][0] === ch;
    const uniPunct = asciiPunct(c) || /\p{P}/u.test(ch);
    if (refPunct !== uniPunct) classes.punctuation.push([c, refPunct]);

    const refControl = clean.normalizeString(s) === 'ab' && c !== 0 && c !== 0xFFFD;
    const uniControl = c !== 9 && c !== 10 && c !== 13 && /[\p{Cc}\p{Cf}\p{Co}]/u.test(ch);
    if (refControl !== uniControl && c !== 0 && c !== 0xFFFD) classes.control.push([c, refControl]);

    if (ch.normalize('NFD') === ch) {
      const refMark = strip.normalizeString(ch) === '';
      const uniMark = /\p{Mn}/u.test(ch);
      if (refMark !== uniMark) classes.nonspacing_mark.push([c, refMark]);
    }
    if (chinese.normalizeString(s) !== s) {
      const last = chineseRanges[chineseRanges.length - 1];
      if (last && last[1] === c - 1) last[1] = c; else chineseRanges.push([c, c]);
    }
  }
  const ranges = list => {
    const out = [];
    for (const [c, v] of list) {
      const last = out[out.length - 1];
      if (last && last[1] === c - 1 && last[2] === v) last[1] = c; else out.push([c, c, v]);
    }
    return out;
  };
  const hex = c => '0x' + c.toString(16).toUpperCase().padStart(4, '0');
  let text = `// Generated by scripts/make_tokenizer_reference.cjs overrides (tokenizers ${require('tokenizers/package.json').version},
// checked against Unicode ${process.versions.unicode}); do not edit.
//
// Hugging Face's BERT normaliser and pre-tokeniser classify characters with Unicode 8.0 tables, so characters
// assigned or re-categorised since then are treated differently there. These ranges give the reference's answer
// for every code point where it differs from current Unicode; cputrain asks utf8proc for all others.
#pragma once

namespace cputrain::text::detail {

struct class_override {
  char32_t first;
  char32_t last;
  bool value;
};

`;
  for (const [name, list] of Object.entries(classes)) {
    const r = ranges(list);
    text += `inline constexpr class_override ${name}_overrides[] = {\n`;
    for (const [a, b, v] of r) text += `    {${hex(a)}, ${hex(b)}, ${v}},\n`;
    text += `};\n\n`;
  }
  text += `// Code points the reference surrounds with spaces as Chinese characters (CJK ideograph blocks, as it lists them).
struct char_range {
  char32_t first;
  char32_t last;
};

inline constexpr char_range chinese_char_ranges[] = {\n`;
  for (const [a, b] of chineseRanges) text += `    {${hex(a)}, ${hex(b)}},\n`;
  text += `};\n\n}  // namespace cputrain::text::detail\n`;
  const out = path.join(root, 'include/cputrain/text/detail/reference_char_classes.hpp');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, text);
  console.error(`wrote ${out}: ${Object.entries(classes).map(([k, v]) => `${k} ${v.length}`).join(', ')}, chinese ranges ${chineseRanges.length}`);
}

// --- texts -----------------------------------------------------------------------------------------------------
const { nastyTexts } = require('./nasty_texts.cjs');

function squadTexts(files) {
  const texts = [];
  for (const file of files) {
    const data = JSON.parse(fs.readFileSync(file, 'utf8')).data;
    for (const record of data) {
      if (record.paragraphs) {
        for (const p of record.paragraphs) {
          texts.push(p.context);
          for (const qa of p.qas) texts.push(qa.question.trimStart());
        }
      } else {
        texts.push(record.context, record.question.trimStart());
      }
    }
  }
  return [...new Set(texts)];
}

async function texts(tokenizer) {
  const out = [];
  for (const text of [...squadTexts(extra), ...nastyTexts]) {
    const e = await tokenizer.encode(text, null, { addSpecialTokens: false });
    out.push(JSON.stringify({ text, ids: e.getIds(), offsets: e.getOffsets() }));
  }
  const file = path.join(root, 'tests/text/data/tokenizer_reference.jsonl');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, out.join('\n') + '\n');
  console.error(`wrote ${file}: ${out.length} texts`);
}

// --- sweep -----------------------------------------------------------------------------------------------------
// Every code point c of a block appears as "c ac" + "b " around it: alone, after a letter and before one, so each
// is normalised, classified and looked up both as a word start and as a continuation.
const sweepBlock = 4096;
function sweepText(first) {
  let text = '';
  for (let c = first; c < first + sweepBlock && c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const ch = String.fromCodePoint(c);
    text += ch + ' a' + ch + 'b ';
  }
  return text;
}

// FNV-1a (32 bits) over each token's id, begin and end as little-endian 32-bit words.
function fnv(ids, offsets) {
  let h = 0x811c9dc5;
  const word = v => { for (let i = 0; i < 4; ++i) { h ^= (v >>> (8 * i)) & 0xff; h = Math.imul(h, 16777619) >>> 0; } };
  for (let i = 0; i < ids.length; ++i) { word(ids[i]); word(offsets[i][0]); word(offsets[i][1]); }
  return h >>> 0;
}

async function sweep(tokenizer) {
  const blocks = [];
  for (let first = 0; first < 0x110000; first += sweepBlock) {
    const e = await tokenizer.encode(sweepText(first), null, { addSpecialTokens: false });
    blocks.push({ first, tokens: e.getIds().length, hash: fnv(e.getIds(), e.getOffsets()) });
  }
  const file = path.join(root, 'tests/text/data/tokenizer_sweep.json');
  fs.writeFileSync(file, JSON.stringify({ block: sweepBlock, blocks }) + '\n');
  console.error(`wrote ${file}: ${blocks.length} blocks`);
}

// --- pairs -----------------------------------------------------------------------------------------------------
// run_qa.py's call: tokenizer(question, context, truncation="only_second", max_length, stride,
// return_overflowing_tokens=True, return_offsets_mapping=True), at several lengths so contexts need several windows.
// Note: tokenizers 0.23.1+ stops tokenizing at max_length tokens before cutting windows (huggingface/tokenizers
// #2091), so windows after the first stop short; tests/data/qa_features_test.cpp checks them as prefixes.
async function pairs(vocab) {
  const lengths = [[384, 128], [64, 16], [48, 20], [40, 8]];
  const records = [];
  const examples = [];
  for (const file of extra) {
    for (const record of JSON.parse(fs.readFileSync(file, 'utf8')).data) {
      if (record.paragraphs) {
        for (const p of record.paragraphs) for (const qa of p.qas) examples.push({ id: qa.id, question: qa.question, context: p.context });
      } else {
        examples.push({ id: record.id, question: record.question, context: record.context });
      }
    }
  }
  const seen = new Set();
  for (const [maxLength, stride] of lengths) {
    const tokenizer = bertTokenizer(vocab);
    tokenizer.setTruncation(maxLength, { stride, strategy: 'OnlySecond' });
    for (const ex of examples) {
      const key = `${maxLength}/${ex.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const e = await tokenizer.encode(ex.question.trimStart(), ex.context);
      const windows = [e, ...e.getOverflowing()].map(w => ({ ids: w.getIds(), type_ids: w.getTypeIds(), offsets: w.getOffsets() }));
      records.push(JSON.stringify({ id: ex.id, max_length: maxLength, stride, windows }));
    }
  }
  const file = path.join(root, 'tests/data/data/qa_windows_reference.jsonl');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, records.join('\n') + '\n');
  console.error(`wrote ${file}: ${records.length} pairs`);
}

(async () => {
  if (mode === 'overrides') overrides();
  else if (mode === 'texts') await texts(bertTokenizer(loadVocab(vocabPath)));
  else if (mode === 'sweep') await sweep(bertTokenizer(loadVocab(vocabPath)));
  else if (mode === 'pairs') await pairs(loadVocab(vocabPath));
  else { console.error(`unknown mode ${mode}`); process.exit(2); }
})();
