# Sourced by the end-to-end scripts that need the conformance data, with DATA set to its folder (the
# CPUTRAIN_TEST_DATA_DIR CMake passed): sets SAMPLE (the SQuAD sample) and VOCAB (bert-base-uncased's vocab.txt), or
# ends the script saying what is missing: skipped (exit 77) outside CI, failed (exit 1) where
# CPUTRAIN_TEST_DATA_REQUIRED=1 (scripts/test.sh under CI), which must not pass without the data.
SAMPLE=$DATA/squad/sample.json
VOCAB=$DATA/bert-base-uncased/vocab.txt
if [ -z "$DATA" ] || [ ! -f "$SAMPLE" ] || [ ! -f "$VOCAB" ]; then
  if [ -z "$DATA" ]; then
    why="CPUTRAIN_TEST_DATA_DIR was empty when this build was configured (it names the folder holding squad/sample.json and bert-base-uncased/vocab.txt)"
  else
    why="$(for f in "$SAMPLE" "$VOCAB"; do [ -f "$f" ] || printf '%s ' "$f"; done)missing (CPUTRAIN_TEST_DATA_DIR)"
  fi
  # CI (scripts/test.sh sets CPUTRAIN_TEST_DATA_REQUIRED=1 there) must not pass without the data.
  if [ "${CPUTRAIN_TEST_DATA_REQUIRED:-}" = 1 ]; then
    echo "FAIL: no conformance data, and CPUTRAIN_TEST_DATA_REQUIRED=1: $why"
    exit 1
  fi
  echo "skipped: no conformance data: $why"
  exit 77
fi
