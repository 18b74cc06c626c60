# SPDX-License-Identifier: MIT
"""The firmware's heap on the board-like interpreter, per route it reaches a board by.

The board-like interpreter is the MicroPython Unix port built with a board's
32-bit objects and single-precision floats (../shared/micropython/build-board-like.sh,
armctl.memory.boardlike), plain and with firmware/manifest.py frozen in. For
each route (source .py, .mpy, frozen) this section bisects the smallest heap
in which main.py boots and answers armctl.memory's mixed run, then runs it
once more at the route's goal heap (or at its need, when it does not fit the
goal yet) under tests/mp/heap_probe.py: the free heap and the largest free
block after boot and after the run. On the .mpy route, where every module's code
sits in the heap, it also shows what each request of sim_arm5's run first loads
and what the heap keeps more after it (armctl.memory.loads), and how many names
each board's run interns, against the 1,260 that six pools of names hold before a
seventh takes 9 KB at once (armctl.memory.names_interned). Without the
interpreters (no build script beside this checkout, nothing built): "not available".
"""

import json
import tempfile

from armctl import BOARDS_DIR, memory

BOARDS_SHORT = ("sim_arm5",)
BOARDS_FULL = ("sim_arm5", "sim_planar", "sim_al5d", "sim_arm5_tool")
LOADS_HEAP_KB = 512


def run(short=False):
    plain = memory.boardlike(frozen=False)
    frozen = memory.boardlike(frozen=True)
    names = BOARDS_SHORT if short else BOARDS_FULL
    runs = {name: memory.mixed_run(json.loads((BOARDS_DIR / (name + ".json")).read_text())) for name in names}
    figures = {"boards": list(names), "lines": {n: len(lines) for n, lines in runs.items()}, "routes": {}}
    with tempfile.TemporaryDirectory(prefix="armctl-bench-mpy-") as mpy_dir:
        for name, route in memory.routes(plain, frozen, mpy_dir).items():
            needs = {board: memory.smallest_heap(route.interpreter, route.path, BOARDS_DIR / (board + ".json"), lines)
                     for board, lines in runs.items()}
            if None in needs.values():
                figures["routes"][name] = {"needs_kb": needs, "goal_kb": memory.GOALS_KB[name]}
                continue
            need = max(needs.values())
            heap_kb = max(need, memory.GOALS_KB[name])
            worst = max(needs, key=needs.get)
            samples, _ = memory.heap_profile(route.interpreter, route.path, BOARDS_DIR / (worst + ".json"),
                                             runs[worst], heap_kb)
            boot, after = samples[0], samples[-1]
            figures["routes"][name] = {
                "needs_kb": needs, "need_kb": need, "goal_kb": memory.GOALS_KB[name], "profiled": worst,
                "heap_kb": heap_kb, "boot_free_bytes": boot["free"], "boot_largest_free_bytes": boot["largest_free"],
                "run_free_bytes": after["free"], "run_largest_free_bytes": after["largest_free"]}
            if name == "mpy":
                counted = {board: memory.names_interned(route.interpreter, route.path,
                                                        BOARDS_DIR / (board + ".json"), lines)
                           for board, lines in runs.items()}
                figures["names"] = {"six_pools": memory.NAMES_IN_SIX_POOLS,
                                    "seventh_pool_bytes": memory.SEVENTH_POOL_BYTES,
                                    "boards": {board: c[0] if c else None for board, c in counted.items()}}
                # In a heap the whole run fits with room: at its need a probe's sample can
                # take the heap a later import would need.
                board = names[0]
                samples, _ = memory.heap_profile(route.interpreter, route.path, BOARDS_DIR / (board + ".json"),
                                                 runs[board], LOADS_HEAP_KB, every=1)
                figures["loads"] = {"board": board, "heap_kb": LOADS_HEAP_KB,
                                    "requests": [list(row) for row in memory.loads(samples, runs[board])]}
    return figures
