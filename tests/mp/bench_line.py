# SPDX-License-Identifier: MIT
"""A straight line under the MicroPython Unix port, run by `armctl bench` beside bench_solver.py.

    micropython -X heapsize=384k bench_line.py ROOT

The time to the first step of a 200-step line (begin(): the whole check pass,
then the first step), how many of its solves the check pass's continuation
(solver.ik_near) left to the full ik, and the time and heap of each live step
without the driver write; then the same for the same line at LONG_SPEED_DEG_S, a plan too
long for the controller's ring (motion.RING_STEPS), whose live steps also
refill it (figures["long"]: every live step of the plan, averaged). A process
of its own: the controller's path arrays want a heap that bench_solver.py's
targets have not fragmented. Prints one JSON object.
"""

import gc
import json
import sys
import time
from math import pi

from armfw import board

from null_driver import NullDriver

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
REPEATS = 5          # begin() runs this often; the fastest counts
LONG_SPEED_DEG_S = 10.0     # the line at this joint speed: a plan longer than the ring


# The protocol bench's line (armctl.bench.protocol): 400 mm in front of the
# 5-joint arm, tool horizontal, 200 steps of the board's 2 mm line step.
LINE_START = (250.0, -200.0, 150.0, pi / 2)
LINE_END = (250.0, 200.0, 150.0, pi / 2)


def run_live_steps(items, controller):
    step = controller.step
    for s in items:
        step()


def first_to_step(controller, repeats=REPEATS):
    """The fastest of repeats: begin() (the whole check pass) then step(), the 200-step line
    out and back in turn (us); each line then runs to its end."""
    from armfw import motion
    first = 0
    for k in range(repeats):
        controller.plan()
        controller.add(motion.LINE, LINE_END if controller.q[0] < 0 else LINE_START)
        gc.collect()
        t0 = time.ticks_us()
        if not controller.begin():
            raise RuntimeError("the line was refused (%s)" % controller.refusal.reason)
        controller.step()
        dt = time.ticks_diff(time.ticks_us(), t0)
        if k == 0 or dt < first:
            first = dt
        while controller.step() >= 0:
            pass
    return first


def count_fallbacks(controller):
    """One more line's check pass: how many solves it made, and how many of them the
    continuation (solver.ik_near) left to the full ik; (None, None) for a firmware
    without it."""
    solver = controller.solver
    near = getattr(solver, "ik_near", None)
    if near is None:
        return None, None
    full = solver.ik
    counted = [0, 0]

    def counting_near(target, out, current):
        counted[0] += 1
        return near(target, out, current)

    def counting_full(target, out, current=None, rule=0):
        counted[1] += 1
        return full(target, out, current, rule)

    solver.ik_near = counting_near
    solver.ik = counting_full       # what ik_near calls when it falls back
    try:
        first_to_step(controller, 1)
    finally:
        del solver.ik_near
        del solver.ik
    return counted[0], counted[1]


def line_figures():
    """Time to the first step of a 200-step line (begin(): the whole check pass, then
    the first step), and the time and heap of each live step without the driver write."""
    from armfw import motion
    b = board.load(ROOT + "/boards/sim_arm5.json")
    controller = motion.ArmController(b, NullDriver(), None, lambda ms: None)
    controller.park()
    if not controller.move(LINE_START):
        return "not available: the move to the line start was refused (%s)" % controller.refusal.reason
    first = first_to_step(controller)
    steps = controller.executor.total
    zones = b.solver.zones
    exact = getattr(zones, "clear_exact", None)
    first_exact = exact_checks = None
    if exact is not None:
        # The same with every zone check exact (the skip off), and how many the skip leaves.
        zones.clear = exact
        first_exact = first_to_step(controller) / 1000.0
        del zones.clear
        counted = [0]

        def counting(q):
            counted[0] += 1
            return exact(q)

        zones.clear_exact = counting
        first_to_step(controller, 1)
        exact_checks = counted[0]
        del zones.clear_exact
    solves, fallbacks = count_fallbacks(controller)
    # The live steps of one more line, timed and weighed apart from its check pass.
    controller.plan()
    controller.add(motion.LINE, LINE_END if controller.q[0] < 0 else LINE_START)
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
    return {"steps": steps, "first_step_ms": first / 1000.0, "first_step_ms_zones_exact": first_exact,
            "exact_zone_checks": exact_checks, "line_solves": solves, "full_ik_fallbacks": fallbacks,
            "live_step_us": live_us,
            "live_step_heap_bytes": int(heap + 0.5),
            "kept_whole": getattr(controller, "_kept_whole", False)}


def long_figures():
    """The same line at LONG_SPEED_DEG_S, longer than the ring: time to the first step;
    per live step over the whole plan, the mean time of step() (the send) and of
    refill() after it (where the controller has one: the ring refilled in the idle
    time), each call timed on its own; the heap of step() + refill() over 8 steps
    halfway. Without the driver write."""
    from armfw import motion
    b = board.load(ROOT + "/boards/sim_arm5.json")
    controller = motion.ArmController(b, NullDriver(), None, lambda ms: None)
    controller.park()
    if not controller.move(LINE_START):
        return "not available: the move to the line start was refused (%s)" % controller.refusal.reason
    controller.set_speed_deg_s(LONG_SPEED_DEG_S)
    step = controller.step
    refill = getattr(controller, "refill", None)
    first = send = between = heap = 0
    for k in range(3):
        controller.plan()
        controller.add(motion.LINE, LINE_END if k % 2 == 0 else LINE_START)
        gc.collect()
        t0 = time.ticks_us()
        if not controller.begin():
            return "not available: the line was refused (%s)" % controller.refusal.reason
        step()
        dt = time.ticks_diff(time.ticks_us(), t0)
        first = dt if k == 0 or dt < first else first
        if refill is not None:
            refill()
        steps = controller.executor.total
        gc.collect()
        if k < 2:
            a = b = 0
            while True:
                t0 = time.ticks_us()
                wait = step()
                t1 = time.ticks_us()
                if wait < 0:
                    break
                if refill is not None:
                    refill()
                b += time.ticks_diff(time.ticks_us(), t1)
                a += time.ticks_diff(t1, t0)
            a /= steps - 1
            b /= steps - 1
            send = a if k == 0 or a < send else send
            between = b if k == 0 or b < between else between
        else:
            for s in range(steps // 2):     # past the start, where the refill runs ahead
                step()
                if refill is not None:
                    refill()
            gc.collect()
            gc.disable()
            try:
                a = gc.mem_alloc()
                for s in range(8):
                    step()
                    if refill is not None:
                        refill()
                heap = (gc.mem_alloc() - a) / 8
            finally:
                gc.enable()
            while step() >= 0:
                pass
    return {"steps": steps, "first_step_ms": first / 1000.0, "live_step_us": send,
            "refill_us": between if refill is not None else None,
            "live_step_heap_bytes": int(heap + 0.5),
            "kept_whole": getattr(controller, "_kept_whole", False)}


try:
    figures = line_figures()
    if isinstance(figures, dict):
        figures["long"] = long_figures()
    print(json.dumps(figures))
except Exception as e:
    print(json.dumps("not available: %s: %s" % (type(e).__name__, e)))
