# SPDX-License-Identifier: MIT
"""Numerical inverse kinematics: the host's fallback where the firmware has no closed form.

Two solvers over an armctl.chain.Chain, both batched over many targets in numpy:

- "dls": damped least squares (Levenberg-Marquardt): dq = (JᵀJ + λ²I)⁻¹ Jᵀe,
  with λ adapted per target (a step that lowers the error is kept and λ
  shrinks; one that does not is thrown away and λ grows). The damping keeps
  the step finite where the Jacobian collapses (stretched or folded arm).
- "ccd": cyclic coordinate descent: from the last joint back to the base, turn
  each joint to the angle that best points the tip at the target (closed form:
  the objective is A·cosδ + B·sinδ), clamped to the joint's limits.

Joint limits hold always: every iterate is inside them (steps are clipped, and
a joint pressed against a limit drops out of the DLS step).

A board with a tool offset (arm.tool_mm) gives a chain whose tool is offset
too; the wrist roll then moves the tip, and the solvers hold it at the seed's
roll as the firmware holds it at the current one (Chain.held), reading an arm5
pitch in the plane the closed form's answer faces.

Modes: "position" (tool tip only; pitch or tool direction free) and "pitch"
(tip plus tool direction). Targets follow armfw where the chain comes from a
board: planar (x, y) mm; arm5 (x, y, z) mm in position mode, (x, y, z, pitch
rad) in pitch mode (pitch from vertical, in the vertical plane through the
target, as armfw.kinematics.Arm5Solver). A plain chain takes (x, y, z) or
(x, y, z, dx, dy, dz) with a unit tool direction.

Statuses are armfw.status's. A target that is not reached within tolerance is
never OK: the answer is the nearest pose found, with TOO_FAR (beyond the
chain's reach), TOO_CLOSE (inside the hole it cannot fold into), JOINT_LIMIT
(only where the firmware's closed form proves every exact solution breaks a
limit) or NOT_CONVERGED (the method stopped short and nothing proves the
target out of reach: its own failure, even when it stopped against a limit).
TOO_FAR and TOO_CLOSE are decided from the geometry before solving, with the
firmware's margin, so a target the analytic solver calls TOO_FAR is never OK
here however small the miss. The numerical solvers do not flag SINGULAR
poses; armfw's solver does.

Seeds: where the chain mirrors a firmware arm (planar; arm5 in pitch mode, or
in position mode at the seed's tool pitch) the first attempt starts from the
closed form's minimum-motion answer, so DLS only polishes it; else from the
given seed (default home); then restarts from random in-limit poses for
targets still missed. solve_batch(..., accept=f) takes a per-solution check
(e.g. keep-out zones): a pose it refuses is not a solution.

Speed: up to PLAIN_MAX targets DLS runs target by target in plain floats
(on the firmware's chain FK, armfw.chain.ChainSolver, built by
armctl.chain.plain_solver), more run vectorised over targets in numpy. DLS is
the workhorse (position and pitch mode); CCD is reliable in position mode but
crawls near full stretch and in pitch mode (where it reaches about 82% of
reachable arm5 targets from home), which is why `armctl bench` leaves it out
by default.
"""

import math
from collections import deque

import numpy as np

from armfw import status as fw_status
from armfw import twolink
from armfw.kinematics import AXIS_EPS
from armfw.status import OK, SINGULAR, TOO_FAR, TOO_CLOSE, JOINT_LIMIT, BAD_INPUT, COLLISION, NOT_CONVERGED
from armctl import batch
from armctl import chain as chain_mod

STATUS_NAMES = fw_status.NAMES

POSITION = "position"
PITCH = "pitch"
MODES = (POSITION, PITCH)
METHODS = ("dls", "ccd")

TOL_MM = 0.01          # position tolerance
TOL_RAD = 1e-4         # tool direction tolerance (~0.006 degrees)

# Weight (mm per unit of direction error) that makes direction and position
# errors comparable in one residual: 1 rad of tool tilt counts like 100 mm.
DIRECTION_WEIGHT_MM = 100.0

# Levenberg-Marquardt damping, λ² in mm²: start, shrink/grow factors, bounds.
LAMBDA2_START = 100.0
LAMBDA2_SHRINK = 0.2
LAMBDA2_GROW = 10.0
LAMBDA2_MIN = 1e-6
LAMBDA2_MAX = 1e9

DLS_MAX_ITER = 100
CCD_MAX_SWEEPS = 1000
RESTARTS = 10
# Each restart starts from the best of this many random in-limit poses.
RESTART_POOL = 64

