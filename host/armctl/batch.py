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
its own path, block by block in few numpy passes (armctl.batch_arm5): the
same decisions, with liberties that move answers by an ulp or so (the
pitch's sine and cosine from a vectorised tangent; where numpy's arctan2
calls libm per element, armctl.batch_math.atan2, within 2 ulp of it; whole turns found by a
floor, which could pick another turn only for an angle within rounding of a
limit plus whole turns). A nearly stretched or folded arm, where an ulp of
the wrist point moves t2 by more than that, takes the general path. The
preference rules build the four candidates in full.

    status, q, elbow = batch.ik(board_or_solver, targets, current=None, rule="min")

targets: (N, 2) planar (x, y) mm, or (N, 4) arm5 (x, y, z mm, pitch rad).
current: None, one pose (n,) or one per target (N, n), radians.
Returns status (N,) int codes of armfw.status, q (N, n) radians (NaN where
the status carries no solution) and elbow (N,) armfw UP/DOWN (0 where none).

The general path, every candidate in full, is armctl.batch_general.
"""

import math

import numpy as np

from armfw import kinematics
from armfw.kinematics import MIN_MOTION, PREFER_UP, PREFER_DOWN
from armfw.status import BAD_INPUT
from armctl.batch_arm5 import arm5_min_motion
from armctl.batch_general import general_ik


def _rule(rule):
    if isinstance(rule, str):
        return kinematics.rule_code(rule)
    if rule not in (MIN_MOTION, PREFER_UP, PREFER_DOWN):
        raise ValueError("rule: %r is not min/up/down" % (rule,))
    return rule


def _bad_rows(values):
    """Which rows of values (N, k) hold a NaN or an infinity."""
    # The common case in two quick passes (NaN wins min and max), without BLAS:
    # its threads keep spinning after a call, on the cores numpy works on.
    if len(values) == 0 or math.isfinite(values.min()) and math.isfinite(values.max()):
        return np.zeros(len(values), dtype=bool)
    # x * 0 is NaN for NaN and inf, 0 otherwise.
    with np.errstate(invalid="ignore"):
        return ~np.isfinite(values @ np.zeros(values.shape[1]))


def ik(board_or_solver, targets, current=None, rule=MIN_MOTION):
    """Solve every target as armfw's solver.ik(target, out, current, rule) would.

    Returns (status (N,) int8, q (N, n) float radians with NaN rows where not
    solved, elbow (N,) int8: UP, DOWN or 0 where not solved). q may be a
    view of a joint-major (n, N) array (the 5-joint minimum-motion path).
    """
    arm = getattr(board_or_solver, "solver", board_or_solver)
    rule = _rule(rule)
    targets = np.asarray(targets, dtype=float)
    if targets.ndim != 2 or targets.shape[1] != len(arm.targets):
        raise ValueError("targets: shape (N, %d) for a %s arm, got %s"
                         % (len(arm.targets), arm.kind, targets.shape))
    n_targets = targets.shape[0]
    bad = _bad_rows(targets)
    safe_current = None     # current with bad rows zeroed: None, one pose (n,) or (N, n)
    if current is not None:
        current = np.asarray(current, dtype=float)
        if current.ndim == 1:
            if current.shape != (arm.n,):
                raise ValueError("current: shape (%d,) or (N, %d), got %s" % (arm.n, arm.n, current.shape))
            safe_current = current
            if not all(map(math.isfinite, current.tolist())):
                bad[:] = True
                safe_current = np.zeros(arm.n)
        elif current.shape != (n_targets, arm.n):
            raise ValueError("current: shape (%d,) or (N, %d), got %s" % (arm.n, arm.n, current.shape))
        else:
            bad |= _bad_rows(current)
            safe_current = current
    any_bad = bad.any()
    safe_targets = np.where(bad[:, None], 0.0, targets) if any_bad else targets
    if any_bad and safe_current is not None and safe_current.ndim == 2:
        safe_current = np.where(bad[:, None], 0.0, safe_current)

    offset = arm.kind == "arm5" and any(getattr(arm, "tool", (0.0, 0.0, 0.0)))
    fast = arm5_min_motion(arm, safe_targets, safe_current) \
        if arm.kind == "arm5" and rule == MIN_MOTION and not offset else None
    if fast is not None:
        status, q_out, elbow_out = fast
        if any_bad:
            status[bad] = BAD_INPUT
            q_out[bad] = np.nan
            elbow_out[bad] = 0
        return status, q_out, elbow_out
    status, q_out, elbow_out = general_ik(arm, rule, safe_targets, safe_current)
    status[bad] = BAD_INPUT
    q_out[bad] = np.nan
    elbow_out[bad] = 0
    return status, q_out, elbow_out
