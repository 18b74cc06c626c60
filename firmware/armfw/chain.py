# SPDX-License-Identifier: MIT
"""Any serial chain of revolute joints: forward kinematics in plain floats.

A "chain" arm (board file arm kind "chain", see armfw.board) is the arm of a
URDF: joint i is a fixed transform from the previous joint's frame (its
origin: translate by xyz_mm, then rotate by rpy_deg, fixed-axis roll about x,
pitch about y, yaw about z, R = Rz*Ry*Rx) followed by a rotation of q[i]
radians about a unit axis given in that joint's frame. A fixed tool transform
follows the last joint. Units: mm and radians.

There is no closed-form inverse for an arbitrary chain: ik() answers
NO_CLOSED_FORM and the host solves (armctl.fallback, armctl move), checking
its answer with this FK. Everything joint-space (joints, servo, home, where,
fk) works as on the other arms.

fk() writes the tool tip (x, y, z mm) and refills self.origins with the
world position of every joint origin and the tip (3 floats each, tip last):
what a keep-out check walks link by link. Buffers are allocated once.
"""

from math import cos, sin, sqrt

from armfw.numeric import DEG, all_finite
from armfw.kinematics import Solver
from armfw.status import BAD_INPUT


def rpy_matrix(roll, pitch, yaw, out):
    """Row-major 3x3 rotation R = Rz(yaw) Ry(pitch) Rx(roll) (radians) into out (9 floats)."""
    cr = cos(roll)
    sr = sin(roll)
    cp = cos(pitch)
    sp = sin(pitch)
    cy = cos(yaw)
    sy = sin(yaw)
    out[0] = cy * cp
    out[1] = cy * sp * sr - sy * cr
    out[2] = cy * sp * cr + sy * sr
    out[3] = sy * cp
    out[4] = sy * sp * sr + cy * cr
    out[5] = sy * sp * cr - cy * sr
    out[6] = -sp
    out[7] = cp * sr
    out[8] = cp * cr
    return out


def _mul_into(a, b, out):
    """out = a * b for row-major 3x3 matrices (out must be neither a nor b)."""
    for r in range(0, 9, 3):
        a0 = a[r]
        a1 = a[r + 1]
        a2 = a[r + 2]
        out[r] = a0 * b[0] + a1 * b[3] + a2 * b[6]
        out[r + 1] = a0 * b[1] + a1 * b[4] + a2 * b[7]
        out[r + 2] = a0 * b[2] + a1 * b[5] + a2 * b[8]