# A run whose error fell by less than this (mm) over STALL_WINDOW iterations is done.
STALL_MM = 1e-7
STALL_WINDOW = 10

# A joint within this (rad) of a limit is on it.
AT_LIMIT = 1e-7

# Targets with a coordinate beyond this (mm) are TOO_FAR without solving.
ABSURD_MM = 1e6

# Up to this many targets DLS runs target by target in plain floats; more run
# vectorised over targets in numpy (the crossover measured in docs/BENCHMARKS.md).
PLAIN_MAX = 16

# Added to the score of a pose the acceptance check refuses (mm).
REFUSED_PENALTY = 1e12



def status_name(code):
    """Name of a status code (armfw.status)."""
    return STATUS_NAMES[int(code)]


def solved(code):
    """True when the status carries joint angles that reach the target."""
    return fw_status.solved(int(code))


class Result:
    """One solve: q (radians, numpy array), status (code), error_mm (tip miss),
    angle_error_rad (tool direction miss, 0 in position mode), iterations
    (DLS iterations or CCD sweeps, restarts included), method, mode, refused
    (the best pose found was refused by the acceptance check)."""

    def __init__(self, q, status, error_mm, angle_error_rad, iterations, method, mode, refused=False):
        self.q = q
        self.refused = bool(refused)
        self.status = int(status)
        self.error_mm = float(error_mm)
        self.angle_error_rad = float(angle_error_rad)
        self.iterations = int(iterations)
        self.method = method
        self.mode = mode

    @property
    def name(self):
        return status_name(self.status)

    @property
    def ok(self):
        return solved(self.status)

    def __repr__(self):
        return "Result(%s, q_deg=%s, error_mm=%.4g, iterations=%d, %s/%s)" % (
            self.name, np.round(np.degrees(self.q), 3).tolist(), self.error_mm,
            self.iterations, self.method, self.mode)


class Batch:
    """Many solves at once: arrays q (B, n), status (B,), error_mm (B,),
    angle_error_rad (B,), iterations (B,), refused (B,): the best pose found
    was refused by the acceptance check."""

    def __init__(self, q, status, error_mm, angle_error_rad, iterations, method, mode, refused=None):
        self.q = q
        self.refused = np.zeros(len(status), dtype=bool) if refused is None else refused
        self.status = status
        self.error_mm = error_mm
        self.angle_error_rad = angle_error_rad
        self.iterations = iterations
        self.method = method
        self.mode = mode

    def __len__(self):
        return len(self.status)

    def __getitem__(self, i):
        return Result(self.q[i], self.status[i], self.error_mm[i], self.angle_error_rad[i],
                      self.iterations[i], self.method, self.mode, self.refused[i])

    @property
    def ok(self):
        return self.status <= fw_status.SINGULAR


def as_chain(board_or_chain):
    """A Chain from a Chain, an armfw Board or an armfw arm."""
    if isinstance(board_or_chain, chain_mod.Chain):
        return board_or_chain
    return chain_mod.from_board(board_or_chain)


def default_mode(chain, width):
    """The mode a target of this many numbers asks for."""
    if chain.kind == "arm5":
        return PITCH if width == 4 else POSITION
    if chain.kind == "planar":
        return POSITION
    return PITCH if width == 6 else POSITION


def _task(chain, targets, mode, seed):
    """Target positions (B, 3) and tool directions (B, 3) or None; ValueError on a bad width.

    arm5 pitch targets point the tool at the pitch in the plane the base faces:
    atan2(y, x), or with a lateral tool offset b (at the seed's roll) the plane
    turned by asin(b / r), as armfw.kinematics.Arm5Solver faces it.
    """
    yaw = seed[:, 0]
    width = targets.shape[1]
    if chain.kind == "planar":
        if width != 2 or mode != POSITION:
            raise ValueError("planar arm: target is (x, y) mm, position mode only")
        return np.column_stack([targets, np.zeros(len(targets))]), None
    if chain.kind == "arm5":
        if mode == POSITION and width in (3, 4):
            return targets[:, :3].copy(), None
        if mode == PITCH and width == 4:
            x, y, pitch = targets[:, 0], targets[:, 1], targets[:, 3]
            r = np.hypot(x, y)
            az = np.where(r < AXIS_EPS, yaw, np.arctan2(y, x))
            t = getattr(chain.solver, "tool", None) if chain.solver is not None else None
            if t is not None and (t[0] or t[1]):
                lateral = t[0] * np.sin(seed[:, 4]) + t[1] * np.cos(seed[:, 4])
                with np.errstate(invalid="ignore", divide="ignore"):
                    az = az - np.arcsin(np.clip(lateral / np.maximum(r, AXIS_EPS), -1.0, 1.0))
            d = np.column_stack([np.sin(pitch) * np.cos(az), np.sin(pitch) * np.sin(az), np.cos(pitch)])
            return targets[:, :3].copy(), d
        raise ValueError("arm5: target is (x, y, z) mm for position mode, (x, y, z, pitch rad) for pitch mode")
    if mode == POSITION and width in (3, 6):
        return targets[:, :3].copy(), None
    if mode == PITCH and width == 6:
        d = targets[:, 3:6]
        return targets[:, :3].copy(), d / np.linalg.norm(d, axis=1, keepdims=True)
    raise ValueError("chain: target is (x, y, z) mm, plus a tool direction (dx, dy, dz) in pitch mode")


