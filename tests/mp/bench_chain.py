# SPDX-License-Identifier: MIT
"""Chain-arm FK benchmark (armfw.chain), run under the MicroPython Unix port by `armctl bench`.

    micropython -X heapsize=384k bench_chain.py ROOT N_CALLS

Loads ROOT/boards/sim_al5d.json (the AL5D imported from its URDF) and prints
one JSON object on its last line: FK calls per second over N_CALLS poses
(the fastest of REPEATS runs), and heap bytes allocated per call (gc off,
gc.mem_alloc() around a run over all poses minus one over half of them, so
what a run allocates once cancels). Boxed floats: every float result the
Unix port (and the RP2040/ESP32 ports) makes is a heap object, so the heap
figure counts float temporaries, not buffers (those are allocated once).
"""

import gc
import json
import sys
import time
from math import radians

from armfw import board

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
N_CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
SET_SIZE = 100
HEAP_ITEMS = 8       # calls per heap measurement (gc is off: they must fit the heap)
REPEATS = 5


def poses(arm, count):
    out = []
    state = 12345
    for _ in range(count):
        q = []
        for i in range(arm.n):
            state = (1103515245 * state + 12345) & 0x7FFFFFFF
            q.append(arm.lo[i] + (arm.hi[i] - arm.lo[i]) * state / 0x7FFFFFFF)
        out.append(q)
    return out


def run(arm, items, count, tip):
    fk = arm.fk
    k = 0
    n = len(items)
    for _ in range(count):
        fk(items[k], tip)
        k += 1
        if k == n:
            k = 0


def heap(arm, items, tip):
    gc.collect()
    gc.disable()
    try:
        a = gc.mem_alloc()
        run(arm, items, len(items), tip)
        return gc.mem_alloc() - a
    finally:
        gc.enable()


def main():
    arm = board.load(ROOT + "/boards/sim_al5d.json").solver
    items = poses(arm, SET_SIZE)
    tip = [0.0, 0.0, 0.0]
    run(arm, items, 10, tip)
    best = None
    for _ in range(REPEATS):
        t0 = time.ticks_us()
        run(arm, items, N_CALLS, tip)
        dt = time.ticks_diff(time.ticks_us(), t0)
        best = dt if best is None or dt < best else best
    some = items[:HEAP_ITEMS]
    half = items[:HEAP_ITEMS // 2]
    per_call = (heap(arm, some, tip) - heap(arm, half, tip)) / (len(some) - len(half))
    print(json.dumps({"board": "sim_al5d", "joints": arm.n, "calls": N_CALLS,
                      "fk_per_s": N_CALLS * 1000000.0 / best,
                      "fk_us": best / N_CALLS,
                      "heap_bytes_per_call": int(per_call + 0.5),
                      "check_fk_zero_mm": [round(v, 3) for v in arm.fk([0.0] * arm.n, tip)],
                      "heap_total_bytes": gc.mem_alloc() + gc.mem_free()}))


main()
