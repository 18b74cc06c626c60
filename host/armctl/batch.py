# SPDX-License-Identifier: MIT
"""Analytic IK over whole arrays of targets: a numpy twin of armfw's solver.

Allowed as a second implementation only because speed needs it: planning a
dense grid or a long path target by target through armfw costs tens of
microseconds each in CPython, one numpy pass costs well under one.
It follows armfw.twolink.solve and armfw.kinematics (PlanarSolver, Arm5Solver) step
for step: the same candidates in the same order, the same reachability
margin, singular threshold, limit fitting by whole turns, branch rules and
statuses, with every constant imported from armfw. tests/test_batch.py holds
it to the firmware's answers on dense random grids and the shared vectors.

    status, q, elbow = batch.ik(board_or_solver, targets, current=None, rule="min")

targets: (N, 2) planar (x, y) mm, or (N, 4) arm5 (x, y, z mm, pitch rad).
current: None, one pose (n,) or one per target (N, n), radians.
Returns status (N,) int codes of armfw.status, q (N, n) radians (NaN where
the status carries no solution) and elbow (N,) armfw UP/DOWN (0 where none).
"""

import numpy as np

from armfw import kinematics, twolink
from armfw.kinematics import AXIS_EPS, LIMIT_EPS, TWO_PI, UP, DOWN, MIN_MOTION, PREFER_UP, PREFER_DOWN
from armfw.status import OK, SINGULAR, TOO_FAR, TOO_CLOSE, JOINT_LIMIT, BAD_INPUT

# The rule penalty of armfw.kinematics.Solver._choose: a non-preferred branch
# costs more than any real motion.
RULE_PENALTY = 1e9


def solve_twolink(l1, l2, x, y, elbow):
    """armfw.twolink.solve over arrays: returns (status, t1, t2), NaN where not solved.

    x, y: arrays (mm); elbow: +1 or -1 (scalar or array), the sign of sin(t2).
    """
    x, y, elbow = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float), np.asarray(elbow))
    status = np.full(x.shape, OK, dtype=np.int8)
    finite = np.isfinite(x) & np.isfinite(y)
    status[~finite] = BAD_INPUT
    with np.errstate(invalid="ignore", over="ignore"):
        r2 = x * x + y * y
        r = np.sqrt(r2)
        margin = twolink.REACH_EPS * (l1 + l2)
        too_far = finite & (r > l1 + l2 + margin)
        too_close = finite & ~too_far & (r < abs(l1 - l2) - margin)
        status[too_far] = TOO_FAR
        status[too_close] = TOO_CLOSE
        c2 = np.clip((r2 - l1 * l1 - l2 * l2) / (2.0 * l1 * l2), -1.0, 1.0)
        s2 = np.sqrt(1.0 - c2 * c2)
        s2 = np.where(elbow < 0, -s2, s2)
        t1 = np.arctan2(y, x) - np.arctan2(l2 * s2, l1 + l2 * c2)
        t2 = np.arctan2(s2, c2)
    ok = status == OK
    status[ok & (s2 < twolink.SINGULAR_SIN) & (s2 > -twolink.SINGULAR_SIN)] = SINGULAR
    solved = status <= SINGULAR
    return status, np.where(solved, t1, np.nan), np.where(solved, t2, np.nan)


def fit_angles(q, lo, hi):
    """armfw.kinematics.fit_angle over arrays: q moved by whole turns into [lo, hi].

    Returns (q fitted, fits) where fits is False where no turn fits.
    """
    with np.errstate(invalid="ignore"):
        above = q > hi + LIMIT_EPS
        q = np.where(above, q - TWO_PI * np.floor((q - hi - LIMIT_EPS) / TWO_PI + 1.0), q)
        below = q < lo - LIMIT_EPS
        q = np.where(below, q + TWO_PI * np.floor((lo - LIMIT_EPS - q) / TWO_PI + 1.0), q)
        fits = ~(q > hi + LIMIT_EPS)
    return q, fits


def _fit_limits(arm, q, status):
    """Fit every joint of candidate poses q (N, n); JOINT_LIMIT where one cannot fit."""
    all_fit = np.ones(q.shape[0], dtype=bool)
    for i in range(arm.n):
        q[:, i], fits = fit_angles(q[:, i], arm.lo[i], arm.hi[i])
        all_fit &= fits
    solved = status <= SINGULAR
    status[solved & ~all_fit] = JOINT_LIMIT


def _planar_candidates(arm, targets, current):
    candidates = []
    for elbow in (UP, DOWN):
        # armfw.kinematics.PlanarSolver: elbow up is the branch with t2 <= 0.
        st, t1, t2 = solve_twolink(arm.l1, arm.l2, targets[:, 0], targets[:, 1], -elbow)
        q = np.stack([t1, t2], axis=1)
        _fit_limits(arm, q, st)
        candidates.append((st, q, elbow))
    return candidates