def _errors(tip, direction, pos, dirs):
    """Tip miss (B,) mm and tool direction miss (B,) rad."""
    e_mm = np.linalg.norm(pos - tip, axis=1)
    if dirs is None:
        return e_mm, np.zeros(len(e_mm))
    chord = np.linalg.norm(dirs - direction, axis=1)
    return e_mm, 2.0 * np.arcsin(np.minimum(chord / 2.0, 1.0))


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
    e_mm, e_rad = _errors(tip, direction, pos, dirs)
    return e, jt, e_mm, e_rad


def _cost(chain, q, pos, dirs):
    """Weighted residual norm (B,) and the tip/direction errors, by FK only."""
    _, end = chain.frames(q)
    tip = end[:, :3, 3]
    direction = end[:, :3, :3] @ chain.tool_axis
    e_mm, e_rad = _errors(tip, direction, pos, dirs)
    if dirs is None:
        return e_mm, e_mm, e_rad
    dw = DIRECTION_WEIGHT_MM * np.linalg.norm(dirs - direction, axis=1)
    return np.hypot(e_mm, dw), e_mm, e_rad


def _dls_step(jt, e, lam2, free):
    """Damped least-squares step (B, n) with the columns of blocked joints removed."""
    jf = jt * free[:, None, :]
    n = jt.shape[2]
    a = np.swapaxes(jf, 1, 2) @ jf + lam2[:, None, None] * np.eye(n)
    g = np.einsum("bmn,bm->bn", jf, e)
    return np.linalg.solve(a, g[:, :, None])[:, :, 0]


def _run_dls(chain, q, pos, dirs, tol_mm, tol_rad, max_iter):
    """DLS from poses q (B, n) on every target; tol_mm is per target (B,).

    Returns q, tip error, direction error, iterations, and which runs were
    still improving when the iteration cap stopped them.
    """
    count = len(q)
    q = q.copy()
    lam2 = np.full(count, LAMBDA2_START)
    cost, e_mm, e_rad = _cost(chain, q, pos, dirs)
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
        t_cost, t_mm, t_rad = _cost(chain, trial, pos[idx], d_sub)
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


