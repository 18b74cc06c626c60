# SPDX-License-Identifier: MIT
"""`armctl bench`: measure the solver, numerical IK, batch IK and protocol speeds.

    armctl bench                     full run (several minutes), table on stdout
    armctl bench --short             fewer targets (tens of seconds)
    armctl bench --json out/bench.json
    armctl bench --only firmware batch
"""

import json
import sys
from pathlib import Path

from armctl.cli import EXIT_OK, UsageError

NAME = "bench"
HELP = "Measure solver, numerical IK, batch IK and protocol speeds (prints a table, writes JSON)."


def add_arguments(parser):
    from armctl.bench import SECTIONS
    parser.add_argument("--short", action="store_true", help="fewer targets and requests: a quick run")
    parser.add_argument("--json", metavar="PATH", help="also write every figure to this JSON file")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, metavar="SECTION",
                        help="run only these sections (%s)" % ", ".join(SECTIONS))
    parser.add_argument("--budget", type=float, metavar="SECONDS",
                        help="time each numerical solver may spend (default: 600, --short: 3)")


def run(args):
    from armctl import bench
    from armctl.bench import report
    if args.budget is not None and args.budget <= 0:
        raise UsageError("--budget must be > 0")
    result = bench.run(short=args.short, sections=args.only or bench.SECTIONS,
                       progress=lambda text: print(text, file=sys.stderr, flush=True),
                       numeric_budget_s=args.budget)
    print(report.text(result))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        print("figures written to %s" % path, file=sys.stderr)
    return EXIT_OK
