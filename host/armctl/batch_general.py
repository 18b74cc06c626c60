# SPDX-License-Identifier: MIT
"""armctl.batch's general path: every candidate of armfw's analytic solvers built in
full over arrays (planar, arm5, arm5 with a tool offset) and chosen by armfw's
rule, and the array forms of armfw.twolink.solve and armfw.solver.fit_angle.
"""

import math

import numpy as np

from armfw import twolink
from armfw.kinematics import AXIS_EPS, LIMIT_EPS, UP, DOWN, PREFER_UP, PREFER_DOWN
from armfw.numeric import TWO_PI
from armfw.status import OK, SINGULAR, TOO_FAR, TOO_CLOSE, JOINT_LIMIT, BAD_INPUT, NEAR_AXIS

# The rule penalty of armfw.kinematics.Solver._choose: a non-preferred branch
# costs more than any real motion.
RULE_PENALTY = 1e9


def solve_twolink(l1, l2, x, y, t2_sign):
    """armfw.twolink.solve over arrays: returns (status, t1, t2), NaN where not solved.

    x, y: arrays (mm); t2_sign: twolink.T2_POSITIVE or T2_NEGATIVE (scalar or
    array), the sign of sin(t2) - not an arm's elbow word (kinematics.UP/DOWN).
    """
    x, y, t2_sign = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float), np.asarray(t2_sign))
    if not np.all((t2_sign == twolink.T2_POSITIVE) | (t2_sign == twolink.T2_NEGATIVE)):
        raise ValueError("t2_sign must be +1 or -1")
    finite = np.isfinite(x) & np.isfinite(y)
    with np.errstate(invalid="ignore", over="ignore"):
        status, phi, beta, gamma = _pair(l1, l2, np.where(finite, x, 0.0), np.where(finite, y, 0.0))
    status[~finite] = BAD_INPUT
    # armfw.twolink.solve hands out solve_pair's branch: (phi - beta, gamma) or (phi + beta, -gamma).
    t1 = phi - t2_sign * beta
    t2 = t2_sign * gamma
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
        fits = ~((q > hi + LIMIT_EPS) | (q < lo - LIMIT_EPS))
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
    # armfw.kinematics.PlanarSolver: elbow up is the branch with t2 <= 0.
    for elbow, t2_sign in ((UP, twolink.T2_NEGATIVE), (DOWN, twolink.T2_POSITIVE)):
        st, t1, t2 = solve_twolink(arm.l1, arm.l2, targets[:, 0], targets[:, 1], t2_sign)
        q = np.stack([t1, t2], axis=1)
        _fit_limits(arm, q, st)
        candidates.append((st, q, elbow))
    return candidates


def _arm5_candidates(arm, targets, current):
    """The four candidates as armfw.kinematics.Arm5Solver builds them, for the general choice in ik()."""
    yaw, roll, r, pitch, phi, beta, gamma, st = _arm5_pair(arm, targets, current)
    back = np.where(yaw > 0, yaw - np.pi, yaw + np.pi)
    candidates = []
    for c, elbow in enumerate((UP, DOWN, UP, DOWN)):
        q2, q3 = (phi - beta, gamma) if elbow == UP else (phi + beta, -gamma)
        q4 = pitch - q2 - q3
        if c < 2:
            q = np.stack([yaw, q2, q3, q4, roll], axis=1)
        else:
            q = np.stack([back, -q2, -q3, -q4, roll], axis=1)
        cst = st.copy()
        _fit_limits(arm, q, cst)
        candidates.append((cst, q, elbow))
    return candidates