class _PlainDLS:
    """DLS on one target in plain floats: _run_dls for batches too small for numpy.

    numpy costs about a microsecond per call whatever the array size; one
    5-joint iteration makes dozens of calls on 3-vectors, so for one target
    plain floats are ~10x faster (docs/BENCHMARKS.md, section 3). The FK is
    the firmware's own (armfw.chain.ChainSolver, armctl.chain.plain_solver:
    tip, tool direction, world joint origins and axes). The same
    algorithm as _run_dls: the Jacobian is analytic (axis_i x lever_i, and
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


def _run_dls_plain(chain, q, pos, dirs, tol_mm, tol_rad, max_iter):
    """_run_dls target by target in plain floats (same arguments and returns)."""
    solver = chain.__dict__.get("_plain_dls")
    if solver is None:
        solver = chain._plain_dls = _PlainDLS(chain)
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


def _run_ccd(chain, q, pos, dirs, tol_mm, tol_rad, max_sweeps):
    """CCD from poses q (B, n) on every target; returns as _run_dls (sweeps for iterations)."""
    count = len(q)
    q = q.copy()
    cost, e_mm, e_rad = _cost(chain, q, pos, dirs)
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
        c, m, r = _cost(chain, qa, target, None if dirs is None else dirs[idx])
        cost[idx], e_mm[idx], e_rad[idx] = c, m, r
        sweeps[idx] += 1
        history.append(cost.copy())
        done = (e_mm <= tol_mm) & (e_rad <= tol_rad)
        if it >= STALL_WINDOW:
            done |= history[0] - cost < STALL_MM
        active &= ~done
    return q, e_mm, e_rad, sweeps, active


def _out_of_reach(chain, pos, dirs):
    """Geometric verdicts per target, before any solving: too far, too close, floor.

    Beyond the chain's reach (or, with the tool direction given and the tool
    along it, the wrist beyond the arm's reach) is TOO_FAR; inside the hole a
    fully folded chain still cannot reach is TOO_CLOSE. The margin is the
    firmware's (twolink.REACH_EPS of the reach), so a target the analytic
    solver calls TOO_FAR is never OK here, however small the miss. floor: the
    least tip miss (mm) the geometry allows, 0 where the tip can reach.
    """
    links = chain.links
    margin = twolink.REACH_EPS * chain.reach
    dist = np.linalg.norm(pos - chain.anchor, axis=1)
    too_far = dist > chain.reach + margin
    inner = 2.0 * max(links) - chain.reach
    too_close = dist < inner - margin
    floor = np.maximum(0.0, np.maximum(dist - chain.reach, inner - dist))
    tool_len = links[-1]
    if dirs is not None and len(links) > 1 and _tool_along_axis(chain):
        wrist = pos - tool_len * dirs
        dw = np.linalg.norm(wrist - chain.anchor, axis=1)
        arm = chain.reach - tool_len
        too_far |= dw > arm + margin
        too_close |= dw < (2.0 * max(links[:-1]) - arm) - margin
    return too_far, too_close, floor


def _classify(e_mm, e_rad, tol_mm, tol_rad, too_far, too_close, verdict, refused):
    """Status per target: OK when within tolerance, accepted and not out of reach, else the honest reason.

    A numerical method that stops short proves nothing about the target: only
    the geometry (TOO_FAR, TOO_CLOSE) or the closed form's verdict (JOINT_LIMIT:
    every exact solution breaks a limit) says why; any other miss is
    NOT_CONVERGED, the method's own failure, even when it stopped against a limit.
    """
    status = np.full(len(e_mm), NOT_CONVERGED)
    reached = (e_mm <= tol_mm) & (e_rad <= tol_rad) & ~refused
    status[reached] = OK
    if verdict is not None:
        status[~reached & ~refused & (verdict == JOINT_LIMIT)] = JOINT_LIMIT
    status[too_close] = TOO_CLOSE
    status[too_far] = TOO_FAR
    return status


def _tool_along_axis(chain):
    """True when the tool offset points along the tool direction, so the wrist point is fixed too."""
    offset = chain.tool[:3, 3]
    length = np.linalg.norm(offset)
    return length > 0 and np.allclose(offset / length, chain.tool[:3, :3] @ chain.tool_axis)


def solve_batch(board_or_chain, targets, mode=None, seed=None, method="dls", restarts=RESTARTS,
                tol_mm=TOL_MM, tol_rad=TOL_RAD, max_iter=None, rng=0, analytic_seed=True, accept=None):
    """Solve many targets (B, k) at once; returns a Batch.

    seed: a pose (n,) or poses (B, n), radians (default: the home pose).
    analytic_seed: where the chain mirrors a firmware arm with a closed form
    (planar; arm5 in pitch mode, or in position mode at the seed's tool
    pitch), the first attempt starts from its minimum-motion answer to the
    seed, and its verdict is the proof behind JOINT_LIMIT; otherwise (or
    False) the first attempt starts at the seed. Then up to `restarts`
    attempts for the targets still missed, each from the random in-limit pose
    (best of RESTART_POOL) nearest the target, keeping the best pose found.
    accept: None or a callable taking poses (M, n) and returning a boolean
    (M,) array: a pose it refuses (e.g. one inside a keep-out zone) is no
    solution, whatever its miss; the target is tried again from other seeds,
    and if no accepted pose reaches it the answer is NOT_CONVERGED with
    Batch.refused set.
    max_iter: DLS iterations or CCD sweeps per attempt. rng: seed or Generator.
    """
    chain = as_chain(board_or_chain)
    zones = getattr(chain.solver, "zones", None)
    accept = _with_zones(accept, zones)
    if method not in METHODS:
        raise ValueError("method must be one of %s, got %r" % (", ".join(METHODS), method))
    targets = np.atleast_2d(np.asarray(targets, dtype=float))
    mode = mode or default_mode(chain, targets.shape[1])
    if mode not in MODES:
        raise ValueError("mode must be one of %s, got %r" % (", ".join(MODES), mode))
    count = len(targets)
    q0 = np.broadcast_to(chain.home if seed is None else np.asarray(seed, dtype=float),
                         (count, chain.n)).copy()
    if not (np.all(np.isfinite(q0)) and np.all(chain.within_limits(q0))):
        raise ValueError("seed must be finite and inside the joint limits")
    good = np.all(np.isfinite(targets), axis=1)
    # Targets a kilometre away (or at 1e300) are answered TOO_FAR from the seed
    # without solving: their squared distances would overflow.
    absurd = good & np.any(np.abs(targets[:, :3]) > ABSURD_MM, axis=1)
    good &= ~absurd
    safe_targets = np.where(good[:, None], targets, 0.0)
    pos, dirs = _task(chain, safe_targets, mode, q0)
    if method == "ccd":
        run = _run_ccd
    else:
        run = _run_dls_plain if count <= PLAIN_MAX else _run_dls
    cap = max_iter or (DLS_MAX_ITER if method == "dls" else CCD_MAX_SWEEPS)
    too_far, too_close, floor = _out_of_reach(chain, pos, dirs)
    verdict, start = None, q0
    if analytic_seed:
        verdict, start = _analytic(chain, safe_targets, pos, mode, q0, good)
        if chain.held and dirs is not None:
            # With a tool offset the pitch is read in the plane the base faces, and
            # facing and leaning back point the tool differently: where the closed form
            # answers, its own pose says which (the firmware's meaning of the target).
            answered = verdict <= SINGULAR
            answered &= verdict >= 0
            if answered.any():
                dirs = dirs.copy()
                dirs[answered] = chain.tool_direction(start[answered])
    # A run is done when it is as near as the geometry allows.
    enough_mm = floor + tol_mm
    q, e_mm, e_rad, iters, capped = run(chain, start, pos, dirs, enough_mm, tol_rad, cap)
    refused = _refused(accept, q, good)
    rng = np.random.default_rng(rng)
    best_cost = _score(e_mm, e_rad, refused)
    retired = ~good
    for _ in range(restarts):
        if method == "ccd":
            # A CCD run still improving at the cap is crawling near full
            # stretch: a new seed would only start its approach over (a DLS
            # run at its cap is crawling along a limit: a new seed helps).
            # Toward a target out of reach CCD stretches as far as it can.
            retired |= capped | too_far | too_close
        missed = np.flatnonzero(~retired & (refused | ~((e_mm <= enough_mm) & (e_rad <= tol_rad))))
        if len(missed) == 0:
            break
        d_sub = None if dirs is None else dirs[missed]
        begin = _restart_poses(chain, pos[missed], d_sub, rng)
        if chain.kind == "arm5":
            begin[:, 4] = q0[missed, 4]     # wrist roll: the user's, not the solver's
        rq, rm, rr, ri, rc = run(chain, begin, pos[missed], d_sub, enough_mm[missed], tol_rad, cap)
        iters[missed] += ri
        capped[missed] = rc
        r_refused = _refused(accept, rq, np.ones(len(missed), dtype=bool))
        score = _score(rm, rr, r_refused)
        better = score < best_cost[missed]
        take = missed[better]
        q[take], e_mm[take], e_rad[take] = rq[better], rm[better], rr[better]
        refused[take] = r_refused[better]
        best_cost[take] = score[better]
    status = _classify(e_mm, e_rad, tol_mm, tol_rad, too_far, too_close, verdict, refused)
    if zones is not None:
        # Zone hook (armfw.zones): a pose on the target with a link in a keep-out
        # zone is no solution, and the reason is the zone, not the method.
        on_target = np.flatnonzero((e_mm <= tol_mm) & (e_rad <= tol_rad) & refused & ~too_far & ~too_close)
        for i in on_target:
            if not zones.clear([float(a) for a in q[i]]):
                status[i] = COLLISION
    status[~good] = BAD_INPUT
    status[absurd] = TOO_FAR
    q[~good] = q0[~good]
    e_mm[~good] = np.nan
    e_rad[~good] = np.nan
    if absurd.any():
        with np.errstate(over="ignore"):
            width = min(3, targets.shape[1])
            tip = chain.fk(q0[absurd])[:, :width]
            e_mm[absurd] = np.linalg.norm(targets[absurd, :width] - tip, axis=1)
    return Batch(q, status, e_mm, e_rad, iters, method, mode, refused)


def _with_zones(accept, zones):
    """The acceptance check with the board's keep-out zones added: no pose with a link in a zone is a solution."""
    if zones is None:
        return accept

    def clear(poses):
        ok = np.array([zones.clear([float(a) for a in p]) for p in poses], dtype=bool)
        return ok if accept is None else ok & np.asarray(accept(poses), dtype=bool)
    return clear


