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

// FNV-1a (32 bits), fed byte by byte (tests/support/token_hash.hpp).
function fnvByte(h, b) { return Math.imul(h ^ (b & 0xff), 16777619) >>> 0; }
const fnvBasis = 0x811c9dc5;

// Over each token's id, begin and end as little-endian 32-bit words.
function fnv(ids, offsets) {
  let h = fnvBasis;
  const word = v => { for (let i = 0; i < 4; ++i) h = fnvByte(h, v >>> (8 * i)); };
  for (let i = 0; i < ids.length; ++i) { word(ids[i]); word(offsets[i][0]); word(offsets[i][1]); }
  return h;
}

// Over the bytes of a Buffer (a text's UTF-8).
function fnvBytes(bytes) {
  let h = fnvBasis;
  for (const b of bytes) h = fnvByte(h, b);
  return h;
}

module.exports = { squadTexts, fnv, fnvBytes };
