#!/bin/sh
# Runs the ASL conformance corpus (../shared/conformance) against SWF_BIN run --local.
# Fails when a case fails that is not listed in tests/conformance/known-failures.txt
# (each listed case says why it fails), or when the pass rate outside the
# jsonata and variables groups falls under 98%. Then runs the project's own
# cases in tests/conformance/cases (scripts/extra-cases.py).
set -eu
cd "$(dirname "$0")/.."
BIN=${1:-build/swf}
CORPUS=${SWF_CONFORMANCE:-../shared/conformance}
if [ ! -x "$CORPUS/run" ]; then
    echo "conformance: no corpus at $CORPUS" >&2
    exit 1
fi
out=$(mktemp)
"$CORPUS/run" --jobs 2 -- "$BIN" run --local >"$out" 2>&1 || true
sed -n '/^group/,$p' "$out"
python3 - "$out" tests/conformance/known-failures.txt <<'PY'
import re, sys
out = open(sys.argv[1]).read().splitlines()
known = {}
for line in open(sys.argv[2]):
    line = line.strip()
    if line and not line.startswith('#'):
        name, _, why = line.partition(' ')
        known[name] = why.strip()
failed = [m.group(1) for m in (re.match(r'FAIL (\S+?):', l) for l in out) if m]
unexpected = [f for f in failed if f not in known]
fixed = [k for k in known if k not in failed]
core_total = core_pass = 0
for l in out:
    m = re.match(r'(\S+)\s+(\d+)\s+(\d+)\s+(\d+)$', l)
    if m and m.group(1) not in ('all', 'jsonata', 'variables'):
        core_pass += int(m.group(2)); core_total += int(m.group(4))
rate = 100.0 * core_pass / core_total if core_total else 0.0
print(f"conformance outside jsonata/variables: {core_pass}/{core_total} = {rate:.1f}%")
for f in unexpected:
    print(f"unexpected failure: {f}")
    for l in out:
        if l.startswith(f"FAIL {f}:"):
            print("   ", l)
for f in fixed:
    print(f"now passing (remove from known-failures.txt): {f}")
sys.exit(1 if unexpected or rate < 98.0 or core_total == 0 else 0)
PY
rc=$?
rm -f "$out"
# The project's own cases (tests/conformance/cases): what the corpus does not test.
scripts/extra-cases.py -- "$BIN" run --local || rc=1
exit $rc
