#!/usr/bin/env node
// Makes tests/text/data/truncation_reference.jsonl: truncation (longest_first, only_first, only_second; right and
// left; stride 0, no overflowing windows) and padding (to a fixed length or to the longest of the batch,
// pad_to_multiple_of, right and left) with attention masks, as Hugging Face's own tokenizer (the Rust `tokenizers`
// library through its npm package) makes them, for three tokenizers: bert-base-uncased (the tokenizer.json for the
// given vocab.txt, scripts/bert_tokenizer_json.cjs; "[CLS] A [SEP] B [SEP]", pad [PAD]=0), the byte-level cut
// (tests/text/data/gpt2_cut/tokenizer.json; RoBERTa's "<s> A </s></s> B </s>", pad <pad>) and the Unigram cut
// (tests/text/data/xlmr_cut/tokenizer.json; "<s> A </s></s> B </s>" by template, pad <pad>=1).
//
//   npm install --prefix /tmp/tokref tokenizers@0.23.2
//   NODE_PATH=/tmp/tokref/node_modules node scripts/make_truncation_reference.cjs \
//       /work/shared/data/bert-base-uncased/vocab.txt /work/shared/data/squad/sample.json
//
// Each line is one batch (a single input is a batch of one):
//   {"tokenizer": "bert-base-uncased" | "gpt2_cut" | "xlmr_cut",
//    "inputs": [[first, second or null], ...], "add_special_tokens": bool,
//    "truncation": null | {"max_length", "strategy": "longest_first"|"only_first"|"only_second",
//                          "direction": "right"|"left"},
//    "padding": null | {"length": n or null (null: the longest of the batch), "pad_to_multiple_of": n or null,
//                       "direction": "right"|"left"},
//    "outputs": [{"ids", "type_ids", "offsets", "special", "attention_mask", "word_ids", "sequence_ids"}, ...]
//      (offsets in code points; a missing word or sequence id is -1; pad tokens have pad type id 0)
//    or "error": the binding's message where it refuses the batch}
//
// How the binding is driven, and what of it the data shows:
// - The binding spells the strategies "LongestFirst", "OnlyFirst", "OnlySecond" (snake case is refused) and the
//   directions "right" / "left" (lower case only, for truncation and padding alike).
// - Its encodeBatch takes strings only (a [first, second] pair is refused), so a batch holding a pair is encoded one
//   input at a time with encode(): once without padding to find the longest, then again with padding fixed at that
//   length. That is what the library's own pad_encodings does for "longest" (its rounding up to pad_to_multiple_of
//   included, which applies to a fixed length too); batches of single texts go through encodeBatch, and the script
//   checks that both ways agree on them.
// - tokenizers 0.23.1+ tokenizes each sequence of a truncating encode only up to max_length tokens
//   (huggingface/tokenizers #1990, #2091): whole pre-tokens from the start (truncating to the right) or from the end
//   (to the left) until the sequence holds max_length tokens or more (always at least one pre-token; max_length is
//   the setting itself, not less the special tokens). The kept tokens and their offsets are the same as from the
//   whole text, but three things show it:
//   * truncating to the left, word ids count from the first pre-token of that window, not of the text: "a b c ...
//     (30 words)" cut to its last 5 tokens at max_length 14 has word ids 9..13 (the window is the last 14 words),
//     where the whole text numbers them 25..29; to the right they are those of the whole text;
//   * longest_first with both sequences cut and an odd room gives the extra token to the longer sequence (the
//     second on a tie) as measured on those shortened sequences: "a b c ... (30 words)" / "a b ... (14 words)" at
//     max_length 14 with BERT's specials keeps 5 + 6 tokens, where the whole texts' lengths would give 6 + 5;
//   * max_length below the special tokens' count: max_length - specials wraps in unsigned arithmetic, so nothing is
//     cut after the early stop, and each sequence keeps just the pre-tokens it was tokenized to (e.g. BERT, a
//     single text at max_length 0 or 1: "[CLS] <all tokens of its first word (last, to the left)> [SEP]", at 2:
//     "[CLS] [SEP]"; a pair at 2: the leading (trailing) words of each sequence up to 2 tokens or more, at 3:
//     "[CLS] [SEP] [SEP]"). Errors (only_first / only_second) come out as on the whole texts.
'use strict';
const fs = require('fs');
const path = require('path');
const assert = require('assert');
const tk = require('tokenizers');
const { nastyTexts } = require('./nasty_texts.cjs');
const { squadTexts } = require('./tokenizer_reference_common.cjs');
const { loadVocab, bertTokenizer } = require('./bert_tokenizer_json.cjs');

