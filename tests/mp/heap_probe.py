# SPDX-License-Identifier: MIT
# The firmware's heap, measured while main.py serves the protocol as on a board.
#
# Run from the flash folder, beside main.py (armctl.memory.answer(..., script=...)
# copies both there). Before request line i is handled, when i is a multiple of
# ARMCTL_HEAP_EVERY (default 300), and so after line i-1 and any motion it
# started are done, it collects garbage and prints
#     # heap line=<i> alloc=<bytes> free=<bytes> block=<bytes per GC block>
# followed by micropython.mem_info()'s lines ("max free sz" is the largest free
# run, in blocks). Line 0 is after boot. The sample lines are not replies: they
# precede the reply of line i. Only armfw.protocol.Protocol.handle is wrapped;
# the console, session and main.py are the firmware's own.
import gc
import sys

import micropython

from armfw import protocol
from armfw.compat import getenv

EVERY = int(getenv("ARMCTL_HEAP_EVERY") or "300")
BLOCK = 16 if sys.maxsize < 2 ** 32 else 32        # 4 machine words per GC block
_handle = protocol.Protocol.handle
_count = [0]


def _sample(line):
    gc.collect()
    print("# heap line=%d alloc=%d free=%d block=%d" % (line, gc.mem_alloc(), gc.mem_free(), BLOCK))
    micropython.mem_info()


def _measured_handle(self, raw):
    line = _count[0]
    if line % EVERY == 0:
        _sample(line)
    _count[0] = line + 1
    _handle(self, raw)


protocol.Protocol.handle = _measured_handle
import main  # noqa: E402,F401  (boots and serves until the input ends)
