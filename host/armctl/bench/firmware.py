# SPDX-License-Identifier: MIT
"""Firmware figures: tests/mp/bench_solver.py and bench_line.py under the MicroPython Unix port.

bench_solver.py does all the solver measuring inside one MicroPython process
(see its docstring), bench_line.py the line in a second one (its path arrays
want a heap the targets have not fragmented); this module runs both with a
board-sized heap and returns their JSON, the line's as figures["line"].
"""

import json
import subprocess

from armctl import ROOT, upy

SCRIPT = ROOT / "tests" / "mp" / "bench_solver.py"
LINE_SCRIPT = ROOT / "tests" / "mp" / "bench_line.py"

# Objects are twice as big on the 64-bit Unix port, so this holds about what
# a Raspberry Pi Pico's ~190 KB heap holds. A board-sized heap matters: on the
# Unix port the cost of each float allocation grows with the heap size.
HEAP = "384k"

SOLVES = 10000
SHORT_SOLVES = 1000


def run_script(script, count):
    """Run a tests/mp script as `micropython -X heapsize=HEAP SCRIPT ROOT count`; returns the JSON
    object on its last line plus the command line, or raises RuntimeError."""
    cmd = [upy.command(), "-X", "heapsize=" + HEAP, str(script), str(ROOT), str(count)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=upy.env())
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError("%s failed (exit %d): %s" % (script.name, proc.returncode,
                                                        (proc.stderr or proc.stdout).strip()[-800:]))
    figures = json.loads(lines[-1])
    figures["command"] = "micropython -X heapsize=%s tests/mp/%s ROOT %d" % (HEAP, script.name, count)
    return figures


def run(short=False):
    """Run the solver script and the line script; returns the solver's figures with the line's as
    figures["line"] plus the command line, or raises RuntimeError."""
    figures = run_script(SCRIPT, SHORT_SOLVES if short else SOLVES)
    figures["line"] = line()
    return figures


def line():
    """tests/mp/bench_line.py's figures (a dict), or "not available: <why>"."""
    cmd = [upy.command(), "-X", "heapsize=" + HEAP, str(LINE_SCRIPT), str(ROOT)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=upy.env())
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return "not available: %s failed (exit %d): %s" % (LINE_SCRIPT.name, proc.returncode,
                                                           (proc.stderr or proc.stdout).strip()[-300:])
    return json.loads(lines[-1])
