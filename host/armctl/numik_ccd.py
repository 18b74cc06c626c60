# SPDX-License-Identifier: MIT
"""armctl.numik's "ccd" method: cyclic coordinate descent over a batch of targets,
each joint turned in closed form to the angle that best points the tip (and
the tool) at the target, within its limits.
"""

import math
from collections import deque

import numpy as np

from armctl import chain as chain_mod
from armctl.numik_result import DIRECTION_WEIGHT_MM, STALL_MM, STALL_WINDOW, residual_cost

CCD_MAX_SWEEPS = 1000


def _cross(a, b):
    """Cross products of (B, 3) rows (np.cross costs more than the sums here)."""
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                     a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def _best_turn(a, b, q, lo, hi):
    """Joint angles maximising A·cos(x-q) + B·sin(x-q) over x in [lo, hi] (all arrays)."""
    delta = np.arctan2(b, a)
    best = np.full_like(q, np.nan)
    for k in (0.0, -2.0 * math.pi, 2.0 * math.pi):
        cand = q + delta + k
        fits = (cand >= lo) & (cand <= hi) & (np.isnan(best) | (np.abs(cand - q) < np.abs(best - q)))
        best = np.where(fits, cand, best)
    # The unconstrained best is outside the limits: a sinusoid with its peak
    # outside an interval is largest at one of the interval's ends.
    f_lo = a * np.cos(lo - q) + b * np.sin(lo - q)
    f_hi = a * np.cos(hi - q) + b * np.sin(hi - q)
    edge = np.where(f_lo >= f_hi, lo, hi)
    return np.where(np.isnan(best), edge, best)


def run_ccd(chain, q, pos, dirs, tol_mm, tol_rad, max_sweeps):
    """CCD from poses q (B, n) on every target; returns as run_dls (sweeps for iterations)."""
    count = len(q)
    q = q.copy()
    cost, e_mm, e_rad = residual_cost(chain, q, pos, dirs)
    sweeps = np.zeros(count, dtype=int)
    history = deque([cost.copy()], maxlen=STALL_WINDOW + 1)
    active = ~((e_mm <= tol_mm) & (e_rad <= tol_rad))
    w2 = DIRECTION_WEIGHT_MM ** 2
    for it in range(max_sweeps):
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            break
        qa = q[idx]
        target = pos[idx]
        joints, end = chain.frames(qa)
        tip = end[:, :3, 3]
        direction = end[:, :3, :3] @ chain.tool_axis
        axes = np.einsum("bnij,nj->bni", joints[:, :, :3, :3], chain.axes)
        origins = joints[:, :, :3, 3]
        for j in range(chain.n - 1, -1, -1):
            ax = axes[:, j]
            o = origins[:, j]
            # Turning by δ maps u to u∥ + cosδ·u⊥ + sinδ·(a × u); the dot
            # product with the wanted vector v is then C + A·cosδ + B·sinδ.
            u = tip - o
            v = target - o
            a = np.sum(v * u, axis=1) - np.sum(ax * u, axis=1) * np.sum(ax * v, axis=1)
            b = np.sum(v * _cross(ax, u), axis=1)
            if dirs is not None:
                dv = dirs[idx]
                a = a + w2 * (np.sum(dv * direction, axis=1)
                              - np.sum(ax * direction, axis=1) * np.sum(ax * dv, axis=1))
                b = b + w2 * np.sum(dv * _cross(ax, direction), axis=1)
            # No lever (the tip on this joint's axis): the joint cannot help.
            scale = np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1) + (w2 if dirs is not None else 0.0)
            idle = np.hypot(a, b) <= 1e-12 * (scale + 1e-300)
            new = _best_turn(a, b, qa[:, j], chain.lo[j], chain.hi[j])
            new = np.where(idle | (j in chain.held), qa[:, j], new)
            turn = new - qa[:, j]
            qa[:, j] = new
            tip = chain_mod.rotate_about(tip, ax, o, turn)
            if dirs is not None:
                direction = chain_mod.rotate_about(direction, ax, np.zeros_like(o), turn)
        q[idx] = qa
        c, m, r = residual_cost(chain, qa, target, None if dirs is None else dirs[idx])
        cost[idx], e_mm[idx], e_rad[idx] = c, m, r
        sweeps[idx] += 1
        history.append(cost.copy())
        done = (e_mm <= tol_mm) & (e_rad <= tol_rad)
        if it >= STALL_WINDOW:
            done |= history[0] - cost < STALL_MM
        active &= ~done
    return q, e_mm, e_rad, sweeps, active