def _arm5_tool_candidates(arm, targets, current):
    """The four candidates of Arm5Solver._candidates_offset (an arm with a tool offset)."""
    x, y, z, pitch = np.ascontiguousarray(targets.T)
    n = len(targets)
    sp = np.sin(pitch)
    cp = np.cos(pitch)
    pitch = np.arctan2(sp, cp)
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.sqrt(x * x + y * y)
    roll = np.zeros(n) if current is None else current[:, 4]
    tx, ty, tz = arm.tool
    cr = np.cos(roll)
    sr = np.sin(roll)
    u0 = tx * cr - ty * sr
    b = tx * sr + ty * cr
    near = r * r < b * b
    candidates = []
    for side in range(2):
        a4 = pitch if side == 0 else -pitch
        ca = np.cos(a4)
        sa = np.sin(a4)
        va = u0 * ca + tz * sa
        vc = tz * ca - u0 * sa
        with np.errstate(invalid="ignore", over="ignore"):
            reach = np.sqrt(np.where(near, 0.0, r * r - b * b))
            if side == 1:
                reach = -reach
            yaw = np.arctan2(y, x) - np.arctan2(b, reach)
            on_axis = r < AXIS_EPS
            if on_axis.any():
                axis_yaw = np.zeros(n) if current is None else current[:, 0]
                if side == 1:
                    axis_yaw = np.where(axis_yaw > 0, axis_yaw - np.pi, axis_yaw + np.pi)
                yaw = np.where(on_axis, axis_yaw, yaw)
            st, phi, beta, gamma = _pair(arm.l1, arm.l2, z - vc - arm.base - arm.l3 * ca,
                                         reach - va - arm.l3 * sa)
        st[np.isinf(r)] = TOO_FAR
        st[near] = NEAR_AXIS
        for e, elbow in enumerate((UP, DOWN)):
            # Facing: up is q3 >= 0; leaning back the mirror, up is q3 <= 0.
            positive = (elbow == UP) == (side == 0)
            q2, q3 = (phi - beta, gamma) if positive else (phi + beta, -gamma)
            q = np.stack([yaw, q2, q3, a4 - q2 - q3, roll], axis=1)
            cst = st.copy()
            _fit_limits(arm, q, cst)
            candidates.append((cst, q, elbow))
    return candidates


def _arm5_pair(arm, targets, current):
    """What Arm5Solver.ik computes before its candidates: base yaw, wrist roll,
    horizontal distance r, pitch with whole turns off, the two-link pair's
    phi, beta, gamma (t1 = phi -+ beta, t2 = +-gamma) and its status."""
    x, y, z, pitch = np.ascontiguousarray(targets.T)
    n = len(targets)
    sp = np.sin(pitch)
    cp = np.cos(pitch)
    # Whole turns off a pitch outside (-pi, pi] first, as armfw.
    pitch = np.where((pitch > -np.pi) & (pitch <= np.pi), pitch, np.arctan2(sp, cp))
    with np.errstate(over="ignore", invalid="ignore"):
        r = np.sqrt(x * x + y * y)
    yaw = np.arctan2(y, x)
    on_axis = r < AXIS_EPS
    if on_axis.any():
        yaw[on_axis] = 0.0 if current is None else current[on_axis, 0]
    roll = np.zeros(n) if current is None else current[:, 4]
    with np.errstate(invalid="ignore", over="ignore"):
        st, phi, beta, gamma = _pair(arm.l1, arm.l2, z - arm.base - arm.l3 * cp, r - arm.l3 * sp)
    st[np.isinf(r)] = TOO_FAR   # x*x + y*y overflowed: far, not bad input (as armfw)
    return yaw, roll, r, pitch, phi, beta, gamma, st


def _pair(l1, l2, x, y):
    """armfw.twolink.solve_pair over arrays of finite x, y: (status, phi, beta, gamma)."""
    r2 = x * x + y * y
    r = np.sqrt(r2)
    margin = twolink.REACH_EPS * (l1 + l2)
    status = np.where(r > l1 + l2 + margin, TOO_FAR, OK).astype(np.int8)
    status[r < abs(l1 - l2) - margin] = TOO_CLOSE
    c2 = (r2 - (l1 * l1 + l2 * l2)) / (2.0 * l1 * l2)
    np.clip(c2, -1.0, 1.0, out=c2)
    s2 = np.sqrt(1.0 - c2 * c2)
    phi = np.arctan2(y, x)
    beta = np.arctan2(s2, (l1 / l2 if l2 != 0.0 else math.inf) + c2)
    gamma = np.arctan2(s2, c2)
    status[(status == OK) & (s2 < twolink.SINGULAR_SIN)] = SINGULAR
    return status, phi, beta, gamma


def general_ik(arm, rule, targets, current):
    """ik() by every candidate in full, for finite targets and current poses."""
    n_targets = len(targets)
    if current is not None and current.ndim == 1:
        current = np.broadcast_to(current, (n_targets, arm.n))
    if arm.kind == "planar":
        candidates = _planar_candidates(arm, targets, current)
    elif arm.kind == "arm5" and any(getattr(arm, "tool", (0.0, 0.0, 0.0))):
        candidates = _arm5_tool_candidates(arm, targets, current)
    elif arm.kind == "arm5":
        candidates = _arm5_candidates(arm, targets, current)
    else:
        raise ValueError("arm kind %r has no analytic solver" % arm.kind)

    best = np.full(n_targets, -1)
    best_cost = np.zeros(n_targets)
    for c, (st, q, elbow) in enumerate(candidates):
        cost = np.zeros(n_targets)
        if current is not None:
            # Summed joint by joint, in armfw's order, so ties break the same way.
            for i in range(arm.n):
                d = q[:, i] - current[:, i]
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
    return status, q_out, elbow_out
