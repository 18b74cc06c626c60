# SPDX-License-Identifier: MIT
"""Firmware figures: tests/mp/bench_solver.py under the real MicroPython Unix port.

The script does all the measuring inside one MicroPython process (see its
docstring); this module runs it with a board-sized heap and returns its JSON.
"""

import json
import subprocess

from armctl import ROOT, upy

SCRIPT = ROOT / "tests" / "mp" / "bench_solver.py"

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
    """Run the script; returns its figures plus the command line, or raises RuntimeError."""
    return run_script(SCRIPT, SHORT_SOLVES if short else SOLVES)
