#!/bin/sh
# check_separate_compilation.sh MAIN_OBJECT INSTANCES — the guide example linked with cputrain's compiled component:
# MAIN_OBJECT (train_qa.cpp) must define none of cputrain's heavy functions, and INSTANCES (the component's archive,
# libcputrain_instances.a) every one of them. Exit 0 when both hold, 1 naming what is wrong.
set -u
main=$1
instances=$2
status=0
for f in "$main" "$instances"; do
  [ -s "$f" ] || { echo "check_separate_compilation: no object file $f" >&2; exit 1; }
done
# Defined code (text and weak symbols), demangled.
defined() { nm -C --defined-only "$1" | awk '$2 ~ /^[TtWw]$/' ; }
for symbol in 'cputrain::nn::encoder_model<.*>::forward(' 'cputrain::nn::encoder_model<.*>::backward(' \
              'cputrain::nn::encoder_model<.*>::encoder_model(' 'cputrain::train::trainer<.*>::train(' \
              'cputrain::train::trainer<.*>::predict_logits(' 'cputrain::data::read_squad(' \
              'cputrain::data::make_qa_features(' 'cputrain::data::postprocess_qa_predictions(' \
              'cputrain::data::evaluate_squad_v2(' 'cputrain::io::read_bert_config(' \
              'cputrain::text::load_bert_tokenizer(' 'void cputrain::train::save_pretrained<'; do
  if defined "$main" | grep -q -- "$symbol"; then
    echo "check_separate_compilation: $main defines $symbol... (compiled in the program's own file)" >&2
    status=1
  fi
  if ! defined "$instances" | grep -q -- "$symbol"; then
    echo "check_separate_compilation: $instances does not define $symbol..." >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "check_separate_compilation: train_qa.cpp defines none of the 12 entry points; the component all"
exit "$status"
