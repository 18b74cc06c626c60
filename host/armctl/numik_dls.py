# SPDX-License-Identifier: MIT
"""armctl.numik's "dls" method: damped least squares (Levenberg-Marquardt) over a
batch of targets in numpy, and target by target in plain floats (PlainDLS) for
batches too small for numpy.
"""

import math
from collections import deque

import numpy as np

from armctl import chain as chain_mod
from armctl.numik_result import DIRECTION_WEIGHT_MM, STALL_MM, STALL_WINDOW, errors, residual_cost

# Levenberg-Marquardt damping, λ² in mm²: start, shrink/grow factors, bounds.
LAMBDA2_START = 100.0
LAMBDA2_SHRINK = 0.2
LAMBDA2_GROW = 10.0
LAMBDA2_MIN = 1e-6
LAMBDA2_MAX = 1e9

DLS_MAX_ITER = 100

# A joint within this (rad) of a limit is on it.
AT_LIMIT = 1e-7


def _residual_system(chain, q, pos, dirs):
    """Weighted residual e (B, m), task Jacobian (B, m, n), tip and direction errors."""
    jac, tip, direction = chain.jacobian(q)
    e = pos - tip
    jt = jac[:, :3, :]
    if dirs is not None:
        # The tool direction d turns as ω × d, so joint i moves it by axis_i × d.
        jd = np.cross(jac[:, 3:, :], direction[:, :, None], axis=1)
        e = np.concatenate([e, DIRECTION_WEIGHT_MM * (dirs - direction)], axis=1)
        jt = np.concatenate([jt, DIRECTION_WEIGHT_MM * jd], axis=1)
    e_mm, e_rad = errors(tip, direction, pos, dirs)
    return e, jt, e_mm, e_rad


def _dls_step(jt, e, lam2, free):
    """Damped least-squares step (B, n) with the columns of blocked joints removed."""
    jf = jt * free[:, None, :]
    n = jt.shape[2]
    a = np.swapaxes(jf, 1, 2) @ jf + lam2[:, None, None] * np.eye(n)
    g = np.einsum("bmn,bm->bn", jf, e)
    return np.linalg.solve(a, g[:, :, None])[:, :, 0]


def run_dls(chain, q, pos, dirs, tol_mm, tol_rad, max_iter):
    """DLS from poses q (B, n) on every target; tol_mm is per target (B,).

    Returns q, tip error, direction error, iterations, and which runs were
    still improving when the iteration cap stopped them.
    """
    count = len(q)
    q = q.copy()
    lam2 = np.full(count, LAMBDA2_START)
    cost, e_mm, e_rad = residual_cost(chain, q, pos, dirs)
    iters = np.zeros(count, dtype=int)
    history = deque([cost.copy()], maxlen=STALL_WINDOW + 1)
    active = ~((e_mm <= tol_mm) & (e_rad <= tol_rad))
    for it in range(max_iter):
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            break
        qa = q[idx]
        d_sub = None if dirs is None else dirs[idx]
        e, jt, _, _ = _residual_system(chain, qa, pos[idx], d_sub)
        free = np.ones_like(qa)
        if chain.held:
            free[:, list(chain.held)] = 0.0
        step = _dls_step(jt, e, lam2[idx], free)
        # A joint on a limit that the step pushes outward leaves the step,
        # so the others do the work instead of the clip eating it.
        blocked = ((qa <= chain.lo + AT_LIMIT) & (step < 0)) | ((qa >= chain.hi - AT_LIMIT) & (step > 0))
        if blocked.any():
            rows = blocked.any(axis=1)
            free[blocked] = 0.0
            step[rows] = _dls_step(jt[rows], e[rows], lam2[idx][rows], free[rows])
        trial = np.clip(qa + step, chain.lo, chain.hi)
        t_cost, t_mm, t_rad = residual_cost(chain, trial, pos[idx], d_sub)
        better = t_cost < cost[idx]
        kept = idx[better]
        q[kept] = trial[better]
        cost[kept] = t_cost[better]
        e_mm[kept] = t_mm[better]
        e_rad[kept] = t_rad[better]
        lam2[idx] = np.where(better, np.maximum(lam2[idx] * LAMBDA2_SHRINK, LAMBDA2_MIN),
                             lam2[idx] * LAMBDA2_GROW)
        iters[idx] += 1
        history.append(cost.copy())
        done = (e_mm <= tol_mm) & (e_rad <= tol_rad)
        done |= lam2 >= LAMBDA2_MAX
        if it >= STALL_WINDOW:
            done |= history[0] - cost < STALL_MM
        active &= ~done
    return q, e_mm, e_rad, iters, active


