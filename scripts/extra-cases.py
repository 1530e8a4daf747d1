#!/usr/bin/env python3
"""Runs the project's own ASL cases (tests/conformance/cases) against an engine.

usage: scripts/extra-cases.py [--cases DIR] -- ENGINE_CMD...

The cases have the layout of ../shared/conformance (definition.json,
input.json, mocks.json, expected.json, README) and are called the same way
(ENGINE_CMD DEFINITION --input FILE [--mocks FILE]), but expected.json may
also say "TIMED_OUT" (an execution past its TimeoutSeconds), which the
corpus harness does not know. Comparison: the status; for SUCCEEDED the
output (deep equality, numbers numerically); for FAILED and TIMED_OUT the
error when expected.json names one. Exit status 1 when a case fails.
"""
import json
import os
import subprocess
import sys
import tempfile


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def verdict(expected, got):
    if not isinstance(got, dict) or got.get("status") != expected["status"]:
        return "status differs"
    if expected["status"] == "SUCCEEDED" and not same(got.get("output"), expected.get("output")):
        return "output differs"
    if "error" in expected and got.get("error") != expected["error"]:
        return "error differs"
    return None


def main(argv):
    cases = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "conformance", "cases")
    if argv[:1] == ["--cases"]:
        cases, argv = argv[1], argv[2:]
    if argv[:1] != ["--"] or len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    engine = argv[1:]
    empty = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    empty.write("{}\n")
    empty.close()
    passed = failed = 0
    for root, _dirs, files in sorted(os.walk(cases)):
        if "definition.json" not in files:
            continue
        name = os.path.relpath(root, cases)
        expected = json.load(open(os.path.join(root, "expected.json")))
        cmd = engine + [os.path.join(root, "definition.json"), "--input"]
        cmd.append(os.path.join(root, "input.json") if "input.json" in files else empty.name)
        if "mocks.json" in files:
            cmd += ["--mocks", os.path.join(root, "mocks.json")]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            got = json.loads(proc.stdout.strip().splitlines()[-1])
        except Exception as e:  # a timeout, no output, not JSON
            got = f"no result: {e}"
        why = verdict(expected, got)
        if why is None:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {name}: {why}: expected {json.dumps(expected)} got {json.dumps(got)[:300]}")
    os.unlink(empty.name)
    print(f"project cases: {passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
