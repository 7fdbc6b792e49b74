#!/usr/bin/env bash
# The data and model directory the run_qa throughput benchmarks share: the demo's SQuAD files (400 paragraphs) and
# a base-2 model config (BERT-base's shapes with 2 layers, the 30,522-row word table, dropout 0.1) over the demo
# vocabulary, to train from scratch.
#   benchmarks/base2_demo_data.sh <build dir> <output dir>   -> <output dir>/{train.json,dev.json,model/}
set -euo pipefail
"$1/examples/cputrain-make-demo-data" --output_dir "$2" --train_paragraphs 400 > /dev/null
python3 - "$2/model/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.update(hidden_size=768, num_hidden_layers=2, num_attention_heads=12, intermediate_size=3072, vocab_size=30522,
         max_position_embeddings=512, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, initializer_range=0.02)
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