def _refused(accept, q, good):
    """Boolean (B,): poses the acceptance check refuses (none without one)."""
    refused = np.zeros(len(q), dtype=bool)
    if accept is not None and good.any():
        refused[good] = ~np.asarray(accept(q[good]), dtype=bool)
    return refused


def _analytic(chain, targets, pos, mode, q0, good):
    """The firmware's closed form where the chain mirrors an arm that has one.

    Returns (verdict (B,) status codes, -1 where it has none; start poses
    (B, n): its minimum-motion answer to the seed, pulled inside the limits
    (the firmware allows LIMIT_EPS past them), or the seed where it has no
    answer). In arm5 position mode it is asked at the seed's tool pitch,
    which gives a start pose but no verdict: another pitch may still reach.
    """
    arm = chain.solver
    count = len(targets)
    verdict = np.full(count, -1)
    if arm is None or chain.kind not in ("planar", "arm5"):
        return verdict, q0
    if chain.kind == "planar":
        asked = targets[:, :2]
    elif mode == PITCH:
        asked = targets
    else:
        asked = np.column_stack([pos, _seed_pitch(chain, q0, pos)])
    if count <= PLAIN_MAX:
        status = np.empty(count, dtype=int)
        answers = q0.copy()
        out = [0.0] * chain.n
        for b, (t, current) in enumerate(zip(asked.tolist(), q0.tolist())):
            status[b] = arm.ik(t, out, current)
            if status[b] <= SINGULAR:
                answers[b] = out
    else:
        status, answers, _ = batch.ik(arm, asked, q0)
        status = status.astype(int)
    solved = good & (status <= SINGULAR)
    start = np.where(solved[:, None], np.clip(answers, chain.lo, chain.hi), q0)
    if chain.kind == "planar" or mode == PITCH:
        verdict = np.where(good, status, -1)
    return verdict, start


