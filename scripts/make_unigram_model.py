#!/usr/bin/python3
"""Trains the small SentencePiece Unigram model of the XLM-RoBERTa tokenizer tests and writes it as Hugging Face
checkpoints do.

The model: the sentencepiece library's Unigram trainer (vocab_size 2000, normalization nmt_nfkc as XLM-R's,
character_coverage 0.9995, one thread, fixed seed, every input line, so the same inputs give the same model) on
the contexts and questions of the SQuAD files given, the words of the WordPiece vocab.txt given, the nasty texts of
scripts/nasty_texts.cjs (read through node) and a few German, French, Russian, Chinese and Arabic lines, so that the
model has non-English pieces. It writes

  tests/text/data/xlmr_cut/sentencepiece.bpe.model  the trained model (XLM-R's legacy file name, though Unigram)
  tests/text/data/xlmr_cut/tokenizer.json           as transformers' XLMRobertaConverter writes it: fairseq's layout
                                                    <s> <pad> </s> <unk>, the pieces after spm's first three,
                                                    <mask> last (HF id = spm id + 1); Precompiled + Strip(right) +
                                                    Replace(" {2,}", "▁"); Metaspace(prepend_scheme always, split)
  tests/text/data/xlmr_cut/tokenizer_config.json    XLMRobertaTokenizer's settings
  tests/text/data/xlmr_cut/config.json              the model config's tokenizer-related fields
  tests/text/data/xlmr_cut_hub/tokenizer.json       the same model in the older form most Hub XLM-R checkpoints
                                                    ship: normalizer only Precompiled, Metaspace add_prefix_space

Needs Debian's python3-sentencepiece (0.1.97) and node on the PATH:

  /usr/bin/python3 scripts/make_unigram_model.py /work/shared/data/squad/sample.json \
      /work/shared/data/squad/dev-v2.0.json /work/shared/data/bert-base-uncased/vocab.txt
"""
import base64
import io
import json
import os
import subprocess
import sys

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUT_DIR = os.path.join(ROOT, 'tests/text/data/xlmr_cut')
HUB_DIR = os.path.join(ROOT, 'tests/text/data/xlmr_cut_hub')

MULTILINGUAL = [
    'Die Donau ist nach der Wolga der zweitlängste Fluss Europas und fließt durch zehn Länder.',
    'Der schnelle braune Fuchs springt über den faulen Hund, während die Straßenbahn hält.',
    'Größere Städte wie München, Köln und Düsseldorf liegen am Rhein oder an der Isar.',
    'La Seine traverse Paris avant de se jeter dans la Manche près du Havre.',
    "L'été dernier, nous avons visité les châteaux de la Loire et goûté des crêpes à Nantes.",
    'Où est la bibliothèque ? Elle se trouve à côté de la gare, derrière l’église.',
    'Москва — столица России и крупнейший по численности населения город страны.',
    'Река Волга впадает в Каспийское море, а Нева течёт через Санкт-Петербург.',
    'Мы читали книги Толстого и Достоевского в школе каждый год.',
    '北京是中华人民共和国的首都，也是全国的政治和文化中心。',
    '长江是中国最长的河流，流经上海并注入东海。',
    '我们明天去图书馆学习，然后在公园散步。',
    'القاهرة هي عاصمة مصر وأكبر مدنها، ويمر بها نهر النيل.',
    'اللغة العربية من أكثر اللغات انتشارا في العالم.',
    'ذهب الطلاب إلى المكتبة لقراءة الكتب الجديدة.',
]


def nasty_texts():
    script = ("process.stdout.write(JSON.stringify(require(process.argv[1]).nastyTexts))")
    out = subprocess.run(['node', '-e', script, os.path.join(ROOT, 'scripts/nasty_texts.cjs')],
                         check=True, capture_output=True)
    return json.loads(out.stdout.decode('utf-8'))


def squad_lines(files):
    lines = []
    for file in files:
        with open(file, encoding='utf-8') as f:
            for record in json.load(f)['data']:
                for p in record.get('paragraphs', [record]):
                    lines.append(p['context'])
                    for qa in p.get('qas', [{'question': p.get('question', '')}]):
                        lines.append(qa['question'].strip())
    return lines


# The words of a WordPiece vocab.txt (bert-base-uncased's): a wide alphabet and many English words, which the
# small SQuAD files alone do not give 2000 pieces.
def vocab_words(files):
    words = []
    for file in files:
        with open(file, encoding='utf-8') as f:
            for line in f:
                word = line.rstrip('\n').removeprefix('##')
                if word and not (word.startswith('[') and word.endswith(']')):
                    words.append(word)
    return words


def training_lines(files):
    squad = [f for f in files if f.endswith('.json')]
    vocab = [f for f in files if f.endswith('.txt')]
    lines = []
    for text in squad_lines(squad) + vocab_words(vocab) + nasty_texts() + MULTILINGUAL * 20:
        # one sentence a line; the trainer reads C strings, so no NUL
        lines += [l for l in text.replace('\0', '').replace('\r', '\n').split('\n') if l.strip()]
    return lines


