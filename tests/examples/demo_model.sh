# Sourced by the test scripts that train on the demo data (fault_test.sh, memory_test.sh, signal_test.sh); they
# define WORK (holding demo/, made by cputrain-make-demo-data) and fail() before calling it.
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