const [vocabFile, ...squadFiles] = process.argv.slice(2);
if (!vocabFile || squadFiles.length === 0) {
  console.error('usage: make_truncation_reference.cjs vocab.txt squad.json...');
  process.exit(2);
}
const root = path.resolve(__dirname, '..');

const STRATEGY = { longest_first: 'LongestFirst', only_first: 'OnlyFirst', only_second: 'OnlySecond' };
const orMinusOne = v => (v === null || v === undefined ? -1 : v);

function output(e) {
  return {
    ids: e.getIds(), type_ids: e.getTypeIds(), offsets: e.getOffsets(), special: e.getSpecialTokensMask(),
    attention_mask: e.getAttentionMask(), word_ids: e.getWordIds().map(orMinusOne),
    sequence_ids: e.getSequenceIds().map(orMinusOne),
  };
}

function configure(tok, truncation, padding, fixedLength) {
  tok.tokenizer.disableTruncation();
  tok.tokenizer.disablePadding();
  if (truncation) {
    tok.tokenizer.setTruncation(truncation.max_length, {
      strategy: STRATEGY[truncation.strategy], direction: truncation.direction, stride: 0,
    });
  }
  if (padding) {
    const options = { direction: padding.direction, padId: tok.padId, padTypeId: 0, padToken: tok.padToken };
    const length = fixedLength !== undefined ? fixedLength : padding.length;
    if (length !== null) options.maxLength = length;
    if (padding.pad_to_multiple_of !== null) options.padToMultipleOf = padding.pad_to_multiple_of;
    tok.tokenizer.setPadding(options);
  }
}

// One input at a time with encode(); padding to the longest as pad_encodings does it (see the header).
async function encodeOneByOne(tok, c) {
  const encodeAll = async () => {
    const out = [];
    for (const [a, b] of c.inputs) out.push(await tok.tokenizer.encode(a, b, { addSpecialTokens: c.add_special_tokens }));
    return out;
  };
  let fixed;
  if (c.padding && c.padding.length === null) {
    configure(tok, c.truncation, null);
    fixed = Math.max(...(await encodeAll()).map(e => e.getLength()));
  }
  configure(tok, c.truncation, c.padding, fixed);
  return encodeAll();
}

async function run(tok, c) {
  const record = { tokenizer: tok.name, inputs: c.inputs, add_special_tokens: c.add_special_tokens,
                   truncation: c.truncation, padding: c.padding };
  const singles = c.inputs.every(([, b]) => b === null);
  try {
    let encodings;
    if (singles) {
      configure(tok, c.truncation, c.padding);
      encodings = await tok.tokenizer.encodeBatch(c.inputs.map(([a]) => a), { addSpecialTokens: c.add_special_tokens });
      const check = await encodeOneByOne(tok, c);
      assert.deepStrictEqual(check.map(output), encodings.map(output), 'encodeBatch and encode() disagree');
    } else {
      encodings = await encodeOneByOne(tok, c);
    }
    record.outputs = encodings.map(output);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    record.error = e.message;
  }
  return record;
}

// --- texts -----------------------------------------------------------------------------------------------------
const squad = squadTexts(squadFiles);
const contexts = squad.filter(t => t.length > 300);
const questions = squad.filter(t => t.length <= 300);
// The contexts, shortest first, each cut at 360 code points (about 70 tokens) to keep the file small: the pairs
// are still cut at 64 tokens and not at 128.
const ctx = [...contexts].sort((x, y) => x.length - y.length || (x < y ? -1 : 1))
  .map(t => Array.from(t).slice(0, 360).join(''));
const q = questions;
const longQuestion = [...questions].sort((x, y) => y.length - x.length)[0];
// The contexts joined, cut at 2800 code points: 533 tokens and more, cut at 512.
const longText = Array.from(contexts.join(' ')).slice(0, 2800).join('');
const nasty = nastyTexts.filter(t => t.trim() !== '');

// --- cases -----------------------------------------------------------------------------------------------------
const T = (max_length, strategy, direction) => ({ max_length, strategy, direction });
const P = (length, pad_to_multiple_of, direction) => ({ length, pad_to_multiple_of, direction });
const DIRS = ['right', 'left'];

