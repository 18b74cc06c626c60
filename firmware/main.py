# SPDX-License-Identifier: MIT
"""Boot the arm (armfw.boot) and answer the line protocol on the console.

Ctrl-C leaves the protocol for the MicroPython REPL with the arm controller
(armfw.motion.ArmController) as the global `controller` (None if it could not
be built) for Python calls, e.g. controller.q or controller.move(...);
armfw.serve() goes back to the protocol, the arm where it was.
"""

import gc
import sys

import micropython

# Collect after every 16 KB allocated (a sixteenth of a smaller heap) rather
# than only when the heap is full. Garbage left lying at the bottom of the heap
# pushes what stays (the code each import or compile makes, the interned names,
# the objects a request keeps) up through it, and the holes that garbage leaves
# between those are too small for a later import, a pool of names or a reply:
# the firmware then needs far more heap than it keeps (README, Memory).
gc.threshold(min(16 * 1024, (gc.mem_free() + gc.mem_alloc()) // 16))
# No line numbers kept with the bytecode compiled from here on (as `armctl deploy`
# compiles .mpy, mpy-cross -O3): the firmware answers every failure with a reply
# word, never a traceback, and the numbers would take heap.
micropython.opt_level(3)

from armfw import boot

controller, serving = boot.start()
del boot        # armfw.boot let itself go: its code is garbage once start() has returned
from armfw import session

if session.run(serving):
    if sys.platform == "linux":
        sys.exit(0)     # the host closed our input: a Unix-port simulator ends here