def _seed_pitch(chain, q0, pos):
    """The seeds' tool pitch (rad from vertical) in the vertical plane through each target."""
    d = chain.tool_direction(q0)
    az = np.arctan2(pos[:, 1], pos[:, 0])
    return np.arctan2(d[:, 0] * np.cos(az) + d[:, 1] * np.sin(az), d[:, 2])


def _restart_poses(chain, pos, dirs, rng):
    """For each target, the random in-limit pose (of RESTART_POOL) that comes closest to it."""
    count = len(pos)
    pool = chain.random_poses(count * RESTART_POOL, rng).reshape(count, RESTART_POOL, chain.n)
    _, end = chain.frames(pool)
    miss = np.linalg.norm(end[..., :3, 3] - pos[:, None, :], axis=2)
    if dirs is not None:
        miss = np.hypot(miss, DIRECTION_WEIGHT_MM * np.linalg.norm(
            end[..., :3, :3] @ chain.tool_axis - dirs[:, None, :], axis=2))
    return pool[np.arange(count), np.argmin(miss, axis=1)]


def _score(e_mm, e_rad, refused):
    """Weighted miss; a refused pose ranks behind every accepted one."""
    return np.hypot(e_mm, DIRECTION_WEIGHT_MM * e_rad) + np.where(refused, REFUSED_PENALTY, 0.0)


def solve(board_or_chain, target, mode=None, seed=None, method="dls", **options):
    """Solve one target; returns a Result (q radians, status, error_mm, iterations).

    board_or_chain: an armfw Board (or arm) or an armctl.chain.Chain. target:
    see the module doc. mode: "position" or "pitch" (default: what the target
    gives). seed: the current pose, radians (default: home). method: "dls" or
    "ccd". options: as solve_batch. A bad target gives BAD_INPUT, never an
    exception; a bad mode, method or seed raises ValueError.
    """
    target = np.asarray(target, dtype=float).reshape(1, -1)
    return solve_batch(board_or_chain, target, mode=mode, seed=seed, method=method, **options)[0]
