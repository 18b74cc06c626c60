# SPDX-License-Identifier: MIT
# The firmware's heap, measured while main.py serves the protocol as on a board.
#
# Run from the flash folder, beside main.py (armctl.memory.answer(..., script=...)
# copies both there). Before request line i is handled, when i is a multiple of
# ARMCTL_HEAP_EVERY (default 300), and so after line i-1 and any motion it
# started are done, it collects garbage and prints
#     # heap line=<i> alloc=<bytes> free=<bytes> block=<bytes per GC block> modules=<names>
# followed by micropython.mem_info()'s lines ("max free sz" is the largest free
# run, in blocks) and micropython.qstr_info()'s (the interned names and the bytes
# of their pools, which grow by doubling). Line 0 is after boot. modules: the
# armfw modules imported so far, their names after "armfw.", comma-separated
# (read after the heap is, and kept nowhere: the probe's own objects stay out of
# the figures; its own few names do not, docs/BENCHMARKS.md, Memory). The sample
# lines are not replies: they precede the reply of line i. Only
# armfw.protocol.Protocol._answer is wrapped (once per line answered: a line
# that arrives while G1 lines are queued is handed back to the console until
# they have run, and answered then); the console, session and main.py are the
# firmware's own.
import gc
import sys

import micropython

from armfw import protocol
from armfw.compat import getenv

EVERY = int(getenv("ARMCTL_HEAP_EVERY") or "300")
BLOCK = 16 if sys.maxsize < 2 ** 32 else 32        # 4 machine words per GC block
_answer = protocol.Protocol._answer
_count = [0]


def _scrub(depth):
    # Calls depth deep, each frame's locals None: the stack below the probe, where the
    # collection's own calls will run, holds no stale word from the boot's deeper calls.
    # The collector scans the stack conservatively, and such a word kept some of the
    # boot's garbage alive (3-4 KB of it, as one allocation more or less moved the words:
    # docs/BENCHMARKS.md, Memory), garbage a board frees once its stack is reused.
    a = b = c = d = e = f = g = h = None
    if depth:
        _scrub(depth - 1)


def _sample(line):
    _scrub(16)
    gc.collect()
    alloc = gc.mem_alloc()
    free = gc.mem_free()
    modules = ",".join(sorted(name[6:] for name in sys.modules if name.startswith("armfw.")))
    print("# heap line=%d alloc=%d free=%d block=%d modules=%s" % (line, alloc, free, BLOCK, modules))
    micropython.mem_info()
    micropython.qstr_info()


def _measured_answer(self, raw):
    line = _count[0]
    if line % EVERY == 0:
        _sample(line)
    _count[0] = line + 1
    _answer(self, raw)


protocol.Protocol._answer = _measured_answer
import main  # noqa: E402,F401  (boots and serves until the input ends)