class PlainDLS:
    """DLS on one target in plain floats: run_dls for batches too small for numpy.

    numpy costs about a microsecond per call whatever the array size; one
    5-joint iteration makes dozens of calls on 3-vectors, so for one target
    plain floats are ~10x faster (docs/BENCHMARKS.md, section 3). The FK is
    the firmware's own (armfw.chain.ChainSolver, armctl.chain.plain_solver:
    tip, tool direction, world joint origins and axes). The same
    algorithm as run_dls: the Jacobian is analytic (axis_i x lever_i, and
    axis_i x d for the tool direction), JᵀJ and Jᵀe are built once per
    accepted pose and reused while a rejected step only raises λ, and every
    buffer is allocated once per chain.
    """

    def __init__(self, chain):
        n = chain.n
        self.n = n
        self.kinematics = chain_mod.plain_solver(chain)
        self.tip = [0.0] * 3
        self.lo = [float(v) for v in chain.lo]
        self.hi = [float(v) for v in chain.hi]
        self.jac = [0.0] * (6 * n)     # column i at 6 i: tip rows, then weighted direction rows
        self.jtj = [0.0] * (n * n)
        self.jte = [0.0] * n
        self.a = [0.0] * (n * n)
        self.step = [0.0] * n
        self.trial = [0.0] * n
        self.free = [True] * n
        self.held = chain.held

    @staticmethod
    def _miss(tip, direction, pos, dirs):
        """(weighted cost, tip miss mm, direction miss rad) of an FK's tip and tool direction."""
        ex, ey, ez = pos[0] - tip[0], pos[1] - tip[1], pos[2] - tip[2]
        e_mm = math.sqrt(ex * ex + ey * ey + ez * ez)
        if dirs is None:
            return e_mm, e_mm, 0.0
        cx, cy, cz = dirs[0] - direction[0], dirs[1] - direction[1], dirs[2] - direction[2]
        chord = math.sqrt(cx * cx + cy * cy + cz * cz)
        return (math.hypot(e_mm, DIRECTION_WEIGHT_MM * chord), e_mm,
                2.0 * math.asin(min(chord / 2.0, 1.0)))

    def _normal_equations(self, pos, dirs):
        """JᵀJ and Jᵀe at the pose whose FK the kinematics buffers hold."""
        n = self.n
        jac, jtj, jte = self.jac, self.jtj, self.jte
        kinematics = self.kinematics
        origins, axes = kinematics.origins, kinematics.joint_axes
        tx, ty, tz = self.tip
        dx, dy, dz = kinematics.direction
        rows = 3 if dirs is None else 6
        e = [pos[0] - tx, pos[1] - ty, pos[2] - tz, 0.0, 0.0, 0.0]
        if dirs is not None:
            w = DIRECTION_WEIGHT_MM
            e[3], e[4], e[5] = w * (dirs[0] - dx), w * (dirs[1] - dy), w * (dirs[2] - dz)
        for i in range(n):
            k = 3 * i
            ax, ay, az = axes[k], axes[k + 1], axes[k + 2]
            lx, ly, lz = tx - origins[k], ty - origins[k + 1], tz - origins[k + 2]
            c = 6 * i
            jac[c] = ay * lz - az * ly
            jac[c + 1] = az * lx - ax * lz
            jac[c + 2] = ax * ly - ay * lx
            if dirs is not None:
                jac[c + 3] = w * (ay * dz - az * dy)
                jac[c + 4] = w * (az * dx - ax * dz)
                jac[c + 5] = w * (ax * dy - ay * dx)
        for i in range(n):
            ci = 6 * i
            total = 0.0
            for r in range(rows):
                total += jac[ci + r] * e[r]
            jte[i] = total
            for j in range(i + 1):
                cj = 6 * j
                total = 0.0
                for r in range(rows):
                    total += jac[ci + r] * jac[cj + r]
                jtj[i * n + j] = jtj[j * n + i] = total

    def _step(self, lam2):
        """step = (JᵀJ + λ²I)⁻¹ Jᵀe over the free joints (Cholesky); blocked joints get 0."""
        n = self.n
        a, step, free, jtj, jte = self.a, self.step, self.free, self.jtj, self.jte
        for i in range(n):
            for j in range(i + 1):
                v = jtj[i * n + j] if free[i] and free[j] else 0.0
                a[i * n + j] = v
            a[i * n + i] += lam2 if free[i] else 1.0
            step[i] = jte[i] if free[i] else 0.0
        for j in range(n):
            d = a[j * n + j]
            for k in range(j):
                d -= a[j * n + k] * a[j * n + k]
            d = math.sqrt(d)
            a[j * n + j] = d
            for i in range(j + 1, n):
                v = a[i * n + j]
                for k in range(j):
                    v -= a[i * n + k] * a[j * n + k]
                a[i * n + j] = v / d
        for i in range(n):
            v = step[i]
            for k in range(i):
                v -= a[i * n + k] * step[k]
            step[i] = v / a[i * n + i]
        for i in range(n - 1, -1, -1):
            v = step[i]
            for k in range(i + 1, n):
                v -= a[k * n + i] * step[k]
            step[i] = v / a[i * n + i]

    def run(self, q, pos, dirs, tol_mm, tol_rad, max_iter):
        """DLS from pose q (list) to one target; returns (q, tip miss, direction miss, iterations, capped)."""
        n, lo, hi, free, step = self.n, self.lo, self.hi, self.free, self.step
        held = self.held
        fk = self.kinematics.fk
        tip, direction = self.tip, self.kinematics.direction
        q = list(q)
        trial = self.trial
        fk(q, tip)
        cost, e_mm, e_rad = self._miss(tip, direction, pos, dirs)
        history = deque([cost], maxlen=STALL_WINDOW + 1)
        lam2 = LAMBDA2_START
        iters = 0
        fresh = True        # the kinematics buffers hold q's frames
        while not (e_mm <= tol_mm and e_rad <= tol_rad):
            if iters == max_iter:
                return q, e_mm, e_rad, iters, True
            if fresh:
                self._normal_equations(pos, dirs)
                fresh = False
            for i in range(n):
                free[i] = i not in held
            self._step(lam2)
            # A joint on a limit that the step pushes outward leaves the step,
            # so the others do the work instead of the clip eating it.
            blocked = False
            for i in range(n):
                if (q[i] <= lo[i] + AT_LIMIT and step[i] < 0) or (q[i] >= hi[i] - AT_LIMIT and step[i] > 0):
                    free[i] = False
                    blocked = True
            if blocked:
                self._step(lam2)
            for i in range(n):
                v = q[i] + step[i]
                trial[i] = lo[i] if v < lo[i] else hi[i] if v > hi[i] else v
            fk(trial, tip)
            t_cost, t_mm, t_rad = self._miss(tip, direction, pos, dirs)
            iters += 1
            if t_cost < cost:
                q, trial = trial, q
                self.trial = trial
                cost, e_mm, e_rad = t_cost, t_mm, t_rad
                lam2 = max(lam2 * LAMBDA2_SHRINK, LAMBDA2_MIN)
                fresh = True
            else:
                lam2 *= LAMBDA2_GROW
                if lam2 >= LAMBDA2_MAX:
                    break
            history.append(cost)
            if iters > STALL_WINDOW and history[0] - cost < STALL_MM:
                break
        return q, e_mm, e_rad, iters, False


def run_dls_plain(chain, q, pos, dirs, tol_mm, tol_rad, max_iter):
    """run_dls target by target in plain floats (same arguments and returns)."""
    solver = chain.__dict__.get("_plain_dls")
    if solver is None:
        solver = chain._plain_dls = PlainDLS(chain)
    count = len(q)
    q_out = np.empty_like(q)
    e_mm = np.empty(count)
    e_rad = np.empty(count)
    iters = np.zeros(count, dtype=int)
    capped = np.zeros(count, dtype=bool)
    pos_rows = pos.tolist()
    dir_rows = None if dirs is None else dirs.tolist()
    tols = np.broadcast_to(tol_mm, (count,)).tolist()
    for b, start in enumerate(q.tolist()):
        qb, e_mm[b], e_rad[b], iters[b], capped[b] = solver.run(
            start, pos_rows[b], None if dir_rows is None else dir_rows[b], tols[b], tol_rad, max_iter)
        q_out[b] = qb
    return q_out, e_mm, e_rad, iters, capped
