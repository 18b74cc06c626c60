# SPDX-License-Identifier: MIT
"""A line step's joint pulse choice (armfw.pulsepick) on the MicroPython Unix port, run by `armctl bench`.

    micropython -X heapsize=384k bench_pulsepick.py ROOT N_STEPS

Loads ROOT/boards/sim_arm5.json, solves N_STEPS points along lines, and prints
one JSON object on its last line: microseconds per choice and per ik_near of
the same step (the fastest of REPEATS runs), heap bytes per choice and per
ik_near, the mean over the steps (gc off; boxed float temporaries, the
buffers are made once; a step whose winner is not the nearest pulses pays one
more FK), and bytes per GC block.
"""

import gc
import json
import sys
import time
from math import pi

from armfw import board

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
N_STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 50
REPEATS = 5


def main():
    b = board.load(ROOT + "/boards/sim_arm5.json")
    solver = b.solver
    servos = b.servos
    p0 = [180.0, -40.0, 120.0, pi]
    p1 = [200.0, 40.0, 140.0, pi]
    poses = []
    q = list(solver.home)
    for k in range(N_STEPS):
        t = k / N_STEPS
        point = [a + (c - a) * t for a, c in zip(p0, p1)]
        solver.ik(point, q, q)
        poses.append((point, list(q)))
    out = [0] * servos.n
    servos.line_pulses(poses[0][1], out, solver, p0, p1, poses[0][0])     # loads the module, makes its buffers
    picker = servos._picker
    best_pick = best_ik = 1e9
    goal = [0.0] * servos.n
    for _ in range(REPEATS):
        t0 = time.ticks_us()
        for point, q in poses:
            picker.pick(q, out, p0, p1, point)
        best_pick = min(best_pick, time.ticks_diff(time.ticks_us(), t0))
        t0 = time.ticks_us()
        for point, q in poses:
            solver.ik_near(point, goal, q)
        best_ik = min(best_ik, time.ticks_diff(time.ticks_us(), t0))
    pick_heap = ik_heap = 0
    for point, q in poses:
        pick_heap += heap(lambda: picker.pick(q, out, p0, p1, point))
        ik_heap += heap(lambda: solver.ik_near(point, goal, q))
    print(json.dumps({"steps": N_STEPS, "pick_us": best_pick / N_STEPS, "ik_near_us": best_ik / N_STEPS,
                      "pick_heap_bytes": pick_heap // N_STEPS, "ik_near_heap_bytes": ik_heap // N_STEPS,
                      "gc_block_bytes": heap(lambda: _half(3.0))}))


def _half(x):
    return x * 0.5      # one boxed float: one GC block


def heap(run):
    """Bytes one call of run() allocates (gc off for it)."""
    gc.collect()
    gc.disable()
    try:
        a = gc.mem_alloc()
        run()
        return gc.mem_alloc() - a
    finally:
        gc.enable()


main()
