#!/bin/sh
# check_prebuilt_models.sh ARCHIVE OBJECT... — the models of nn/prebuilt_models.hpp and the trainers of
# train/prebuilt_trainers.hpp are compiled once: ARCHIVE (the cputrain_instances library) defines the constructor,
# forward and backward of every model and the constructor, train and predict_logits of every trainer, and no
# OBJECT (a program's own files, compiled with CPUTRAIN_PREBUILT_MODELS) defines any of them. Exit 0 when both hold,
# 1 naming each symbol that is missing or compiled again.
set -u
archive=$1
shift
for f in "$archive" "$@"; do
  [ -s "$f" ] || { echo "check_prebuilt_models: no file $f" >&2; exit 1; }
done
# Defined code (text and weak symbols), demangled, of each file once.
symbols=$(mktemp -d)
trap 'rm -rf "$symbols"' EXIT
defined() { nm -C --defined-only "$1" 2>/dev/null | awk '$2 ~ /^[TtWw]$/' ; }
defined "$archive" > "$symbols/archive"
i=0
for object in "$@"; do
  i=$((i + 1))
  defined "$object" > "$symbols/object$i"
done
status=0
count=0
# check SYMBOL OBJECT...: SYMBOL (the start of a demangled name) is defined by the archive and by no OBJECT.
check() {
  symbol=$1
  shift
  count=$((count + 1))
  if ! grep -qF -- "$symbol" "$symbols/archive"; then
    echo "check_prebuilt_models: $archive does not define $symbol...)" >&2
    status=1
  fi
  i=0
  for object in "$@"; do
    i=$((i + 1))
    if grep -qF -- "$symbol" "$symbols/object$i"; then
      echo "check_prebuilt_models: $object defines $symbol...) (compiled again in the program's own file)" >&2
      status=1
    fi
  done
}
for head in qa_head sequence_classification_head token_classification_head masked_lm_head; do
  for precision in fp32 bf16_mixed; do
    for allocator in standard numa_local; do
      policies="cputrain::precision::$precision, cputrain::alloc::$allocator"
      model="cputrain::nn::encoder_model<cputrain::nn::$head, $policies>"
      for member in encoder_model forward backward; do
        check "$model::$member(" "$@"
      done
    done
  done
done
for task in qa_task classification_task token_classification_task masked_lm_task; do
  for precision in fp32 bf16_mixed; do
    for allocator in standard numa_local; do
      policy="cputrain::policy<cputrain::precision::$precision, cputrain::parallel::single, cputrain::alloc::$allocator>"
      for member in trainer train predict_logits; do
        check "cputrain::train::trainer<cputrain::train::$task, $policy >::$member(" "$@"
      done
    done
  done
done
[ "$status" -eq 0 ] &&
  echo "check_prebuilt_models: $count entry points of 16 models and 16 trainers defined by the library, none by" \
       "the $# objects"
exit "$status"
