# SPDX-License-Identifier: MIT
"""Four-point tool centre point (TCP) calibration: the tool offset from touches of one point.

The person jogs the tool tip onto one fixed point from four or more clearly
different orientations. Each touch gives the flange pose (rotation R_i and
position p_i, from forward kinematics of the joint angles), and the unknown
tool offset t (in the flange frame) and point P (in the base frame) satisfy

    R_i t + p_i = P        for every touch i,

3 equations per touch, linear in the 6 unknowns (t, P): ordinary least squares
on the stacked system [R_i  -I] (t, P) = -p_i. The singular values of that
matrix say whether the orientations can tell t from P: orientations that are
too alike (or all turned about one axis) leave a singular value near zero,
and any noise in the touches then becomes a wild offset, so such a set is
refused with the singular values as the reason. The residual per touch,
|R_i t + p_i - P|, names a bad touch (the tip slid off the point).

The flange frame of the arm5 kind: its origin is the l3 tip (armfw FK less
the solver's own tool offset, so t is the whole tool offset, not a correction
to the one the board file or an earlier calibration gave), its z axis the tool direction (the FK
pitch a4 = q2+q3+q4 from vertical, in the plane the base faces), its y axis
lateral (horizontal at roll 0, to the left of a tool pointing away from the
base), turned by the wrist roll q5 about z:  R = Rz(q1) Ry(a4) Rz(q5).
So t = (x, y, z) is: x in the arm's plane across the tool, y the lateral
offset (Y_TCP), z along the tool axis.
"""

import numpy as np

# A touch whose residual exceeds this (mm) should be redone.
MAX_RESIDUAL_MM = 1.0
# Smallest singular value accepted: the offset's error is about the touch
# error divided by it, so 0.25 lets a 0.5 mm touch error move t by ~2 mm at worst.
MIN_SINGULAR = 0.25
MIN_TOUCHES = 4


class DegenerateTouches(ValueError):
    """The touches cannot determine the tool offset; the message says why."""


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def flange_pose(solver, q):
    """(R, p) of the arm5 flange frame for joint angles q (radians): 3x3 rotation, position mm."""
    if solver.kind != "arm5":
        raise ValueError("the tool offset needs a 5-joint arm (this one is %s)" % solver.kind)
    x, y, z, pitch = solver.fk(list(q), [0.0] * 4)
    rotation = _rz(q[0]) @ _ry(pitch) @ _rz(q[4])
    return rotation, np.array([x, y, z]) - rotation @ np.asarray(solver.tool, dtype=float)


def solve(rotations, positions, max_residual_mm=MAX_RESIDUAL_MM, min_singular=MIN_SINGULAR):
    """Least-squares tool offset and touched point from flange poses.

    rotations: N 3x3 matrices, positions: N positions (mm), N >= 4.
    Returns a dict: offset_mm (t, flange frame), point_mm (P, base frame),
    residual_mm (per touch), rms_mm, singular_values, redo (1-based numbers
    of the touches whose residual exceeds max_residual_mm).
    Raises DegenerateTouches when the orientations cannot separate t from P.
    """
    rot = np.asarray(rotations, dtype=float).reshape(-1, 3, 3)
    pos = np.asarray(positions, dtype=float).reshape(-1, 3)
    n = len(rot)
    if n != len(pos):
        raise ValueError("%d rotations but %d positions" % (n, len(pos)))
    if n < MIN_TOUCHES:
        raise DegenerateTouches("need at least %d touches from different orientations, got %d"
                                % (MIN_TOUCHES, n))
    if not (np.all(np.isfinite(rot)) and np.all(np.isfinite(pos))):
        raise ValueError("the poses hold a NaN or infinite value")
    design = np.zeros((3 * n, 6))
    for i in range(n):
        design[3 * i:3 * i + 3, :3] = rot[i]
        design[3 * i:3 * i + 3, 3:] = -np.eye(3)
    singular = np.linalg.svd(design, compute_uv=False)
    if singular[-1] < min_singular:
        raise DegenerateTouches(
            "the orientations are too alike to tell the tool offset from the point: "
            "smallest singular value %.3g (largest %.3g, need >= %.3g); touch the point with the "
            "tool turned clearly differently (pitch and base both varied)"
            % (singular[-1], singular[0], min_singular))
    solution, *_ = np.linalg.lstsq(design, -pos.reshape(-1), rcond=None)
    t = solution[:3]
    point = solution[3:]
    residual = np.linalg.norm(rot @ t + pos - point, axis=1)
    return {
        "offset_mm": [float(v) for v in t],
        "point_mm": [float(v) for v in point],
        "residual_mm": [float(v) for v in residual],
        "rms_mm": float(np.sqrt(np.mean(residual ** 2))),
        "singular_values": [float(v) for v in singular],
        "redo": [i + 1 for i in range(n) if residual[i] > max_residual_mm],
    }


def solve_from_joints(solver, poses_rad, **options):
    """solve() for touches given as joint angles of the arm (radians per joint)."""
    frames = [flange_pose(solver, q) for q in poses_rad]
    return solve([f[0] for f in frames], [f[1] for f in frames], **options)
