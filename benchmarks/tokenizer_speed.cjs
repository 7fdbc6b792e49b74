#!/usr/bin/env node
// Hugging Face's Rust tokenizer (the npm package `tokenizers`) on a file of texts, one thread, MB/s of UTF-8 input
// (MB = 10^6 bytes): the other side of cputrain-bench-tokenizer (benchmarks/tokenizer_speed.cpp), with the same
// options and the same JSON keys; benchmarks/compare_tokenizers.py runs both and prints the table.
//
//   npm install --prefix /tmp/tokref tokenizers@0.23.2
//   NODE_PATH=/tmp/tokref/node_modules node benchmarks/tokenizer_speed.cjs \
//       --family wordpiece|byte_level_bpe|unigram --tokenizer PATH --texts FILE [--repeats N]
//
// wordpiece: PATH is a BERT vocab.txt (or a directory holding one), set up as bert-base-uncased's tokenizer.json
// (scripts/bert_tokenizer_json.cjs); byte_level_bpe and unigram (SentencePiece Unigram, XLM-RoBERTa's family): PATH
// is a tokenizer.json (Tokenizer.fromFile), checked to hold the family's model so that the two sides cannot measure
// different families under one name. FILE holds one text per line; empty lines are skipped. The texts are encoded
// with one `encodeBatch` call (no special tokens) on one thread (RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false):
// one crossing into Rust per pass, so the time is the tokenizer's and not the binding's per-call cost (an async task
// per text costs more than encoding a question). Every text once per repeat; the best repeat's time is kept. Prints
// one human line and, as the last line, one JSON object.
'use strict';
process.env.RAYON_NUM_THREADS = '1';  // before `tokenizers` loads
process.env.TOKENIZERS_PARALLELISM = 'false';
const fs = require('fs');
const path = require('path');

// The model type a tokenizer.json of each family holds (Tokenizer.fromFile would load any).
const jsonModel = { byte_level_bpe: 'BPE', unigram: 'Unigram' };

function parseArgs(argv) {
  const opts = { family: '', tokenizer: '', texts: '', repeats: 5 };
  for (let i = 0; i < argv.length; ++i) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in opts) || i + 1 >= argv.length) usage(`unknown option or missing value: ${argv[i]}`);
    opts[key] = key === 'repeats' ? Number(argv[++i]) : argv[++i];
  }
  if (!Object.hasOwn(jsonModel, opts.family) && opts.family !== 'wordpiece') {
    usage('--family must be wordpiece, byte_level_bpe or unigram');
  }
  if (!opts.tokenizer || !opts.texts) usage('--tokenizer PATH and --texts FILE are required');
  if (!Number.isInteger(opts.repeats) || opts.repeats < 1) usage('--repeats must be a positive integer');
  return opts;
}

function usage(problem) {
  console.error(`tokenizer_speed.cjs: ${problem}\nusage: tokenizer_speed.cjs ` +
                '--family wordpiece|byte_level_bpe|unigram --tokenizer PATH --texts FILE [--repeats N]');
  process.exit(2);
}

function loadTokenizer(family, file) {
  if (Object.hasOwn(jsonModel, family)) {
    let type;
    try {
      type = JSON.parse(fs.readFileSync(file, 'utf8')).model.type;
    } catch (e) {
      usage(`--tokenizer ${file}: not a readable tokenizer.json (${e.message})`);
    }
    if (type !== jsonModel[family]) usage(`--tokenizer ${file}: model.type is ${type}, not ${jsonModel[family]}`);
    return require('tokenizers').Tokenizer.fromFile(file);
  }
  const { loadVocab, bertTokenizer } = require('../scripts/bert_tokenizer_json.cjs');
  const vocab = fs.statSync(file).isDirectory() ? path.join(file, 'vocab.txt') : file;
  return bertTokenizer(loadVocab(vocab));
}

function readTexts(file) {
  const texts = fs.readFileSync(file, 'utf8').split('\n').filter(t => t !== '');
  if (texts.length === 0) usage(`--texts ${file}: no texts (every line is empty)`);
  return texts;
}

// One pass: every text encoded in one batch; its seconds and tokens.
async function pass(tokenizer, texts) {
  const start = process.hrtime.bigint();
  const encodings = await tokenizer.encodeBatch(texts, { addSpecialTokens: false });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { seconds, tokens: encodings.reduce((sum, e) => sum + e.getLength(), 0) };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const tokenizer = loadTokenizer(opts.family, opts.tokenizer);
  const texts = readTexts(opts.texts);
  const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t, 'utf8'), 0);
  let seconds = Infinity, tokens = 0;
  for (let r = 0; r < opts.repeats; ++r) {
    const p = await pass(tokenizer, texts);
    seconds = Math.min(seconds, p.seconds);
    tokens = p.tokens;
  }
  const mb = bytes / 1e6;
  console.log(`huggingface ${opts.family}: ${texts.length} texts, ${mb.toFixed(3)} MB, ${tokens} tokens; best of ` +
                `${opts.repeats}: ${seconds.toFixed(4)} s, ${(mb / seconds).toFixed(2)} MB/s, ` +
                `${(tokens / seconds).toFixed(0)} tokens/s`);
  console.log(JSON.stringify({ family: opts.family, side: 'huggingface', texts: texts.length, bytes, tokens,
                               repeats: opts.repeats, seconds, mb_s: mb / seconds, tokens_per_s: tokens / seconds }));
}

main().catch(e => { console.error(`tokenizer_speed.cjs: ${e.stack || e}`); process.exit(1); });
