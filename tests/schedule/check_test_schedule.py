"""check_test_schedule.py BUILD_DIR [CTEST]: the order CTest starts this build's tests in is the one
cmake/cputrain-test-schedule.cmake promises. Every test holding the lock cputrain_cores (they run one after another)
must have a COST above every test that does not, so that their chain starts first; a test added in a directory
that never calls cputrain_schedule_tests() would be started last and fail this. Reads `ctest --show-only=json-v1`."""
import json
import subprocess
import sys

build_dir = sys.argv[1]
ctest = sys.argv[2] if len(sys.argv) > 2 else "ctest"
listing = subprocess.run([ctest, "--show-only=json-v1"], cwd=build_dir, check=True, capture_output=True, text=True)
tests = json.loads(listing.stdout)["tests"]


def properties(test):
    return {p["name"]: p["value"] for p in test.get("properties", [])}


chain, rest = [], []
for test in tests:
    props = properties(test)
    cost = float(props.get("COST", 0))
    (chain if "cputrain_cores" in (props.get("RESOURCE_LOCK") or []) else rest).append((cost, test["name"]))

if not chain:
    sys.exit(f"FAIL: no test of {build_dir} holds the lock cputrain_cores: nothing to check (is the listing empty?)")
lowest_chain = min(chain)
highest_rest = max(rest) if rest else (0.0, "(none)")
unscheduled = [name for cost, name in chain if cost < 1000]
if unscheduled:
    sys.exit(f"FAIL: {len(unscheduled)} test(s) hold cputrain_cores without the chain's COST (>= 1000), so a cold "
             f"run starts them last; their directories must call cputrain_schedule_tests(): "
             + ", ".join(unscheduled[:10]))
if highest_rest[0] >= lowest_chain[0]:
    sys.exit(f"FAIL: {highest_rest[1]} (COST {highest_rest[0]}) holds no lock but outranks {lowest_chain[1]} "
             f"(COST {lowest_chain[0]}) of the cputrain_cores chain")
print(f"{len(chain)} tests in the cputrain_cores chain, COST {lowest_chain[0]:.0f} and up; the other {len(rest)} "
      f"at most {highest_rest[0]:.0f} ({highest_rest[1]})")
