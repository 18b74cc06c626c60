# SPDX-License-Identifier: MIT
"""The fits of `armctl calibrate`: the servo map from pulses recorded at known poses, and the
link lengths from measured tool positions.

The recorded pulses fit the servo bridge of armfw.servo by least squares on a
straight line, pulse = a + b * q:

    sign       = sign of b
    us_per_rad = |b|
    offset     = (a - center_us) / us_per_rad     (servo angle at math zero)

center_us stays the board's (with offset it is one degree of freedom too
many). The link lengths come from tip positions the person measures at a few
poses: forward kinematics is linear in the lengths, so armfw's own FK,
evaluated with one unit length at a time, gives the columns of an ordinary
least-squares problem. The residuals tell a model error (wrong lengths: large
before the fit, small after) from play or a bad servo fit (still large after).
"""

import math

import numpy as np

from armfw import kinematics
from armfw.numeric import DEG


def fit_servo(poses_rad, pulses_us, center_us):
    """Fit one joint's servo map to pulses recorded at known angles.

    Returns a dict: sign, us_per_rad, offset_deg, center_us and residual_us
    (pulse minus the fitted line, per pose). Raises ValueError when the poses
    cannot separate slope from intercept or the pulse does not change.
    """
    q = np.asarray(poses_rad, dtype=float)
    us = np.asarray(pulses_us, dtype=float)
    if len(q) < 2 or np.ptp(q) < 1e-6:
        raise ValueError("need at least two different poses")
    design = np.column_stack((np.ones_like(q), q))
    (intercept, slope), *_ = np.linalg.lstsq(design, us, rcond=None)
    if abs(slope) < 1.0:
        raise ValueError("the pulse hardly changes between poses (%.2f us/rad): is the servo connected?" % slope)
    us_per_rad = abs(slope)
    return {
        "sign": 1 if slope > 0 else -1,
        "us_per_rad": round(float(us_per_rad), 3),
        "offset_deg": round(float((intercept - center_us) / us_per_rad / DEG), 3),
        "center_us": center_us,
        "residual_us": [round(float(r), 3) for r in us - design @ (intercept, slope)],
    }


def window_misses(board, j, fit):
    """Lines naming each limit of joint j that fit (fit_servo's) puts outside the joint's
    pulse window, each with the two fixes; [] when both limits keep a pulse."""
    from armfw.servo import REFUSED, ServoMap
    s = board.servos
    arm = board.solver
    one = ServoMap([s.channels[j]], [fit["offset_deg"] * DEG], [fit["sign"]], [fit["center_us"]],
                   [fit["us_per_rad"]], [s.min_us[j]], [s.max_us[j]])
    lines = []
    for key, q, inward in (("min_deg", arm.lo[j], math.ceil), ("max_deg", arm.hi[j], math.floor)):
        if one.pulse(0, q) != REFUSED:
            continue
        us = one.exact_us(0, q)
        edge_key, edge = ("max_us", s.max_us[j]) if us > s.max_us[j] else ("min_us", s.min_us[j])
        # The limit the window allows, a tenth of a degree inside it.
        allowed = inward(one.angle(0, edge) / DEG * 10) / 10
        lines.append("%s (joints[%d]): %s %g deg needs %.0f us with this fit, outside the pulse window "
                     "%d..%d us: in the board file narrow %s to %g, or widen %s to %d if the servo "
                     "takes that pulse" % (arm.names[j], j, key, q / DEG, us, s.min_us[j], s.max_us[j],
                                           key, allowed, edge_key, round(us)))
    return lines


def _length_names(arm):
    return ("l1_mm", "l2_mm") if arm.kind == "planar" else ("l1_mm", "l2_mm", "l3_mm", "base_mm")


def _unit_arm(arm, k):
    """A copy of arm's geometry with length k set to 1 and the others 0 (FK is linear in lengths)."""
    lengths = [0.0] * len(_length_names(arm))
    lengths[k] = 1.0
    if arm.kind == "planar":
        return kinematics.PlanarSolver(lengths[0], lengths[1], arm.names, arm.lo, arm.hi, arm.home)
    return kinematics.Arm5Solver(lengths[0], lengths[1], lengths[2], lengths[3], arm.names, arm.lo, arm.hi, arm.home)


def _positions(arm, q):
    """Tool position (mm) by armfw's FK: (x, y) planar, (x, y, z) arm5."""
    p = arm.fk(q, [0.0] * len(arm.targets))
    return p[:3] if arm.kind == "arm5" else p[:2]


def fit_lengths(arm, poses_rad, measured_mm):
    """Least-squares link lengths from measured tool positions at known joint angles.

    Returns a dict: lengths (name -> mm), nominal (the arm's own), before_mm
    and after_mm (per-pose distance between the measured tip and FK with the
    nominal and the fitted lengths), rms_before_mm, rms_after_mm.
    """
    names = _length_names(arm)
    units = [_unit_arm(arm, k) for k in range(len(names))]
    rows = []
    for q in poses_rad:
        rows.append(np.column_stack([_positions(u, q) for u in units]))
    design = np.vstack(rows)
    target = np.asarray(measured_mm, dtype=float).reshape(-1)
    if design.shape[0] != target.shape[0]:
        raise ValueError("each measurement needs %d coordinates" % (design.shape[0] // len(poses_rad)))
    if np.linalg.matrix_rank(design) < len(names):
        raise ValueError("these poses cannot tell the lengths apart; use more varied poses")
    fitted, *_ = np.linalg.lstsq(design, target, rcond=None)
    nominal = np.array([getattr(arm, n.split("_")[0]) for n in names], dtype=float)
    dims = design.shape[0] // len(poses_rad)

    def per_pose(lengths):
        miss = (design @ lengths - target).reshape(-1, dims)
        return [float(v) for v in np.linalg.norm(miss, axis=1)]

    before = per_pose(nominal)
    after = per_pose(fitted)
    return {
        "lengths": {n: round(float(v), 3) for n, v in zip(names, fitted)},
        "nominal": {n: float(v) for n, v in zip(names, nominal)},
        "before_mm": [round(v, 3) for v in before],
        "after_mm": [round(v, 3) for v in after],
        "rms_before_mm": round(float(np.sqrt(np.mean(np.square(before)))), 3),
        "rms_after_mm": round(float(np.sqrt(np.mean(np.square(after)))), 3),
    }


def board_values(servos, j, poses_rad=(), pulses_us=()):
    """Joint j's servo map as the board has it, in fit_servo's form (residuals against it)."""
    exact = [servos.exact_us(j, q) for q in poses_rad]
    return {"sign": servos.signs[j], "us_per_rad": servos.us_per_rad[j],
            "offset_deg": round(servos.offsets[j] / DEG, 3), "center_us": servos.center_us[j],
            "residual_us": [round(us - e, 3) for us, e in zip(pulses_us, exact)]}