// `count(text)`: its token count without special tokens, for the cases cut at exact boundaries; `nAddedPair`: the
// special tokens a pair gets (3 for BERT, 4 for the other two).
function cases(count, nAddedPair) {
  const out = [];
  const add = (inputs, truncation, padding = null, add_special_tokens = true) =>
    out.push({ inputs: inputs.map(([a, b = null]) => [a, b]), add_special_tokens, truncation, padding });

  // Single texts, longest_first, both directions, with and without the special tokens.
  const singleTexts = [ctx[0], q[0], nasty[0], ctx[1], nasty[2], longQuestion, nasty[6], ctx[2], nasty[9], q[7],
                       nasty[15], ctx[3], nasty[1], nasty[16], nasty[4], nasty[11]];
  let k = 0;
  for (const max of [8, 16, 33, 64]) {
    for (const dir of DIRS) {
      for (const special of [true, false]) add([[singleTexts[k++ % singleTexts.length]]], T(max, 'longest_first', dir), null, special);
    }
  }
  for (const dir of DIRS) add([[longText]], T(512, 'longest_first', dir));
  add([[ctx[0]]], T(512, 'longest_first', 'left'), null, false);  // nothing cut
  add([[q[1]]], T(64, 'longest_first', 'right'));  // nothing cut
  add([[q[2]]], T(8, 'only_first', 'right'));      // only_first on a single text cuts it
  for (const dir of DIRS) add([[ctx[0]]], T(16, 'only_second', dir));  // error: no second sequence
  add([[q[3]]], T(32, 'only_second', 'right'));    // no error: nothing to cut

  // Pairs, longest_first: only the longer cut, both cut (odd and even room), nothing cut.
  for (const max of [10, 17, 32, 33, 64, 128]) {
    for (const dir of DIRS) {
      add([[q[4], ctx[0]]], T(max, 'longest_first', dir));
      add([[ctx[1], q[5]]], T(max, 'longest_first', dir));
    }
  }
  for (const dir of DIRS) add([[ctx[0], ctx[2]]], T(dir === 'right' ? 64 : 33, 'longest_first', dir));
  for (const dir of DIRS) add([[nasty[0], nasty[1]]], T(17, 'longest_first', dir));
  add([[q[6], q[8]]], T(128, 'longest_first', 'right'));
  // Both cut with an odd room: which gets the extra token follows the lengths as tokenized up to max_length (see
  // the header): with a room of 11, a first of 30 one-token words against a second of max_length words ties at
  // max_length and the second gets it; against 12 words the first gets it.
  const letters = n => Array.from({ length: n }, (_, i) => 'abcdefghijklmnopqrstuvwxyz'[i % 26]).join(' ');
  const oddMax = 11 + nAddedPair;
  for (const dir of DIRS) add([[letters(30), letters(oddMax)]], T(oddMax, 'longest_first', dir));
  add([[letters(30), letters(12)]], T(oddMax, 'longest_first', 'right'));
  for (const dir of DIRS) add([[q[4], ctx[0]]], T(17, 'longest_first', dir), null, false);
  add([[ctx[0], q[9]]], T(32, 'longest_first', 'left'), null, false);

  // only_first / only_second: the target long enough, and too short (error).
  for (const dir of DIRS) {
    for (const max of [32, 128]) add([[q[4], ctx[0]]], T(max, 'only_second', dir));
    add([[longQuestion, ctx[1]]], T(10, 'only_second', dir));  // error
    add([[ctx[0], q[5]]], T(64, 'only_first', dir));
    add([[q[5], ctx[0]]], T(32, 'only_first', dir));           // error
  }
  add([[q[4], ctx[0]]], T(20, 'only_second', 'right'), null, false);
  add([[ctx[1], q[9]]], T(20, 'only_first', 'left'), null, false);
  // At the boundary: the target cut to nothing is refused, to one token accepted.
  const firstLen = count(q[10]);
  for (const extra of [0, 1]) {
    for (const dir of DIRS) add([[q[10], ctx[2]]], T(firstLen + nAddedPair + extra, 'only_second', dir));
  }
  const secondLen = count(q[11]);
  for (const extra of [0, 1]) add([[ctx[2], q[11]]], T(secondLen + nAddedPair + extra, 'only_first', 'right'));

  // max_length at or below the special tokens' count.
  for (const dir of DIRS) {
    for (const max of [2, 3]) add([[q[12], q[13]]], T(max, 'longest_first', dir));
    for (const max of [0, 1, 2]) add([[q[12]]], T(max, 'longest_first', dir));
  }
  add([[q[12], q[13]]], T(2, 'only_second', 'right'));
  // Below the specials, whole pre-tokens are kept: a first (last) word of many tokens stays whole.
  for (const dir of DIRS) {
    add([[nasty[7]]], T(1, 'longest_first', dir));
    add([[nasty[7], q[13]]], T(2, 'longest_first', dir));
  }
  add([[q[12]]], T(1, 'longest_first', 'right'), null, false);
  add([[nasty[7]]], T(0, 'longest_first', 'right'), null, false);

  // Padding.
  const batch = [[q[0]], [nasty[3]], [''], [longQuestion], [q[13]]];
  const shortBatch = [[q[0]], [q[1]], ['hello'], ['Crème brûlée à la française']];
  for (const dir of DIRS) {
    add(batch, null, P(null, null, dir));
    add(shortBatch, null, P(32, null, dir));          // longer than all
    add(batch, null, P(16, null, dir));               // shorter than some: padding never cuts
    add(shortBatch, null, P(null, 8, dir));
  }
  add(shortBatch, null, P(13, 8, 'right'));           // a fixed length rounded up to the multiple
  add(shortBatch, null, P(null, null, 'right'), false);
  add([[q[0]]], null, P(null, 8, 'left'));            // a batch of one
  // Truncation and padding together; batches with pairs (and pairs mixed with single texts).
  add(batch, T(16, 'longest_first', 'right'), P(20, null, 'left'));
  add(batch, T(16, 'longest_first', 'left'), P(null, 8, 'right'));
  const pairs = [[q[0], ctx[0]], [q[1], 'a short second'], [nasty[0], nasty[1]], [q[2], '']];
  add(pairs, T(40, 'longest_first', 'right'), P(null, 8, 'left'));
  add(pairs, T(40, 'longest_first', 'left'), P(null, null, 'right'));
  add(pairs, T(24, 'only_second', 'right'), P(32, null, 'right'));  // one input that cannot be cut fails the batch
  add([[q[3], ctx[2]], [q[4]], [nasty[2], q[5]]], T(30, 'longest_first', 'right'), P(null, 8, 'right'));
  // only_second with a single text that needs no cut: no error.
  add([[q[3], ctx[2]], [q[4]]], T(30, 'only_second', 'right'), P(null, null, 'right'));
  add([[q[0], q[1]], [q[2], 'a short second'], [nasty[15], q[8]], ['', q[3]]], null, P(null, null, 'left'), false);

  // Empty text.
  add([['']], null);
  add([['']], null, null, false);
  add([['']], T(2, 'longest_first', 'right'));
  add([['', q[6]]], T(8, 'longest_first', 'right'));
  add([[q[6], '']], T(8, 'longest_first', 'left'));
  add([['', '']], T(8, 'longest_first', 'right'));
  add([['', ctx[0]]], T(16, 'only_first', 'right'));   // error: nothing to cut in the first
  add([['', ctx[0]]], T(16, 'only_second', 'left'));
  add([['']], null, P(4, null, 'left'));
  add([['', '']], null, P(null, 4, 'right'));
  return out;
}

