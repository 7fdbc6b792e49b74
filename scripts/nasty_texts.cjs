// The nasty texts every tokenizer's conformance data includes (scripts/make_tokenizer_reference.cjs for WordPiece,
// scripts/make_byte_level_reference.cjs for byte-level BPE): text that breaks careless tokenizers.
'use strict';
// Text that breaks careless tokenizers: accents, CJK, emoji with joiners, zero-width and control characters, very
// long words, Korean, mixed scripts, special tokens written in the text, characters Unicode added after 8.0.
const nastyTexts = [
  'Crème brûlée à la française, ÅNGSTRÖM, Ærøskøbing, naïve café, Ångström, São Paulo, Zürich, Dvořák',
  '北京是中华人民共和国的首都。東京タワーは日本にあります。ひらがなカタカナ',
  'I ❤️ 🍕 and 👩‍👩‍👧‍👦 families 🏳️‍🌈 👍🏽 🇫🇷 🥲 🫠',
  'zero\u200bwidth\u200cnon\u200djoiner\ufeffbom soft\u00adhyphen word\u2060joiner',
  'tab\there\nnewline\r\ncrlf\u0007bell\u001fus\u0085nel\u000bvt\u000cff\u007fdel',
  'a\u0000b\ufffdc \ufffd \u0000',
  'a'.repeat(100) + ' ' + 'a'.repeat(101) + ' ' + 'x'.repeat(250) + ' ' + 'é'.repeat(101),
  'Donaudampfschifffahrtsgesellschaftskapitän https://example.com/path?query=1&b=2#frag user@example.org',
  '한국어 텍스트입니다. 서울특별시',
  'Москва is Moscow; Αθήνα; القاهرة; עברית; हिन्दी; ไทย; ქართული; Ελληνικά',
  '[MASK] [CLS][SEP] [PAD]x[UNK] [mask] [ MASK ] [[MASK]] [MASK x[MASK]y [SEP',
  'İstanbul ß ΣΊΣΥΦΟΣ ﬁnance ＡＢＣ１２３ Ⅻ x² ﬀ ℌ ㎏ ① ½',
  'new punctuation a\u2e53b, marks a\u0d81b, format a\u0890b, unassigned a\u0378b, private a\ue000b',
  'combining e\u0301\u0323 a\u0308\u0304 o\u0338 \u0301lone q\u0307\u0323',
  '𝐀𝐁𝐂 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛',
  'numbers 3.14159, 1,000,000 and 10^6; 2024-11-29T12:00Z',
  "don't U.S.A. e-mail C++ #hashtag @mention 'quoted' \"double\" «guillemets» „low“ (paren) {brace} <angle>",
  'a\u00a0b\u2003c\u3000d\u2028e\u2029f\u202fg\u1680h',
  '',
  '   ',
  '\u0007\u0008\u200b',
  'Hyphen‐dash–em—minus−tilde~ ellipsis… bullet• section§ pilcrow¶ interrobang‽',
  'CJK ext 𠀀𪛖𫜴𫝀𫠝𫠞𬺰𮯠 and compatibility 豈',
  'Ǆǅǆ ǈ ꞵ Ɐ ℩ ꭰ ᏸ',
];

module.exports = { nastyTexts };
