# Sourced by the test scripts that train on the demo data (fault_test.sh, memory_test.sh, signal_test.sh,
# run_qa_test.sh, run_ner_test.sh); they define WORK (holding demo/, made by cputrain-make-demo-data) and fail()
# before calling it.
# make_model DIR JSON: the demo model with config.json changed by the JSON object JSON, in directory DIR.
make_model() {
  mkdir -p "$1" && cp "$WORK/demo/model/"* "$1/" || fail "no demo model"
  python3 - "$1/config.json" "$2" <<'PY' || fail "cannot write $1/config.json"
import json, sys
c = json.load(open(sys.argv[1]))
c.update(json.loads(sys.argv[2]))
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
}

# tiny_roberta DIR ARCHITECTURE: a tiny RoBERTa (2 layers, hidden 64) over the byte-level cut's tokenizer.json
# (tests/text/data/gpt2_cut: add_prefix_space false, as roberta-base's), config.json naming ARCHITECTURE.
tiny_roberta() {
  mkdir -p "$1" && cp "$(dirname "${BASH_SOURCE[0]}")/../text/data/gpt2_cut/tokenizer.json" "$1/" ||
    fail "no byte-level cut"
  cat > "$1/config.json" <<JSON
{"architectures": ["$2"], "model_type": "roberta", "vocab_size": 3261, "hidden_size": 64,
 "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128, "max_position_embeddings": 3386,
 "type_vocab_size": 1, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "layer_norm_eps": 1e-5,
 "initializer_range": 0.02, "pad_token_id": 3257, "hidden_act": "gelu"}
JSON
}
