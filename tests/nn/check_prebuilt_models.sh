#!/bin/sh
# check_prebuilt_models.sh [--mpi MPI_ARCHIVE] ARCHIVE OBJECT... — the models of nn/prebuilt_models.hpp and the
# trainers of train/prebuilt_trainers.hpp are compiled once: ARCHIVE (the cputrain_instances library) defines the
# constructor, forward and backward of every model and the constructor, train and predict_logits of every
# single-process trainer, MPI_ARCHIVE (cputrain_instances_mpi) those of the programs' multi_node trainers, and no
# OBJECT (a program's own files, compiled with CPUTRAIN_PREBUILT_MODELS) defines any of them. Exit 0 when all hold,
# 1 naming each symbol that is missing or compiled again.
set -u
mpi_archive=
if [ "${1:-}" = --mpi ]; then
  mpi_archive=$2
  shift 2
fi
archive=$1
shift
for f in "$archive" ${mpi_archive:+"$mpi_archive"} "$@"; do
  [ -s "$f" ] || { echo "check_prebuilt_models: no file $f" >&2; exit 1; }
done
# Defined code (text and weak symbols), demangled, of each file once.
symbols=$(mktemp -d)
trap 'rm -rf "$symbols"' EXIT
defined() { nm -C --defined-only "$1" 2>/dev/null | awk '$2 ~ /^[TtWw]$/' ; }
defined "$archive" > "$symbols/archive"
[ -z "$mpi_archive" ] || defined "$mpi_archive" > "$symbols/mpi_archive"
i=0
for object in "$@"; do
  i=$((i + 1))
  defined "$object" > "$symbols/object$i"
done
status=0
count=0
# check [--in mpi_archive] SYMBOL OBJECT...: SYMBOL (the start of a demangled name) is defined by the archive (or
# the MPI archive) and by no OBJECT.
check() {
  where=archive
  where_file=$archive
  if [ "$1" = --in ]; then
    where=$2
    where_file=$mpi_archive
    shift 2
  fi
  symbol=$1
  shift
  count=$((count + 1))
  if ! grep -qF -- "$symbol" "$symbols/$where"; then
    echo "check_prebuilt_models: $where_file does not define $symbol...)" >&2
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
      policy="cputrain::policy<cputrain::precision::$precision, cputrain::parallel::single,"
      policy="$policy cputrain::alloc::$allocator>"
      for member in trainer train predict_logits; do
        check "cputrain::train::trainer<cputrain::train::$task, $policy >::$member(" "$@"
      done
    done
  done
done
if [ -n "$mpi_archive" ]; then
  for task in qa_task classification_task token_classification_task masked_lm_task; do
    for precision in fp32 bf16_mixed; do
      policy="cputrain::policy<cputrain::precision::$precision, cputrain::parallel::multi_node,"
      policy="$policy cputrain::alloc::numa_local>"
      for member in trainer train predict_logits; do
        check --in mpi_archive "cputrain::train::trainer<cputrain::train::$task, $policy >::$member(" "$@"
      done
    done
  done
fi
[ "$status" -eq 0 ] &&
  echo "check_prebuilt_models: $count entry points of the prebuilt models and trainers defined by the libraries," \
       "none by the $# objects"
exit "$status"