class ChainSolver(Solver):
    """A serial chain of revolute joints; targets (x, y, z) mm, FK only (see the module doc).

    joints: one (xyz_mm, rpy_deg, axis) triple per joint, each three numbers;
    tool_xyz_mm, tool_rpy_deg: the tool transform after the last joint;
    tool_axis: the tool's pointing direction in its own frame.
    """

    kind = "chain"
    targets = ("x", "y", "z")
    n_candidates = 0
    closed_form = False

    def __init__(self, joints, tool_xyz_mm, tool_rpy_deg, tool_axis, names, lo, hi, home):
        Solver.__init__(self, names, lo, hi, home)
        n = self.n
        self.xyz = [0.0] * (3 * n)          # fixed translations, mm
        self.fixed = [0.0] * (9 * n)        # fixed rotations, row-major
        self.axes = [0.0] * (3 * n)         # unit joint axes in the joint frames
        r = [0.0] * 9
        for i in range(n):
            xyz, rpy, axis = joints[i]
            rpy_matrix(rpy[0] * DEG, rpy[1] * DEG, rpy[2] * DEG, r)
            norm = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2])
            for k in range(3):
                self.xyz[3 * i + k] = xyz[k]
                self.axes[3 * i + k] = axis[k] / norm
            for k in range(9):
                self.fixed[9 * i + k] = r[k]
        self.tool_xyz = [v for v in tool_xyz_mm]
        self.tool_rot = rpy_matrix(tool_rpy_deg[0] * DEG, tool_rpy_deg[1] * DEG,
                                   tool_rpy_deg[2] * DEG, [0.0] * 9)
        norm = sqrt(tool_axis[0] ** 2 + tool_axis[1] ** 2 + tool_axis[2] ** 2)
        self.tool_axis = [tool_axis[k] / norm for k in range(3)]
        self.origins = [0.0] * (3 * (n + 1))    # joint origins then the tip, world mm
        self.direction = [0.0, 0.0, 1.0]        # tool direction of the last fk(), world
        self._r = [0.0] * 9         # running orientation
        self._t = [0.0] * 9         # product scratch
        self._a = [0.0] * 9         # joint rotation
        self._tip = [0.0] * 3

    def _turn(self, i, q):
        """self._a = rotation by q (radians) about joint i's axis (Rodrigues)."""
        k = 3 * i
        x = self.axes[k]
        y = self.axes[k + 1]
        z = self.axes[k + 2]
        c = cos(q)
        s = sin(q)
        v = 1.0 - c
        a = self._a
        a[0] = c + x * x * v
        a[1] = x * y * v - z * s
        a[2] = x * z * v + y * s
        a[3] = y * x * v + z * s
        a[4] = c + y * y * v
        a[5] = y * z * v - x * s
        a[6] = z * x * v - y * s
        a[7] = z * y * v + x * s
        a[8] = c + z * z * v

    def fk(self, q, out):
        """Tool tip (x, y, z mm) for joints q (radians), into out; also self.origins, self.direction."""
        r = self._r
        t = self._t
        r[0] = r[4] = r[8] = 1.0
        r[1] = r[2] = r[3] = r[5] = r[6] = r[7] = 0.0
        px = py = pz = 0.0
        xyz = self.xyz
        fixed = self.fixed
        origins = self.origins
        for i in range(self.n):
            k = 3 * i
            fx = xyz[k]
            fy = xyz[k + 1]
            fz = xyz[k + 2]
            px += r[0] * fx + r[1] * fy + r[2] * fz
            py += r[3] * fx + r[4] * fy + r[5] * fz
            pz += r[6] * fx + r[7] * fy + r[8] * fz
            origins[k] = px
            origins[k + 1] = py
            origins[k + 2] = pz
            f = 9 * i
            for j in range(9):
                t[j] = fixed[f + j]
            _mul_into(r, t, self._a)       # r * fixed rotation, parked in _a
            for j in range(9):
                r[j] = self._a[j]
            self._turn(i, q[i])
            _mul_into(r, self._a, t)
            for j in range(9):
                r[j] = t[j]
        fx, fy, fz = self.tool_xyz
        px += r[0] * fx + r[1] * fy + r[2] * fz
        py += r[3] * fx + r[4] * fy + r[5] * fz
        pz += r[6] * fx + r[7] * fy + r[8] * fz
        k = 3 * self.n
        origins[k] = px
        origins[k + 1] = py
        origins[k + 2] = pz
        _mul_into(r, self.tool_rot, t)
        ax, ay, az = self.tool_axis
        d = self.direction
        d[0] = t[0] * ax + t[1] * ay + t[2] * az
        d[1] = t[3] * ax + t[4] * ay + t[5] * az
        d[2] = t[6] * ax + t[7] * ay + t[8] * az
        out[0] = px
        out[1] = py
        out[2] = pz
        return out

    def ik(self, target, out, current=None, rule=0):
        """No closed form: the host solves a chain (the protocol answers NO_CLOSED_FORM).

        Returns BAD_INPUT for a REPL caller; out is left untouched.
        """
        return BAD_INPUT

    def fk_error(self, target, q, current=None):
        if not all_finite(target):
            return float("inf"), 0.0
        p = self.fk(q, self._tip)
        dx = p[0] - target[0]
        dy = p[1] - target[1]
        dz = p[2] - target[2]
        return sqrt(dx * dx + dy * dy + dz * dz), 0.0
