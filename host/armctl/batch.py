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
The 5-joint arm with the minimum-motion rule (what planning asks most) has
its own path in fewer numpy passes (_arm5_min_motion); the preference rules
build the four candidates in full.

    status, q, elbow = batch.ik(board_or_solver, targets, current=None, rule="min")

targets: (N, 2) planar (x, y) mm, or (N, 4) arm5 (x, y, z mm, pitch rad).
current: None, one pose (n,) or one per target (N, n), radians.
Returns status (N,) int codes of armfw.status, q (N, n) radians (NaN where
the status carries no solution) and elbow (N,) armfw UP/DOWN (0 where none).
"""

import numpy as np

from armfw import kinematics, twolink
from armfw.kinematics import AXIS_EPS, LIMIT_EPS, UP, DOWN, MIN_MOTION, PREFER_UP, PREFER_DOWN
from armfw.numeric import TWO_PI
from armfw.status import OK, SINGULAR, TOO_FAR, TOO_CLOSE, JOINT_LIMIT, BAD_INPUT, NEAR_AXIS

# The rule penalty of armfw.kinematics.Solver._choose: a non-preferred branch
# costs more than any real motion.
RULE_PENALTY = 1e9

# The minimum-motion choice in masks: an invalid candidate costs COST_INVALID
# more, every valid cost is capped below it.
COST_CAP = 1e298
COST_INVALID = 1e300


def solve_twolink(l1, l2, x, y, t2_sign):
    """armfw.twolink.solve over arrays: returns (status, t1, t2), NaN where not solved.

    x, y: arrays (mm); t2_sign: twolink.T2_POSITIVE or T2_NEGATIVE (scalar or
    array), the sign of sin(t2) - not an arm's elbow word (kinematics.UP/DOWN).
    """
    x, y, t2_sign = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float), np.asarray(t2_sign))
    if not np.all((t2_sign == twolink.T2_POSITIVE) | (t2_sign == twolink.T2_NEGATIVE)):
        raise ValueError("t2_sign must be +1 or -1")
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
        s2 = np.where(t2_sign < 0, -s2, s2)
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
    """What Arm5Solver._candidates computes before its candidates: base yaw, wrist roll,
    horizontal distance r, pitch with whole turns off, the two-link pair's
    phi, beta, gamma (t1 = phi -+ beta, t2 = +-gamma) and its status."""
    x, y, z, pitch = np.ascontiguousarray(targets.T)
    n = len(targets)
    sp = np.sin(pitch)
    cp = np.cos(pitch)
    pitch = np.arctan2(sp, cp)     # whole turns off first, as armfw
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
    c2 = (r2 - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)
    np.clip(c2, -1.0, 1.0, out=c2)
    s2 = np.sqrt(1.0 - c2 * c2)
    phi = np.arctan2(y, x)
    beta = np.arctan2(l2 * s2, l1 + l2 * c2)
    gamma = np.arctan2(s2, c2)
    status[(status == OK) & (s2 < twolink.SINGULAR_SIN)] = SINGULAR
    return status, phi, beta, gamma


def _arm5_min_motion(arm, targets, current):
    """ik() for arm5 with the minimum-motion rule, in fewer numpy passes.

    Same answers as the general path (candidates, limit fits, costs summed in
    armfw's order, the first of equal costs wins), cheaper: the turned-base
    candidates are the facing ones negated, the yaw term of the cost is shared
    by the two candidates with the same base yaw, the wrist roll is the
    current one on every candidate (its cost term is 0), a joint is fitted by
    whole turns only when some angle lies outside its limits, and the choice
    is arithmetic on masks instead of masked copies (one numpy pass each).
    Costs above COST_CAP (a current pose 1e149 rad away) tie.
    """
    yaw, roll, r, pitch, phi, beta, gamma, st = _arm5_pair(arm, targets, current)
    back = np.where(yaw > 0, yaw - np.pi, yaw + np.pi)
    pair_ok = st <= SINGULAR
    lo_eps = [a - LIMIT_EPS for a in arm.lo]
    hi_eps = [a + LIMIT_EPS for a in arm.hi]
    # The roll is the same on every candidate: it fits on all of them or on none.
    roll_fitted, roll_fits = _fit_column(roll, 4, arm, lo_eps, hi_eps)
    if roll_fitted is not roll:
        return None     # a current roll a whole turn off: its cost term is not 0
    pair_ok &= roll_fits
    yaws = (_fit_column(yaw, 0, arm, lo_eps, hi_eps), _fit_column(back, 0, arm, lo_eps, hi_eps))
    if current is not None:
        cur = [current[:, i] for i in range(4)]
        yaw_cost = [(a - cur[0]) * (a - cur[0]) for a, _ in yaws]
    count = len(st)
    best = np.full(count, -1, dtype=np.int8)
    best_cost = np.full(count, COST_INVALID)
    chosen = [[], [], []]
    for c in range(4):
        if c & 1:
            q2, q3 = phi + beta, -gamma
        else:
            q2, q3 = phi - beta, gamma
        q4 = pitch - q2 - q3
        q0, valid = yaws[c >> 1]
        if c >= 2:
            q2, q3, q4 = -q2, -q3, -q4
        valid = valid & pair_ok
        for i, a in enumerate((q2, q3, q4)):
            a, ok = _fit_column(a, i + 1, arm, lo_eps, hi_eps)
            chosen[i].append(a)
            valid &= ok
        if current is None:
            cost = np.zeros(count)
        else:
            cost = yaw_cost[c >> 1]
            for i in (1, 2, 3):
                d = chosen[i - 1][c] - cur[i]
                cost = cost + d * d
            np.minimum(cost, COST_CAP, out=cost)
        cost += ~valid * COST_INVALID
        take = cost < best_cost
        best += take * (c - best)
        np.minimum(best_cost, cost, out=best_cost)
    solved = best >= 0
    # Reachable but no candidate inside the limits: JOINT_LIMIT, as armfw.
    status = st.copy()
    status[(st <= SINGULAR) & ~solved] = JOINT_LIMIT
    pick = np.maximum(best, 0)
    q = np.empty((count, 5))
    q[:, 0] = np.where(pick >= 2, yaws[1][0], yaws[0][0])
    for i in range(3):
        q[:, i + 1] = np.choose(pick, chosen[i])
    q[:, 4] = roll
    q[~solved] = np.nan
    elbow = np.where(solved, np.where(best & 1, DOWN, UP), 0).astype(np.int8)
    return status, q, elbow


def _fit_column(a, i, arm, lo_eps, hi_eps):
    """Joint i's angles a fitted into its limits by whole turns, as
    armfw.kinematics.fit_angle: (angles, fits). Arithmetic on masks: a row
    inside its limits gets a - 0.0, which is a."""
    above = a > hi_eps[i]
    below = a < lo_eps[i]
    if not (above.any() or below.any()):
        return a, np.ones(len(a), dtype=bool)
    with np.errstate(invalid="ignore"):
        a = a - TWO_PI * (np.floor((a - arm.hi[i] - LIMIT_EPS) / TWO_PI + 1.0) * above)
        below = a < lo_eps[i]
        a = a + TWO_PI * (np.floor((lo_eps[i] - a) / TWO_PI + 1.0) * below)
    return a, ~((a > hi_eps[i]) | (a < lo_eps[i]))


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
    # x * 0 is NaN for NaN and inf, 0 otherwise: one matrix product finds the bad rows.
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(targets @ np.zeros(targets.shape[1]))
    if current is not None:
        current = np.asarray(current, dtype=float)
        if current.ndim == 1:
            if current.shape != (arm.n,):
                raise ValueError("current: shape (%d,) or (N, %d), got %s" % (arm.n, arm.n, current.shape))
            if not np.all(np.isfinite(current)):
                bad[:] = True
            current = np.broadcast_to(current, (n_targets,) + current.shape)
        elif current.shape != (n_targets, arm.n):
            raise ValueError("current: shape (%d,) or (N, %d), got %s" % (arm.n, arm.n, current.shape))
        else:
            with np.errstate(invalid="ignore"):
                bad |= ~np.isfinite(current @ np.zeros(arm.n))
    any_bad = bad.any()
    safe_targets = np.where(bad[:, None], 0.0, targets) if any_bad else targets
    safe_current = None if current is None else (np.where(bad[:, None], 0.0, current) if any_bad else current)

    offset = arm.kind == "arm5" and any(getattr(arm, "tool", (0.0, 0.0, 0.0)))
    fast = _arm5_min_motion(arm, safe_targets, safe_current) \
        if arm.kind == "arm5" and rule == MIN_MOTION and not offset else None
    if fast is not None:
        status, q_out, elbow_out = fast
        status[bad] = BAD_INPUT
        q_out[bad] = np.nan
        elbow_out[bad] = 0
        return status, q_out, elbow_out
    if arm.kind == "planar":
        candidates = _planar_candidates(arm, safe_targets, safe_current)
    elif offset:
        candidates = _arm5_tool_candidates(arm, safe_targets, safe_current)
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

