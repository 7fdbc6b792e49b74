// bert-base-uncased's tokenizer.json for a vocab.txt, as Hugging Face's `tokenizers` npm package builds it:
// BertNormalizer (clean text, Chinese characters, accents stripped, lower case), BertPreTokenizer, WordPiece (##,
// [UNK], 100 characters), the five special tokens matched on the raw text and the [CLS] A [SEP] (B [SEP]) template.
// Shared by scripts/make_tokenizer_reference.cjs and benchmarks/tokenizer_speed.cjs. `tokenizers` is required only
// when bertTokenizer() is first called, so a caller can set RAYON_NUM_THREADS before it loads.
'use strict';
const fs = require('fs');

/// vocab.txt as { token: id }, ids in line order.
function loadVocab(file) {
  const vocab = {};
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((line, i) => { vocab[line.replace(/\r$/, '')] = i; });
  return vocab;
}

/// The tokenizer.json object for `vocab` ({ token: id }).
function bertTokenizerJson(vocab) {
  const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  return {
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
}

/// A `tokenizers` Tokenizer built from bertTokenizerJson(vocab).
function bertTokenizer(vocab) {
  return require('tokenizers').Tokenizer.fromString(JSON.stringify(bertTokenizerJson(vocab)));
}

module.exports = { loadVocab, bertTokenizerJson, bertTokenizer };
