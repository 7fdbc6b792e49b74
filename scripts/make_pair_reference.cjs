#!/usr/bin/env node
// Makes tests/text/data/pair_reference.jsonl: pairs of texts (and single texts) encoded with the special tokens by
// Hugging Face's own tokenizer (the Rust `tokenizers` library through its npm package), for the two post-processor
// layouts cputrain implements: BERT's "[CLS] A [SEP] B [SEP]" (bert-base-uncased's tokenizer.json for the given
// vocab.txt, scripts/bert_tokenizer_json.cjs) and RoBERTa's "<s> A </s></s> B </s>" (the committed byte-level cut,
// tests/text/data/gpt2_cut/tokenizer.json). Each record: which tokenizer, the texts, and the encoding's ids, type
// ids, offsets, special-tokens mask, sequence ids and word ids.
//
//   npm install --prefix /tmp/tokref tokenizers@0.23.2
//   NODE_PATH=/tmp/tokref/node_modules node scripts/make_pair_reference.cjs vocab.txt squad.json...
'use strict';
const fs = require('fs');
const path = require('path');
const tk = require('tokenizers');
const { nastyTexts } = require('./nasty_texts.cjs');
const { loadVocab, bertTokenizerJson } = require('./bert_tokenizer_json.cjs');

const [vocabFile, ...squadFiles] = process.argv.slice(2);
if (!vocabFile || squadFiles.length === 0) {
  console.error('usage: make_pair_reference.cjs vocab.txt squad.json...');
  process.exit(2);
}
const root = path.resolve(__dirname, '..');

// (question, start of its context) from the SQuAD files: contexts cut at 240 code points keep the file small while
// still crossing sentence and word boundaries.
function squadPairs(files, count) {
  const pairs = [];
  for (const file of files) {
    for (const record of JSON.parse(fs.readFileSync(file, 'utf8')).data) {
      const items = record.paragraphs
        ? record.paragraphs.flatMap(p => p.qas.slice(0, 1).map(qa => [qa.question.trimStart(), p.context]))
        : [[record.question.trimStart(), record.context]];
      for (const [q, c] of items) {
        if (pairs.length < count) pairs.push([q, Array.from(c).slice(0, 240).join('')]);
      }
    }
  }
  return pairs;
}

function cases() {
  const out = squadPairs(squadFiles, 12).map(([a, b]) => ({ a, b }));
  for (let i = 0; i + 1 < nastyTexts.length; i += 2) out.push({ a: nastyTexts[i], b: nastyTexts[i + 1] });
  out.push({ a: '', b: '' }, { a: 'only a first text', b: null }, { a: '', b: null }, { a: 'x', b: ' y ' });
  return out;
}

async function encodeAll(name, tokenizer) {
  const records = [];
  for (const { a, b } of cases()) {
    const e = await tokenizer.encode(a, b, { addSpecialTokens: true });
    records.push(JSON.stringify({
      tokenizer: name, a, b, ids: e.getIds(), type_ids: e.getTypeIds(), offsets: e.getOffsets(),
      special: e.getSpecialTokensMask(),
      sequence_ids: e.getSequenceIds().map(s => (s === null || s === undefined ? -1 : s)),
      word_ids: e.getWordIds().map(w => (w === null || w === undefined ? -1 : w)),
    }));
  }
  return records;
}

async function main() {
  const bert = tk.Tokenizer.fromString(JSON.stringify(bertTokenizerJson(loadVocab(vocabFile))));
  const cut = tk.Tokenizer.fromFile(path.join(root, 'tests/text/data/gpt2_cut/tokenizer.json'));
  const records = [...(await encodeAll('bert', bert)), ...(await encodeAll('roberta_cut', cut))];
  const file = path.join(root, 'tests/text/data/pair_reference.jsonl');
  fs.writeFileSync(file, records.join('\n') + '\n');
  console.error(`wrote ${file}: ${records.length} encodings`);
}

main().catch(e => { console.error(e); process.exit(1); });
