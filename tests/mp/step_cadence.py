# SPDX-License-Identifier: MIT
"""Step cadence of the live console: the time from one motion step to the next.

Runs the firmware's console session (armfw.session) on stdin/stdout in real
time, with the simulated driver, for the requests the host (armctl.bench.console)
sends, with or without real-time traffic beside them. Every step's start is
stamped (ticks_us, into a buffer made once); when the input ends, one JSON
line: the intervals between consecutive steps of the longest motion, and the
bytes the console's wait allocated over a run of waits (gc.mem_alloc).

    micropython step_cadence.py BOARD_JSON
"""

import gc
import json
import sys
from array import array
from time import ticks_us, ticks_diff

from armfw import board as board_file
from armfw.console import Console
from armfw.motion import ArmController
from armfw.protocol import Protocol
from armfw.session import Session
from armfw.simservo import SimServo

MAX_STEPS = 2000

b = board_file.load(sys.argv[1])
driver = SimServo({"realtime": True})
controller = ArmController(b, driver)
controller.park()
console = Console(sys.stdin.buffer, sys.stdin, sys.stdout.write, None)
protocol = Protocol(controller, console.write_line, None, console)
session = Session(protocol, console, driver)

stamps = array("l", [0] * MAX_STEPS)
count = [0]
step = controller.step


def stamped_step():
    n = count[0]
    if n < MAX_STEPS:
        stamps[n] = ticks_us()
        count[0] = n + 1
    return step()


controller.step = stamped_step

# Where the last motion's stamps start: the step count when it began (a stall of
# the loaded machine inside a motion must not read as the gap between two).
last_begin = [0]
begin = controller.begin


def marked_begin():
    last_begin[0] = count[0]
    return begin()


controller.begin = marked_begin


def wait_bytes_per_200():
    """What 200 idle waits (nothing to read) allocate. In a function: a loop at module
    level would store its variable as a new global, and the globals' table may grow."""
    gc.collect()
    before = gc.mem_alloc()
    for _ in range(200):
        console.wait(0)
    return gc.mem_alloc() - before


wait_bytes = wait_bytes_per_200()

session.serve()

# The intervals of the last motion: the stamps since it began.
n = count[0]
intervals = [ticks_diff(stamps[i + 1], stamps[i]) for i in range(n - 1)]
# The last stamp is the step() call that found the motion finished.
last = intervals[last_begin[0]:-1]
print(json.dumps({"steps": len(last), "intervals_us": last, "wait_bytes_per_200": wait_bytes}))