def train(files):
    model = io.BytesIO()
    spm.set_random_generator_seed(17)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(training_lines(files)), model_writer=model,
        model_type='unigram', vocab_size=2000, normalization_rule_name='nmt_nfkc', character_coverage=0.9995,
        num_threads=1, input_sentence_size=0, shuffle_input_sentence=False,
        max_sentence_length=100000, minloglevel=2)
    return model.getvalue()


def added(id_, content, lstrip=False):
    return {'id': id_, 'content': content, 'single_word': False, 'lstrip': lstrip, 'rstrip': False,
            'normalized': False, 'special': True}


def template():
    special = lambda t: {'SpecialToken': {'id': t, 'type_id': 0}}
    seq = lambda s: {'Sequence': {'id': s, 'type_id': 0}}
    return {
        'type': 'TemplateProcessing',
        'single': [special('<s>'), seq('A'), special('</s>')],
        'pair': [special('<s>'), seq('A'), special('</s>'), special('</s>'), seq('B'), special('</s>')],
        'special_tokens': {
            '</s>': {'id': '</s>', 'ids': [2], 'tokens': ['</s>']},
            '<s>': {'id': '<s>', 'ids': [0], 'tokens': ['<s>']},
        },
    }


def tokenizer_json(proto, hub):
    vocab = [['<s>', 0.0], ['<pad>', 0.0], ['</s>', 0.0], ['<unk>', 0.0]]
    vocab += [[p.piece, p.score] for p in proto.pieces[3:]]
    vocab += [['<mask>', 0.0]]
    precompiled = {'type': 'Precompiled',
                   'precompiled_charsmap': base64.b64encode(proto.normalizer_spec.precompiled_charsmap).decode()}
    if hub:
        normalizer = precompiled
        metaspace = {'type': 'Metaspace', 'replacement': '▁', 'add_prefix_space': True}
    else:
        normalizer = {'type': 'Sequence', 'normalizers': [
            precompiled,
            {'type': 'Strip', 'strip_left': False, 'strip_right': True},
            {'type': 'Replace', 'pattern': {'Regex': ' {2,}'}, 'content': '▁'},
        ]}
        metaspace = {'type': 'Metaspace', 'replacement': '▁', 'prepend_scheme': 'always', 'split': True}
    return {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [added(0, '<s>'), added(1, '<pad>'), added(2, '</s>'), added(3, '<unk>'),
                         added(len(vocab) - 1, '<mask>', lstrip=True)],
        'normalizer': normalizer,
        'pre_tokenizer': metaspace,
        'post_processor': template(),
        'decoder': metaspace,
        'model': {'type': 'Unigram', 'unk_id': 3, 'vocab': vocab, 'byte_fallback': False},
    }


def write(path, obj, compact=True):
    with open(path, 'w', encoding='utf-8') as f:
        f.write(json.dumps(obj, ensure_ascii=False, separators=(',', ':') if compact else None,
                           indent=None if compact else 2) + '\n')
    print(f'wrote {path}: {os.path.getsize(path)} bytes', file=sys.stderr)


def token(content, lstrip=False):
    return {'content': content, 'lstrip': lstrip, 'normalized': False, 'rstrip': False, 'single_word': False,
            'special': True}


def main():
    files = sys.argv[1:]
    if not files:
        sys.exit('usage: make_unigram_model.py squad.json... vocab.txt')
    model = train(files)
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model)
    assert [p.piece for p in proto.pieces[:3]] == ['<unk>', '<s>', '</s>'], 'spm layout is not <unk> <s> </s>'
    os.makedirs(CUT_DIR, exist_ok=True)
    os.makedirs(HUB_DIR, exist_ok=True)
    with open(os.path.join(CUT_DIR, 'sentencepiece.bpe.model'), 'wb') as f:
        f.write(model)
    cut = tokenizer_json(proto, hub=False)
    write(os.path.join(CUT_DIR, 'tokenizer.json'), cut)
    write(os.path.join(HUB_DIR, 'tokenizer.json'), tokenizer_json(proto, hub=True))
    write(os.path.join(CUT_DIR, 'tokenizer_config.json'), {
        'tokenizer_class': 'XLMRobertaTokenizer', 'model_max_length': 512,
        'bos_token': '<s>', 'eos_token': '</s>', 'sep_token': '</s>', 'cls_token': '<s>', 'unk_token': '<unk>',
        'pad_token': '<pad>', 'mask_token': token('<mask>', lstrip=True),
    }, compact=False)
    write(os.path.join(CUT_DIR, 'config.json'), {
        'model_type': 'xlm-roberta', 'vocab_size': len(cut['model']['vocab']), 'pad_token_id': 1,
        'bos_token_id': 0, 'eos_token_id': 2, 'max_position_embeddings': 514, 'type_vocab_size': 1,
    }, compact=False)


if __name__ == '__main__':
    main()