def _arm5_candidates(arm, targets, current):
    x, y, z, pitch = targets.T
    pitch = np.arctan2(np.sin(pitch), np.cos(pitch))     # whole turns off first, as armfw
    n = len(targets)
    with np.errstate(over="ignore"):
        r = np.sqrt(x * x + y * y)
    if current is None:
        yaw_rest = np.zeros(n)
        roll = np.zeros(n)
    else:
        yaw_rest = current[:, 0]
        roll = current[:, 4]
    yaw = np.where(r < AXIS_EPS, yaw_rest, np.arctan2(y, x))
    turned = np.where(yaw > 0, yaw - np.pi, yaw + np.pi)
    candidates = []
    for facing in (True, False):
        for elbow in (UP, DOWN):
            if facing:
                q0, rr, ph, sign = yaw, r, pitch, elbow
            else:
                # The base turned half a turn, leaning back over itself.
                q0, rr, ph, sign = turned, -r, -pitch, -elbow
            rw = rr - arm.l3 * np.sin(ph)
            zw = z - arm.base - arm.l3 * np.cos(ph)
            st, t1, t2 = solve_twolink(arm.l1, arm.l2, zw, rw, sign)
            st[np.isinf(r)] = TOO_FAR   # x*x + y*y overflowed: far, not bad input (as armfw)
            q = np.stack([q0, t1, t2, ph - t1 - t2, roll], axis=1)
            _fit_limits(arm, q, st)
            candidates.append((st, q, elbow))
    return candidates


def _rule(rule):
    if isinstance(rule, str):
        return kinematics.rule_code(rule)
    if rule not in (MIN_MOTION, PREFER_UP, PREFER_DOWN):
        raise ValueError("rule: %r is not min/up/down" % (rule,))
    return rule


def ik(board_or_solver, targets, current=None, rule=MIN_MOTION):
    """Solve every target as armfw's solver.ik(target, out, current, rule) would.

    Returns (status (N,) int8, q (N, n) float radians with NaN rows where not
    solved, elbow (N,) int8: UP, DOWN or 0 where not solved).
    """
    arm = getattr(board_or_solver, "solver", board_or_solver)
    rule = _rule(rule)
    targets = np.asarray(targets, dtype=float)
    if targets.ndim != 2 or targets.shape[1] != len(arm.targets):
        raise ValueError("targets: shape (N, %d) for a %s arm, got %s"
                         % (len(arm.targets), arm.kind, targets.shape))
    n_targets = targets.shape[0]
    bad = ~np.all(np.isfinite(targets), axis=1)
    if current is not None:
        current = np.asarray(current, dtype=float)
        if current.ndim == 1:
            current = np.broadcast_to(current, (n_targets,) + current.shape)
        if current.shape != (n_targets, arm.n):
            raise ValueError("current: shape (%d,) or (N, %d), got %s" % (arm.n, arm.n, current.shape))
        bad |= ~np.all(np.isfinite(current), axis=1)
    safe_targets = np.where(bad[:, None], 0.0, targets)
    safe_current = None if current is None else np.where(bad[:, None], 0.0, current)

    if arm.kind == "planar":
        candidates = _planar_candidates(arm, safe_targets, safe_current)
    elif arm.kind == "arm5":
        candidates = _arm5_candidates(arm, safe_targets, safe_current)
    else:
        raise ValueError("arm kind %r has no analytic solver" % arm.kind)

    best = np.full(n_targets, -1)
    best_cost = np.zeros(n_targets)
    for c, (st, q, elbow) in enumerate(candidates):
        cost = np.zeros(n_targets)
        if safe_current is not None:
            # Summed joint by joint, in armfw's order, so ties break the same way.
            for i in range(arm.n):
                d = q[:, i] - safe_current[:, i]
                cost = cost + d * d
        if (rule == PREFER_UP and elbow != UP) or (rule == PREFER_DOWN and elbow != DOWN):
            cost = cost + RULE_PENALTY
        take = (st <= SINGULAR) & ((best < 0) | (cost < best_cost))
        best = np.where(take, c, best)
        best_cost = np.where(take, cost, best_cost)

    status = np.empty(n_targets, dtype=np.int8)
    q_out = np.full((n_targets, arm.n), np.nan)
    elbow_out = np.zeros(n_targets, dtype=np.int8)
    any_limit = np.zeros(n_targets, dtype=bool)
    for st, q, elbow in candidates:
        any_limit |= st == JOINT_LIMIT
    status[:] = np.where(any_limit, JOINT_LIMIT, candidates[0][0])
    for c, (st, q, elbow) in enumerate(candidates):
        chosen = best == c
        status[chosen] = st[chosen]
        q_out[chosen] = q[chosen]
        elbow_out[chosen] = elbow
    status[bad] = BAD_INPUT
    q_out[bad] = np.nan
    elbow_out[bad] = 0
    return status, q_out, elbow_out

