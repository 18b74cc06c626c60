# SPDX-License-Identifier: MIT
"""Batch analytic IK: armctl.batch (numpy, all targets at once) against a
per-target Python loop over the firmware's own solver (armfw), same targets.
"""

import time

import numpy as np

from armctl import batch, batch_math
from armctl.bench import targets as bench_targets

COUNT = 20000
SHORT_COUNT = 2000
ROUNDS = 5          # batch and loop take turns: a load that comes and goes weighs on both
BATCH_CALLS = 3     # consecutive batch calls a round, the best (the first finds cold caches)


def _best(fn, calls, best=None):
    """fn's best time over calls consecutive calls (or best, if that was better) and its result."""
    for _ in range(calls):
        t0 = time.perf_counter()
        result = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, result


def _loop(arm, targets, current):
    n = arm.n
    status = np.empty(len(targets), dtype=np.int8)
    q = np.full((len(targets), n), np.nan)
    out = [0.0] * n
    ik = arm.ik
    for i, t in enumerate(targets.tolist()):
        st = ik(t, out, current)
        status[i] = st
        if st <= 1:
            q[i] = out
    return status, q


def run_arm(board_name, count, seed):
    board = bench_targets.load(board_name)
    arm = board.solver
    targets = bench_targets.mixed(arm, count, seed)
    current = list(arm.home)
    t_batch = t_loop = None
    for _ in range(ROUNDS):
        t_batch, (st_b, q_b, _) = _best(lambda: batch.ik(arm, targets, current), BATCH_CALLS, t_batch)
        t_loop, (st_l, q_l) = _best(lambda: _loop(arm, targets, current), 1, t_loop)
    both = (st_b <= 1) & (st_l <= 1)
    return {
        "targets": count,
        "batch_per_s": count / t_batch,
        "loop_per_s": count / t_loop,
        "speedup": t_loop / t_batch,
        "status_mismatches": int(np.sum(st_b != st_l)),
        "max_angle_diff_rad": float(np.max(np.abs(q_b[both] - q_l[both]))) if np.any(both) else 0.0,
        "solved_fraction": float(np.mean(st_l <= 1)),
    }


def run(short=False):
    count = SHORT_COUNT if short else COUNT
    return {"planar": run_arm(bench_targets.PLANAR, count, 11),
            "arm5": run_arm(bench_targets.ARM5, count, 12),
            # Which arctan2 the 5-joint path used: numpy's own is vectorised only
            # with AVX-512; without, armctl.batch_math.atan2 beats its libm calls.
            "arctan2": "armctl.batch_math.atan2" if batch_math.OWN_ATAN2 else "numpy"}
