#!/usr/bin/env node
// Makes the conformance data of WordPiece tokenizer.json files set up otherwise than BERT's (the general path,
// text/wordpiece_tokenizer.hpp) from Hugging Face's own tokenizer (the Rust `tokenizers` library through its npm
// package):
//
//   npm install --prefix /tmp/tokref tokenizers@0.23.2
//   NODE_PATH=/tmp/tokref/node_modules node scripts/make_wordpiece_reference.cjs model|texts
//
// Modes:
//   model  tests/text/data/wordpiece_cut/tokenizer.json: a WordPiece tokenizer as Hugging Face's tutorial trains one
//          (NFD, Lowercase, StripAccents; Whitespace; "##"; BERT's special tokens and template), its vocabulary made
//          from tests/text/data/xlmr_cut's Unigram pieces: each piece that starts a word ("▁the") as a word start
//          ("the"), each other piece as a continuation ("##s"), and every piece of one character as both.
//   texts  tests/text/data/wordpiece_reference.jsonl: wordpiece_cut with each of `variants` below applied (sections
//          replaced, model fields changed, vocabulary's "##" renamed, added tokens numbered after the vocabulary),
//          for each nasty text and WordPiece text: the variant's index and patch, the text and, with the special
//          tokens, ids, offsets (code points) and word ids (-1 for none).
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require('tokenizers');
const { nastyTexts } = require('./nasty_texts.cjs');

const mode = process.argv[2];
const root = path.resolve(__dirname, '..');
const dataDir = path.join(root, 'tests/text/data');
const cutFile = path.join(dataDir, 'wordpiece_cut/tokenizer.json');
const orNone = list => list.map(v => (v === null || v === undefined ? -1 : v));
const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

function model() {
  const unigram = JSON.parse(fs.readFileSync(path.join(dataDir, 'xlmr_cut/tokenizer.json'), 'utf8'));
  const tokens = [...specials];
  const seen = new Set(tokens);
  const add = t => { if (t.length && !seen.has(t)) { seen.add(t); tokens.push(t); } };
  for (const [piece] of unigram.model.vocab) {
    if (/^<.*>$/.test(piece)) continue;
    if (piece.startsWith('\u2581')) add(piece.slice(1));
    else add('##' + piece);
    if ([...piece].length === 1 && piece !== '\u2581') { add(piece); add('##' + piece); }
  }
  const vocab = {};
  tokens.forEach((t, i) => { vocab[t] = i; });
  const special = (name, type) => ({ SpecialToken: { id: name, type_id: type } });
  const json = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specials.map(t => ({ id: vocab[t], content: t, single_word: false, lstrip: false, rstrip: false,
                                       normalized: false, special: true })),
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'Lowercase' }, { type: 'StripAccents' }] },
    pre_tokenizer: { type: 'Whitespace' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]', 0), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]', 0)],
      pair: [special('[CLS]', 0), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]', 0),
             { Sequence: { id: 'B', type_id: 1 } }, special('[SEP]', 1)],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
                        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100,
             vocab },
  };
  tk.Tokenizer.fromString(JSON.stringify(json));  // the reference reads it
  fs.mkdirSync(path.dirname(cutFile), { recursive: true });
  fs.writeFileSync(cutFile, JSON.stringify(json) + '\n');
  console.error(`wrote ${cutFile}: ${tokens.length} tokens`);
}

// What the WordPiece search and the added tokens decide on.
const wordpieceTexts = [
  'the quick brown fox jumps over the lazy dog',
  'Tokenization of unbelievably long words: antidisestablishmentarianism, pneumonoultramicroscopic',
  'UPPER lower MiXeD and Ünïcödé café naïve',
  'numbers 2024 and 3.14159 and 1,000,000 and x1y2',
  'punctuation!!! (brackets) [square] {curly} "quotes" \'single\' — dashes – and… ellipsis',
  'a <special> b<special>c <special>  d',
  'in new york and New York and newyork and new  york',
  '[CLS] [SEP] [MASK] [UNK] [PAD] written in the text',
  'short words a an i o to of in on at by',
  '',
  '   ',
];

const variants = [
  {},
  { normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null,
                  lowercase: false },
    pre_tokenizer: { type: 'WhitespaceSplit' } },
  { normalizer: { type: 'NFKC' }, pre_tokenizer: { type: 'BertPreTokenizer' },
    model: { max_input_chars_per_word: 8 } },
  { normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null,
                  lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    added_tokens: [
      { content: '<special>', single_word: false, lstrip: true, rstrip: true, normalized: false,
        special: true },
      { content: 'new york', single_word: true, lstrip: false, rstrip: false, normalized: true,
        special: false },
    ] },
  { pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' },
                                                       { type: 'Digits', individual_digits: true }] },
    model: { continuing_subword_prefix: '@@' }, vocab_prefix: '@@' },
  { normalizer: null, pre_tokenizer: null },
  { normalizer: { type: 'Strip', strip_left: true, strip_right: true },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' },
                                                       { type: 'Punctuation', behavior: 'Contiguous' }] } },
];

// `base` with `patch` applied, as tests/text/wordpiece_tokenizer_test.cpp applies it.
function patched(base, patch) {
  const json = JSON.parse(JSON.stringify(base));
  for (const key of ['normalizer', 'pre_tokenizer']) if (key in patch) json[key] = patch[key];
  if (patch.added_tokens) json.added_tokens = [...json.added_tokens, ...patch.added_tokens];
  Object.assign(json.model, patch.model || {});
  if (patch.vocab_prefix) {
    const vocab = {};
    for (const [token, id] of Object.entries(json.model.vocab))
      vocab[token.startsWith('##') && token.length > 2 ? patch.vocab_prefix + token.slice(2) : token] = id;
    json.model.vocab = vocab;
  }
  return json;
}

async function texts() {
  const base = JSON.parse(fs.readFileSync(cutFile, 'utf8'));
  const all = [...new Set([...nastyTexts, ...wordpieceTexts])];
  const out = [];
  const size = Object.keys(base.model.vocab).length;
  for (const [index, patch] of variants.entries()) {
    (patch.added_tokens || []).forEach((t, k) => { t.id = size + k; });  // after the vocabulary's ids
    const t = tk.Tokenizer.fromString(JSON.stringify(patched(base, patch)));
    for (const text of all) {
      const e = await t.encode(text, null, { addSpecialTokens: true });
      out.push(JSON.stringify({ variant: index, patch, text, ids: e.getIds(), offsets: e.getOffsets(),
                                word_ids: orNone(e.getWordIds()) }));
    }
  }
  const file = path.join(dataDir, 'wordpiece_reference.jsonl');
  fs.writeFileSync(file, out.join('\n') + '\n');
  console.error(`wrote ${file}: ${out.length} encodings, ${variants.length} variants`);
}

(async () => {
  if (mode === 'model') model();
  else if (mode === 'texts') await texts();
  else { console.error('usage: make_wordpiece_reference.cjs model|texts'); process.exit(2); }
})().catch(e => { console.error(e); process.exit(1); });
