// What the tokenizer reference scripts share (scripts/make_tokenizer_reference.cjs for WordPiece,
// scripts/make_byte_level_reference.cjs for byte-level BPE): the texts of SQuAD files and the sweep's hash.
'use strict';
const fs = require('fs');

// Every context and question (leading spaces trimmed, as run_qa.py trims them) of SQuAD files in the official nested
// format or flat records, each once.
function squadTexts(files) {
  const texts = [];
  for (const file of files) {
    for (const record of JSON.parse(fs.readFileSync(file, 'utf8')).data) {
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

// FNV-1a (32 bits) over each token's id, begin and end as little-endian 32-bit words (tests/support/token_hash.hpp).
function fnv(ids, offsets) {
  let h = 0x811c9dc5;
  const word = v => { for (let i = 0; i < 4; ++i) { h ^= (v >>> (8 * i)) & 0xff; h = Math.imul(h, 16777619) >>> 0; } };
  for (let i = 0; i < ids.length; ++i) { word(ids[i]); word(offsets[i][0]); word(offsets[i][1]); }
  return h >>> 0;
}

module.exports = { squadTexts, fnv };
