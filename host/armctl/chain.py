# SPDX-License-Identifier: MIT
"""Serial chains of revolute joints described by data, with vectorised FK and Jacobian.

A chain is a list of joints; joint i is a fixed transform (from the previous
joint's frame, after its rotation) followed by a rotation q[i] about a unit
axis given in that frame. A fixed tool transform follows the last joint.
Units: mm and radians. The tool direction is a unit vector of the end frame
(its z axis unless told otherwise).

Two ways to build one:

- from_board(board): the arm of an armfw board file (planar or arm5). Lengths,
  limits, home pose and names come from the board, so the numerical solver and
  the firmware share one source of truth.
- from_description(dict): any chain, e.g. arms without a closed-form solver:

      {"joints": [{"name": "yaw", "xyz_mm": [0, 0, 0], "rpy_deg": [0, 0, 0],
                   "axis": [0, 0, 1], "min_deg": -135, "max_deg": 135,
                   "home_deg": 0}, ...],
       "tool": {"xyz_mm": [0, 0, 150], "rpy_deg": [0, 0, 0]},
       "tool_axis": [0, 0, 1]}

FK works on any leading batch shape: q of shape (..., n) gives positions of
shape (..., 3), so thousands of poses cost one numpy pass per joint.

Why this is a second chain FK beside the firmware's (armfw.chain.ChainSolver),
and not built on it: the firmware's runs one pose at a time in plain floats
(math.sin of one number, a Python loop over rows), which is what a board
can run; a batch of poses (the plot's workspace maps, armctl.batch, the
bench) would pay that loop per pose, where numpy turns each joint of the
whole batch in one pass. The chain is described once (the same joint
transforms and axes feed both: plain_solver builds the firmware's from a
Chain, from_board a Chain from the firmware's), single poses go through the
firmware's FK and its joint axes (armctl.numik's DLS, via plain_solver), and
tests/test_chain.py holds the two equal. For the closed-form arms the
firmware's own joint points (Solver.joint_points) are what the host draws
(armctl.ui.geometry); the transforms from_board writes for them describe
the same links for the numerical solvers' Jacobian.
"""

import math

import numpy as np

from armfw.chain import ChainSolver
from armfw.solver import LIMIT_EPS

# An origin closer than this (mm) to an earlier joint's axis lies on it.
ON_AXIS_MM = 1e-9


def translation(xyz):
    """4x4 homogeneous transform moving by xyz (mm)."""
    t = np.eye(4)
    t[:3, 3] = xyz
    return t


