# SPDX-License-Identifier: MIT
# Under the real MicroPython: what a run of steps allocates. Shared by
# driver_alloc.py and bus_alloc.py (they run from tests/mp, which is on the path).
import gc

import micropython


def allocation(run):
    """run() once to warm up (first calls may intern or cache), then (what it returns,
    bytes a second run allocated, "ok" or "MemoryError" for a third with the heap locked)."""
    run()
    gc.collect()
    before = gc.mem_alloc()
    n = run()
    after = gc.mem_alloc()
    micropython.heap_lock()
    try:
        run()
        locked = "ok"
    except MemoryError:
        locked = "MemoryError"
    finally:
        micropython.heap_unlock()
    return n, after - before, locked
