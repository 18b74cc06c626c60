# SPDX-License-Identifier: MIT
"""Run the test suite many times, idle and beside CPU hogs, and tabulate what failed.

A test that involves time must pass on a busy machine as on an idle one
(CONTRIBUTING.md says how such a test is written). This runs the suite N times
on its own, then N times with HOGS busy-loop Python processes beside it (plain
`python -c "while True: pass"`, nothing to install), and prints one row per run
and, per failing test, how often it failed. Exit status 0 when every run passed.

    .venv/bin/python tests/soak.py                 # 5 idle + 5 loaded runs of the whole suite
    .venv/bin/python tests/soak.py -n 1 -- -k "test_sim or test_link"
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOG = "while True: pass"


def failures(junit_xml):
    """(tests run, [test ids that failed or errored]) from a pytest --junitxml report."""
    run, failed = 0, []
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        run += 1
        if case.find("failure") is not None or case.find("error") is not None:
            module = case.get("classname", "").replace(".", "/")
            failed.append("%s.py::%s" % (module, case.get("name")))
    return run, failed


def run_suite(pytest_args, report):
    """One pytest run; (exit code, seconds, tests run, failed ids)."""
    started = time.monotonic()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "--junitxml", str(report), *pytest_args], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    if not report.exists():
        return code, seconds, 0, ["(pytest made no report: exit code %d)" % code]
    run, failed = failures(report)
    return code, seconds, run, failed


def start_hogs(count):
    return [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(count)]


def stop_hogs(hogs):
    for hog in hogs:
        hog.kill()
        hog.wait()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--runs", type=int, default=5, help="runs idle, and as many loaded (default 5)")
    parser.add_argument("--hogs", type=int, default=os.cpu_count() or 2,
                        help="busy-loop processes beside the loaded runs (default: one per CPU, %(default)s)")
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest (-k, a file, ...)")
    args = parser.parse_args(argv)

    rows = []
    with tempfile.TemporaryDirectory(prefix="armctl-soak-") as tmp:
        for load in ("idle", "loaded"):
            for k in range(args.runs):
                hogs = start_hogs(args.hogs) if load == "loaded" else []
                try:
                    code, seconds, run, failed = run_suite(args.pytest_args, Path(tmp) / ("%s%d.xml" % (load, k)))
                finally:
                    stop_hogs(hogs)
                rows.append((load, k + 1, code, seconds, run, failed))
                print("%-6s run %d: %s, %d tests, %d failed, %.0f s" % (
                    load, k + 1, "pass" if code == 0 else "FAIL", run, len(failed), seconds), flush=True)

    print()
    print("%-6s %4s %6s %6s %7s  %s" % ("load", "run", "tests", "failed", "seconds", "failing tests"))
    for load, k, code, seconds, run, failed in rows:
        print("%-6s %4d %6d %6d %7.0f  %s" % (load, k, run, len(failed), seconds, " ".join(failed) or "-"))
    count = Counter(test for row in rows for test in row[5])
    green = sum(1 for row in rows if row[2] == 0)
    print()
    print("%d of %d runs passed (%d idle, %d beside %d CPU hog%s)" % (
        green, len(rows), args.runs, args.runs, args.hogs, "" if args.hogs == 1 else "s"))
    for test, times in count.most_common():
        print("  %s failed %d time%s" % (test, times, "" if times == 1 else "s"))
    return 0 if green == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