def rpy_matrix(roll, pitch, yaw):
    """3x3 rotation for fixed-axis roll (x), pitch (y), yaw (z), radians, URDF order."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def fixed_transform(xyz_mm=(0.0, 0.0, 0.0), rpy_deg=(0.0, 0.0, 0.0)):
    """4x4 transform: translate by xyz_mm, then rotate by rpy_deg (URDF joint origin)."""
    t = translation(xyz_mm)
    t[:3, :3] = rpy_matrix(*[math.radians(a) for a in rpy_deg])
    return t


def axis_rotations(axis, angles):
    """Rotation matrices (..., 3, 3) about the unit axis by angles (...) radians (Rodrigues)."""
    x, y, z = axis
    c = np.cos(angles)
    s = np.sin(angles)
    v = 1.0 - c
    r = np.empty(np.shape(angles) + (3, 3))
    r[..., 0, 0] = c + x * x * v
    r[..., 0, 1] = x * y * v - z * s
    r[..., 0, 2] = x * z * v + y * s
    r[..., 1, 0] = y * x * v + z * s
    r[..., 1, 1] = c + y * y * v
    r[..., 1, 2] = y * z * v - x * s
    r[..., 2, 0] = z * x * v - y * s
    r[..., 2, 1] = z * y * v + x * s
    r[..., 2, 2] = c + z * z * v
    return r


def rotate_about(points, axes, origins, angles):
    """Points (..., 3) rotated by angles (...) about axes (..., 3) through origins (..., 3)."""
    u = points - origins
    c = np.cos(angles)[..., None]
    s = np.sin(angles)[..., None]
    along = np.sum(axes * u, axis=-1, keepdims=True) * axes
    ax, ay, az = axes[..., 0], axes[..., 1], axes[..., 2]
    ux, uy, uz = u[..., 0], u[..., 1], u[..., 2]
    across = np.stack([ay * uz - az * uy, az * ux - ax * uz, ax * uy - ay * ux], axis=-1)
    return origins + along + (u - along) * c + across * s


class Chain:
    """A serial chain of revolute joints (see the module doc).

    fixed: (n, 4, 4) transforms before each joint; axes: (n, 3) unit axes in
    the joint frames; tool: (4, 4); lo, hi, home: (n,) radians; names: list.
    kind: "planar" or "arm5" for chains built from a board (their targets
    follow armfw's conventions), "chain" otherwise.
    """

    def __init__(self, fixed, axes, tool, lo, hi, home, names, tool_axis=(0.0, 0.0, 1.0),
                 kind="chain", solver=None, held=()):
        self.fixed = np.asarray(fixed, dtype=float)
        axes = np.asarray(axes, dtype=float)
        self.axes = axes / np.linalg.norm(axes, axis=1, keepdims=True)
        self.tool = np.asarray(tool, dtype=float)
        self.lo = np.asarray(lo, dtype=float)
        self.hi = np.asarray(hi, dtype=float)
        self.home = np.asarray(home, dtype=float)
        self.names = list(names)
        self.n = len(self.names)
        ta = np.asarray(tool_axis, dtype=float)
        self.tool_axis = ta / np.linalg.norm(ta)
        self.kind = kind
        self.solver = solver      # the firmware solver this chain mirrors, or None
        # Joints the numerical solvers keep at the seed: the arm5 wrist roll, when a
        # tool offset makes it move the tip (armfw takes the roll as given, not solved).
        self.held = tuple(held)
        if not (self.fixed.shape == (self.n, 4, 4) and self.axes.shape == (self.n, 3)
                and self.lo.shape == self.hi.shape == self.home.shape == (self.n,)):
            raise ValueError("chain: fixed, axes, lo, hi, home and names disagree on the joint count")
        if np.any(self.lo >= self.hi):
            raise ValueError("chain: every joint needs min < max")
        self.anchor, self.links = self._reach()
        self.reach = float(sum(self.links))

    def _reach(self):
        """The fixed point the tip swings about and the link lengths after it (mm, tool last).

        The anchor is the origin of the deepest joint that lies on the axes of
        every joint before it (so no joint moves it); the reach, the sum of the
        link lengths, is an upper bound on the tip's distance from it, exact
        when the chain can stretch straight within its limits.
        """
        frames, end = self.frames(self.home)
        anchor_index = 0
        for k in range(1, self.n):
            o = frames[k, :3, 3]
            on_all = True
            for j in range(k):
                a = frames[j, :3, :3] @ self.axes[j]
                d = o - frames[j, :3, 3]
                if np.linalg.norm(d - np.dot(d, a) * a) > ON_AXIS_MM:
                    on_all = False
                    break
            if not on_all:
                break
            anchor_index = k
        lengths = [float(np.linalg.norm(self.fixed[k, :3, 3])) for k in range(anchor_index + 1, self.n)]
        lengths.append(float(np.linalg.norm(self.tool[:3, 3])))
        return frames[anchor_index, :3, 3].copy(), lengths

    def frames(self, q):
        """World frames of the joints and of the tool for poses q (..., n).

        Returns (joints (..., n, 4, 4), end (..., 4, 4)). Joint frame i holds
        joint i's origin and axis (its rotation does not move either).
        """
        q = np.asarray(q, dtype=float)
        batch = q.shape[:-1]
        joints = np.empty(batch + (self.n, 4, 4))
        t = np.broadcast_to(np.eye(4), batch + (4, 4))
        rot = np.zeros(batch + (4, 4))
        rot[..., 3, 3] = 1.0
        for i in range(self.n):
            t = t @ self.fixed[i]
            joints[..., i, :, :] = t
            rot[..., :3, :3] = axis_rotations(self.axes[i], q[..., i])
            t = t @ rot
        return joints, t @ self.tool

    def fk(self, q):
        """Tool tip positions (..., 3) in mm for poses q (..., n) radians."""
        return self.frames(q)[1][..., :3, 3]

    def tool_direction(self, q):
        """Unit tool directions (..., 3) for poses q (..., n)."""
        return self.frames(q)[1][..., :3, :3] @ self.tool_axis

    def joint_points(self, q):
        """Positions (..., n + 1, 3) of every joint origin and the tip, for drawing the arm."""
        joints, end = self.frames(q)
        return np.concatenate([joints[..., :3, 3], end[..., None, :3, 3]], axis=-2)

    def jacobian(self, q):
        """Geometric Jacobian (..., 6, n): rows 0-2 tip velocity (mm/rad), 3-5 angular velocity.

        Also returns the tip positions (..., 3) and tool directions (..., 3)
        it was computed at.
        """
        joints, end = self.frames(q)
        axes = np.einsum("...nij,nj->...ni", joints[..., :3, :3], self.axes)
        tip = end[..., :3, 3]
        lever = tip[..., None, :] - joints[..., :3, 3]
        jac = np.concatenate([np.cross(axes, lever), axes], axis=-1)   # (..., n, 6)
        direction = end[..., :3, :3] @ self.tool_axis
        return np.swapaxes(jac, -1, -2), tip, direction

    def within_limits(self, q):
        """Boolean (...) : every joint of q inside its limits, as the firmware's
        Solver.within_limits counts them (LIMIT_EPS past a limit is inside)."""
        q = np.asarray(q)
        return np.all((q >= self.lo - LIMIT_EPS) & (q <= self.hi + LIMIT_EPS), axis=-1)

    def random_poses(self, count, rng):
        """count poses (count, n) drawn uniformly inside the joint limits."""
        return self.lo + (self.hi - self.lo) * rng.random((count, self.n))


def from_board(board):
    """The chain of an armfw board's arm (armfw.board.Board or its .solver): planar, arm5 or chain."""
    arm = getattr(board, "solver", board)
    if arm.kind == "planar":
        fixed = [np.eye(4), translation((arm.l1, 0.0, 0.0))]
        axes = [(0, 0, 1), (0, 0, 1)]
        tool = translation((arm.l2, 0.0, 0.0))
        tool_axis = (1.0, 0.0, 0.0)
    elif arm.kind == "arm5":
        # Pitch joints turn about the local y axis: a positive angle tips the
        # arm from vertical (z) toward the direction the base faces (x), as in
        # armfw.kinematics.Arm5Solver.fk. Wrist roll turns about the tool axis.
        fixed = [np.eye(4), translation((0.0, 0.0, arm.base)), translation((0.0, 0.0, arm.l1)),
                 translation((0.0, 0.0, arm.l2)), np.eye(4)]
        axes = [(0, 0, 1), (0, 1, 0), (0, 1, 0), (0, 1, 0), (0, 0, 1)]
        # The tool offset (across, lateral, along) sits in the rolled tool frame;
        # the l3 link runs along the roll axis, so the two add up.
        t = getattr(arm, "tool", (0.0, 0.0, 0.0))
        tool = translation((t[0], t[1], arm.l3 + t[2]))
        tool_axis = (0.0, 0.0, 1.0)
    elif arm.kind == "chain":
        # The numpy twin of armfw.chain.ChainSolver, from the transforms it
        # built from the board file (tests/test_chain_arm.py holds them together).
        fixed = [_transform(arm.fixed[9 * i:9 * i + 9], arm.xyz[3 * i:3 * i + 3]) for i in range(arm.n)]
        axes = [arm.axes[3 * i:3 * i + 3] for i in range(arm.n)]
        tool = _transform(arm.tool_rot, arm.tool_xyz)
        tool_axis = arm.tool_axis
    else:
        raise ValueError("chain: unknown arm kind %r" % arm.kind)
    held = (4,) if arm.kind == "arm5" and any(getattr(arm, "tool", (0.0, 0.0, 0.0))) else tuple(getattr(arm, "held", ()))
    return Chain(fixed, axes, tool, arm.lo, arm.hi, arm.home, arm.names, tool_axis,
                 kind=arm.kind, solver=arm, held=held)


def plain_solver(chain):
    """The firmware's plain-float FK (armfw.chain.ChainSolver) of any Chain, from its matrices.

    For one pose numpy costs about a microsecond per call whatever the array
    size, so numik's single-target DLS runs on this instead (docs/BENCHMARKS.md,
    section 3): fk(q, tip) refills its origins, joint_axes (world frame) and
    direction. The rotations pass as they are, never through roll-pitch-yaw;
    tests/test_chain.py holds it to Chain.frames and Chain.jacobian.
    """
    joints = [(chain.fixed[i, :3, 3].tolist(), chain.fixed[i, :3, :3].ravel().tolist(), chain.axes[i].tolist())
              for i in range(chain.n)]
    return ChainSolver(joints, chain.tool[:3, 3].tolist(), chain.tool[:3, :3].ravel().tolist(),
                       chain.tool_axis.tolist(), list(chain.names), chain.lo.tolist(), chain.hi.tolist(),
                       chain.home.tolist())


def _transform(rotation, xyz):
    """4x4 transform from a row-major 3x3 rotation (9 numbers) and a translation (mm)."""
    t = translation(xyz)
    t[:3, :3] = np.reshape(rotation, (3, 3))
    return t


def _vector(d, key, where, default):
    v = d.get(key, default)
    try:
        v = [float(x) for x in v]
    except (TypeError, ValueError):
        raise ValueError("%s.%s: must be three numbers" % (where, key))
    if len(v) != 3 or not all(math.isfinite(x) for x in v):
        raise ValueError("%s.%s: must be three finite numbers" % (where, key))
    return v


def from_description(desc):
    """A chain from a plain description (see the module doc); ValueError names the bad field."""
    joints = desc.get("joints") if isinstance(desc, dict) else None
    if not isinstance(joints, list) or not joints:
        raise ValueError("chain.joints: must be a non-empty list")
    fixed, axes, lo, hi, home, names = [], [], [], [], [], []
    for i, j in enumerate(joints):
        where = "chain.joints[%d]" % i
        if not isinstance(j, dict):
            raise ValueError("%s: must be an object" % where)
        fixed.append(fixed_transform(_vector(j, "xyz_mm", where, (0, 0, 0)),
                                     _vector(j, "rpy_deg", where, (0, 0, 0))))
        axis = _vector(j, "axis", where, (0, 0, 1))
        if np.linalg.norm(axis) == 0:
            raise ValueError("%s.axis: must not be zero" % where)
        axes.append(axis)
        lo_deg = float(j.get("min_deg", -180.0))
        hi_deg = float(j.get("max_deg", 180.0))
        home_deg = float(j.get("home_deg", min(max(0.0, lo_deg), hi_deg)))
        if not lo_deg < hi_deg or not lo_deg <= home_deg <= hi_deg:
            raise ValueError("%s: needs min_deg < max_deg and home_deg between them" % where)
        lo.append(math.radians(lo_deg))
        hi.append(math.radians(hi_deg))
        home.append(math.radians(home_deg))
        names.append(str(j.get("name", "j%d" % (i + 1))))
    tool_d = desc.get("tool", {})
    tool = fixed_transform(_vector(tool_d, "xyz_mm", "chain.tool", (0, 0, 0)),
                           _vector(tool_d, "rpy_deg", "chain.tool", (0, 0, 0)))
    tool_axis = _vector(desc, "tool_axis", "chain", (0, 0, 1))
    return Chain(fixed, axes, tool, lo, hi, home, names, tool_axis)
