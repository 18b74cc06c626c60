# SPDX-License-Identifier: MIT
"""A straight line under the MicroPython Unix port, run by `armctl bench` beside bench_solver.py.

    micropython -X heapsize=384k bench_line.py ROOT

The time to the first step of a 200-step line (begin(): the whole check pass,
then the first step) and the time and heap of each live step without the
driver write. A process of its own: the controller's path arrays want a heap
that bench_solver.py's targets have not fragmented. Prints one JSON object.
"""

import gc
import json
import sys
import time
from math import pi

from armfw import board

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
REPEATS = 5          # begin() runs this often; the fastest counts


# The protocol bench's line (armctl.bench.protocol): 400 mm in front of the
# 5-joint arm, tool horizontal, 200 steps of the board's 2 mm line step.
LINE_START = (250.0, -200.0, 150.0, pi / 2)
LINE_END = (250.0, 200.0, 150.0, pi / 2)


class NullServos:
    """A servo driver that drives nothing: the live step without the driver write."""

    def set_us(self, channel, us):
        pass

    def off(self, channel=None):
        pass


def run_live_steps(items, controller):
    step = controller.step
    for s in items:
        step()


def line_figures():
    """Time to the first step of a 200-step line (begin(): the whole check pass, then
    the first step), and the time and heap of each live step without the driver write."""
    from armfw import motion
    b = board.load(ROOT + "/boards/sim_arm5.json")
    controller = motion.ArmController(b, NullServos(), None, lambda ms: None)
    controller.park()
    if not controller.move(LINE_START):
        return "not available: the move to the line start was refused (%s)" % controller.fail_reason
    first = 0
    for k in range(REPEATS):
        controller.plan()
        controller.add(motion.LINE, LINE_END if k % 2 == 0 else LINE_START)
        gc.collect()
        t0 = time.ticks_us()
        if not controller.begin():
            return "not available: the line was refused (%s)" % controller.fail_reason
        controller.step()
        dt = time.ticks_diff(time.ticks_us(), t0)
        if k == 0 or dt < first:
            first = dt
        steps = controller.total
        while controller.step() >= 0:
            pass
    # The live steps of one more line, timed and weighed apart from its check pass.
    controller.plan()
    controller.add(motion.LINE, LINE_END if REPEATS % 2 == 0 else LINE_START)
    controller.begin()
    live = list(range(steps - 2))
    gc.collect()
    t0 = time.ticks_us()
    run_live_steps(live[:steps // 2], controller)
    live_us = time.ticks_diff(time.ticks_us(), t0) / (steps // 2)
    gc.collect()
    gc.disable()
    try:
        a = gc.mem_alloc()
        run_live_steps(live[:16], controller)
        heap = (gc.mem_alloc() - a) / 16
    finally:
        gc.enable()
    return {"steps": steps, "first_step_ms": first / 1000.0, "live_step_us": live_us,
            "live_step_heap_bytes": int(heap + 0.5),
            "kept_whole": getattr(controller, "_kept_whole", False)}


try:
    print(json.dumps(line_figures()))
except Exception as e:
    print(json.dumps("not available: %s: %s" % (type(e).__name__, e)))