async function main() {
  const bert = bertTokenizer(loadVocab(vocabFile));
  const cut = tk.Tokenizer.fromFile(path.join(root, 'tests/text/data/gpt2_cut/tokenizer.json'));
  const xlmr = tk.Tokenizer.fromFile(path.join(root, 'tests/text/data/xlmr_cut/tokenizer.json'));
  const toks = [
    { name: 'bert-base-uncased', tokenizer: bert, padId: bert.tokenToId('[PAD]'), padToken: '[PAD]', nAddedPair: 3 },
    { name: 'gpt2_cut', tokenizer: cut, padId: cut.tokenToId('<pad>'), padToken: '<pad>', nAddedPair: 4 },
    { name: 'xlmr_cut', tokenizer: xlmr, padId: xlmr.tokenToId('<pad>'), padToken: '<pad>', nAddedPair: 4 },
  ];
  assert.strictEqual(toks[0].padId, 0);
  assert.strictEqual(toks[2].padId, 1);
  const records = [];
  const summary = [];
  for (const tok of toks) {
    const lengths = new Map();
    for (const text of new Set([...q, ...ctx])) {
      configure(tok, null, null);
      lengths.set(text, (await tok.tokenizer.encode(text, null, { addSpecialTokens: false })).getLength());
    }
    let errors = 0;
    const list = cases(text => lengths.get(text), tok.nAddedPair);
    for (const c of list) {
      const r = await run(tok, c);
      if (r.error !== undefined) ++errors;
      records.push(JSON.stringify(r));
    }
    summary.push(`${tok.name} ${list.length} (${errors} errors)`);
  }
  const file = path.join(root, 'tests/text/data/truncation_reference.jsonl');
  fs.writeFileSync(file, records.join('\n') + '\n');
  console.error(`wrote ${file}: ${records.length} batches: ${summary.join(', ')}`);
}

main().catch(e => { console.error(e); process.exit(1); });
