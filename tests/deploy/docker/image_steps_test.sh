#!/usr/bin/env bash
# The container image's steps on this Debian 12 host, since no Docker engine runs here: the build stage's script
# (deploy/docker/build.sh, installing the suite's own build as the one level `native`), the runtime stage's
# checks (every shared library the installed programs load comes from the runtime package list; the ssh files;
# sshd accepts its config when sshd is installed), then the installed launcher trains on demo data, and a second
# run of two MPI ranks resumes from the first run's checkpoint as a restarted Kubernetes job would.
#   image_steps_test.sh <source dir> <work dir> <build dir of the suite>
set -euo pipefail
src=$1 work=$2
rm -rf "$work/prefix" "$work/root" "$work/demo" "$work/output"
mkdir -p "$work"
prefix=$work/prefix

# The image's build stage compiles nothing here: the programs this build of the suite has already compiled are
# installed as the image would install them (level `native`, CPUTRAIN_PREBUILT_DIR in deploy/docker/build.sh), so
# CI does not compile run_qa a second time. Compiling at one level of the fleet's instruction sets is what
# deploy/docker/build.sh adds to that, and the preset's own build already compiles the same sources.
level=native
CPUTRAIN_PREBUILT_DIR=$3 "$src/deploy/docker/build.sh" "$prefix" "$level"
for file in bin/run_qa bin/cputrain-machine bin/cputrain-make-demo-data bin/cputrain-tokenize \
            "libexec/cputrain/$level/run_qa" "libexec/cputrain/$level/cputrain-machine" \
            include/cputrain/cputrain.hpp lib/cmake/cputrain/cputrain-config.cmake; do
  [[ -e $prefix/$file ]] || { echo "image_steps_test: the image would lack $file" >&2; exit 1; }
done

"$src/deploy/docker/runtime.sh" check "$prefix"
"$src/deploy/docker/runtime.sh" files "$work/root"
grep -qx "Port 2222" "$work/root/home/cputrain/.sshd_config"
grep -q "StrictHostKeyChecking no" "$work/root/etc/ssh/ssh_config.d/cputrain.conf"
if [[ -x /usr/sbin/sshd ]]; then
  ssh-keygen -q -t rsa -N '' -f "$work/root/id_rsa"
  sed "s|/home/cputrain/.ssh/id_rsa|$work/root/id_rsa|; s|/home/cputrain/sshd.pid|$work/root/sshd.pid|" \
    "$work/root/home/cputrain/.sshd_config" > "$work/root/sshd_config.test"
  /usr/sbin/sshd -t -f "$work/root/sshd_config.test"
  echo "image_steps_test: sshd accepts the workers' config"
else
  echo "image_steps_test: sshd not installed here: its config is checked by content only"
fi

# The image's programs, through the launcher, with its default allocator when installed here.
export PATH=$prefix/bin:$PATH
[[ -e /usr/lib/$(uname -m)-linux-gnu/libtcmalloc_minimal.so.4 ]] || export CPUTRAIN_MALLOC=system
cputrain-make-demo-data --output_dir "$work/demo" --train_paragraphs 40 --eval_paragraphs 4 --version_2_with_negative
common=(--config_name "$work/demo/model" --tokenizer_name "$work/demo/model" --train_file "$work/demo/train.json"
        --validation_file "$work/demo/dev.json" --version_2_with_negative --do_train --output_dir "$work/output"
        --per_device_train_batch_size 4 --max_seq_length 64 --doc_stride 16 --save_steps 4 --logging_steps 4
        --disable_tqdm)
run_qa "${common[@]}" --max_steps 4 --threads 1 > "$work/first.log" 2>&1 || { cat "$work/first.log"; exit 1; }
[[ -f $work/output/checkpoint-4/trainer_state.json ]] || { echo "no checkpoint-4" >&2; cat "$work/first.log"; exit 1; }

mpi_flags=(-n 2 --bind-to none)
[[ "$(mpiexec --version 2>&1)" == *OpenRTE* || "$(mpiexec --version 2>&1)" == *"Open MPI"* ]] &&
  mpi_flags+=(--oversubscribe) && [[ $(id -u) -eq 0 ]] && mpi_flags+=(--allow-run-as-root)
mpiexec "${mpi_flags[@]}" run_qa "${common[@]}" --max_steps 8 --do_eval > "$work/second.log" 2>&1 ||
  { cat "$work/second.log"; exit 1; }
grep -q "Resuming from $work/output/checkpoint-4" "$work/second.log" ||
  { echo "image_steps_test: the restarted job did not resume from checkpoint-4" >&2; cat "$work/second.log"; exit 1; }
grep -q "layout: 2 ranks on 1 host" "$work/second.log" ||
  { echo "image_steps_test: the restarted job did not run as 2 ranks" >&2; cat "$work/second.log"; exit 1; }
grep -q '"global_step": 8' "$work/output/trainer_state.json" ||
  { echo "image_steps_test: the restarted job did not reach step 8" >&2; exit 1; }
[[ -f $work/output/eval_results.json ]] || { echo "image_steps_test: no eval_results.json" >&2; exit 1; }
echo "image_steps_test: built $level, runtime libraries covered, trained 4 steps, resumed on 2 ranks to step 8"
