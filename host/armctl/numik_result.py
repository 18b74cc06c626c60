# SPDX-License-Identifier: MIT
"""What armctl.numik's solvers answer and when an answer counts: Result and Batch,
the miss of a pose (tip and tool direction), the verdicts the geometry gives
before solving, the status of each answer, and the acceptance check (keep-out
zones and the caller's) that can refuse a pose.
"""

import numpy as np

from armfw import status as fw_status
from armfw import twolink
from armfw.status import OK, TOO_FAR, TOO_CLOSE, JOINT_LIMIT, NOT_CONVERGED

STATUS_NAMES = fw_status.NAMES

# Weight (mm per unit of direction error) that makes direction and position
# errors comparable in one residual: 1 rad of tool tilt counts like 100 mm.
DIRECTION_WEIGHT_MM = 100.0

# A run whose error fell by less than this (mm) over STALL_WINDOW iterations is done.
STALL_MM = 1e-7
STALL_WINDOW = 10

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


def errors(tip, direction, pos, dirs):
    """Tip miss (B,) mm and tool direction miss (B,) rad."""
    e_mm = np.linalg.norm(pos - tip, axis=1)
    if dirs is None:
        return e_mm, np.zeros(len(e_mm))
    chord = np.linalg.norm(dirs - direction, axis=1)
    return e_mm, 2.0 * np.arcsin(np.minimum(chord / 2.0, 1.0))


def residual_cost(chain, q, pos, dirs):
    """Weighted residual norm (B,) and the tip/direction errors, by FK only."""
    _, end = chain.frames(q)
    tip = end[:, :3, 3]
    direction = end[:, :3, :3] @ chain.tool_axis
    e_mm, e_rad = errors(tip, direction, pos, dirs)
    if dirs is None:
        return e_mm, e_mm, e_rad
    dw = DIRECTION_WEIGHT_MM * np.linalg.norm(dirs - direction, axis=1)
    return np.hypot(e_mm, dw), e_mm, e_rad


def out_of_reach(chain, pos, dirs):
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
    if dirs is not None and len(links) > 1 and tool_along_axis(chain):
        wrist = pos - tool_len * dirs
        dw = np.linalg.norm(wrist - chain.anchor, axis=1)
        arm = chain.reach - tool_len
        too_far |= dw > arm + margin
        too_close |= dw < (2.0 * max(links[:-1]) - arm) - margin
    return too_far, too_close, floor


def classify(e_mm, e_rad, tol_mm, tol_rad, too_far, too_close, verdict, refused):
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


def tool_along_axis(chain):
    """True when the tool offset points along the tool direction, so the wrist point is fixed too."""
    offset = chain.tool[:3, 3]
    length = np.linalg.norm(offset)
    return length > 0 and np.allclose(offset / length, chain.tool[:3, :3] @ chain.tool_axis)


def with_zones(accept, zones):
    """The acceptance check with the board's keep-out zones added: no pose with a link in a zone is a solution."""
    if zones is None:
        return accept

    def clear(poses):
        ok = np.array([zones.clear([float(a) for a in p]) for p in poses], dtype=bool)
        return ok if accept is None else ok & np.asarray(accept(poses), dtype=bool)
    return clear


def refused_poses(accept, q, good):
    """Boolean (B,): poses the acceptance check refuses (none without one)."""
    refused = np.zeros(len(q), dtype=bool)
    if accept is not None and good.any():
        refused[good] = ~np.asarray(accept(q[good]), dtype=bool)
    return refused


def weighted_miss(e_mm, e_rad, refused):
    """Weighted miss; a refused pose ranks behind every accepted one."""
    return np.hypot(e_mm, DIRECTION_WEIGHT_MM * e_rad) + np.where(refused, REFUSED_PENALTY, 0.0)
