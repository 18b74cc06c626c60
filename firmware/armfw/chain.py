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
what a keep-out check walks link by link; self.joint_axes with every joint's
unit axis in the world (3 floats each) and self.direction with the tool's:
what the host's numerical solver (armctl.numik) builds its Jacobian from.
Buffers are allocated once.
"""

from math import cos, sin, sqrt

from armfw.numeric import DEG, all_finite
from armfw.solver import Solver
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


def rpy_deg_matrix(rpy_deg):
    """A new row-major 3x3 rotation from URDF roll, pitch, yaw in degrees (see rpy_matrix)."""
    return rpy_matrix(rpy_deg[0] * DEG, rpy_deg[1] * DEG, rpy_deg[2] * DEG, [0.0] * 9)


def _mul_into(a, b, out):
    """out = a * b for row-major 3x3 matrices (out must be neither a nor b)."""
    for r in range(0, 9, 3):
        a0 = a[r]
        a1 = a[r + 1]
        a2 = a[r + 2]
        out[r] = a0 * b[0] + a1 * b[3] + a2 * b[6]
        out[r + 1] = a0 * b[1] + a1 * b[4] + a2 * b[7]
        out[r + 2] = a0 * b[2] + a1 * b[5] + a2 * b[8]


def _transpose_times(a, b, out):
    """out = transpose(a) * b for row-major 3x3 matrices."""
    for r in range(3):
        for c in range(3):
            out[3 * r + c] = a[r] * b[c] + a[3 + r] * b[3 + c] + a[6 + r] * b[6 + c]


def _z_to(a, out):
    """A rotation taking the z axis to the unit vector a (row-major, into out)."""
    x, y, z = a
    s = sqrt(x * x + y * y)
    if s == 0.0:
        # a = +z: identity; a = -z: half a turn about x.
        sign = 1.0 if z > 0 else -1.0
        for k in range(9):
            out[k] = 0.0
        out[0] = 1.0
        out[4] = sign
        out[8] = sign
        return out
    # Rodrigues about k = z x a / s = (-y, x, 0) / s, by the angle whose cosine is z.
    kx = -y / s
    ky = x / s
    v = 1.0 - z
    out[0] = z + kx * kx * v
    out[1] = kx * ky * v
    out[2] = ky * s
    out[3] = kx * ky * v
    out[4] = z + ky * ky * v
    out[5] = -kx * s
    out[6] = -ky * s
    out[7] = kx * s
    out[8] = z
    return out


class ChainSolver(Solver):
    """A serial chain of revolute joints; targets (x, y, z) mm, FK only (see the module doc).

    joints: one (xyz_mm, rotation, axis) triple per joint: the fixed
    translation and axis three numbers each, the fixed rotation nine
    (row-major; a board file's rpy_deg goes through rpy_deg_matrix);
    tool_xyz_mm, tool_rotation: the tool transform after the last joint;
    tool_axis: the tool's pointing direction in its own frame.
    The description is kept as given (xyz, fixed, axes, tool_xyz, tool_rot,
    tool_axis: what the host's numpy twin is built from); FK runs on a copy
    in which every joint turns about its own z axis (see _prepare).
    """

    kind = "chain"
    targets = ("x", "y", "z")
    n_candidates = 0
    closed_form = False
    # Joints a position-only target leaves where they are (indexes; the board
    # file's arm.hold names them): a wrist roll whose tool offset moves the tip
    # would otherwise be spent on the target, a different roll for each
    # neighbouring point. A target that gives the roll sets it instead.
    held = ()

    def __init__(self, joints, tool_xyz_mm, tool_rotation, tool_axis, names, lo, hi, home):
        Solver.__init__(self, names, lo, hi, home)
        n = self.n
        self.xyz = [0.0] * (3 * n)          # fixed translations, mm
        self.fixed = [0.0] * (9 * n)        # fixed rotations, row-major
        self.axes = [0.0] * (3 * n)         # unit joint axes in the joint frames
        for i in range(n):
            xyz, r, axis = joints[i]
            norm = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2])
            for k in range(3):
                self.xyz[3 * i + k] = xyz[k]
                self.axes[3 * i + k] = axis[k] / norm
            for k in range(9):
                self.fixed[9 * i + k] = r[k]
        self.tool_xyz = [v for v in tool_xyz_mm]
        self.tool_rot = [v for v in tool_rotation]
        norm = sqrt(tool_axis[0] ** 2 + tool_axis[1] ** 2 + tool_axis[2] ** 2)
        self.tool_axis = [tool_axis[k] / norm for k in range(3)]
        self.origins = [0.0] * (3 * (n + 1))    # joint origins then the tip, world mm
        self.joint_axes = [0.0] * (3 * n)       # unit joint axes, world
        self.direction = [0.0, 0.0, 1.0]        # tool direction of the last fk(), world
        self._r = [0.0] * 9         # running orientation
        self._m = [0.0] * 9         # product scratch
        self._tip = [0.0] * 3
        self._prepare()

    def _prepare(self):
        """Turn every joint axis onto z, so FK turns by q with four products per row.

        With A_i a rotation taking z to joint i's axis, F_i Rot(axis_i, q) =
        F_i A_i Rz(q) A_i^T: the running frame is kept multiplied by A_i, and
        A_i^T moves into what follows (the next joint's translation and fixed
        rotation, the tool). _t: translations, _g: fixed rotations of that form;
        _tool_t, _tool_d: the tool's offset and direction in the last frame.
        _turn_only[i]: _g's rotation i is exactly the identity (joints about
        parallel axes with no fixed turn between, as on the arm5 and planar
        arms), so fk() skips its product.
        """
        n = self.n
        self._t = [0.0] * (3 * n)
        self._g = [0.0] * (9 * n)
        self._turn_only = [False] * n
        before = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]     # A_(i-1); identity before the first
        a = [0.0] * 9
        f = [0.0] * 9
        m = [0.0] * 9
        for i in range(n):
            for k in range(9):
                f[k] = self.fixed[9 * i + k]
            _z_to(self.axes[3 * i:3 * i + 3], a)
            _transpose_times(before, f, m)          # A_(i-1)^T F_i
            _mul_into(m, a, f)                      # ... A_i
            for k in range(9):
                self._g[9 * i + k] = f[k]
            self._turn_only[i] = f == [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
            self._rotate_back(before, self.xyz[3 * i:3 * i + 3], self._t, 3 * i)
            for k in range(9):
                before[k] = a[k]
        self._tool_t = [0.0] * 3
        self._rotate_back(before, self.tool_xyz, self._tool_t, 0)
        d = [0.0] * 3
        tr = self.tool_rot
        ax = self.tool_axis
        for k in range(3):
            d[k] = tr[3 * k] * ax[0] + tr[3 * k + 1] * ax[1] + tr[3 * k + 2] * ax[2]
        self._tool_d = [0.0] * 3
        self._rotate_back(before, d, self._tool_d, 0)

    @staticmethod
    def _rotate_back(a, v, out, at):
        """out[at:at + 3] = transpose(a) * v."""
        for k in range(3):
            out[at + k] = a[k] * v[0] + a[3 + k] * v[1] + a[6 + k] * v[2]

    def fk(self, q, out):
        """Tool tip (x, y, z mm) for joints q (radians), into out; also self.origins,
        self.joint_axes and self.direction."""
        r = self._r
        m = self._m
        r[0] = r[4] = r[8] = 1.0
        r[1] = r[2] = r[3] = r[5] = r[6] = r[7] = 0.0
        px = py = pz = 0.0
        t = self._t
        g = self._g
        origins = self.origins
        joint_axes = self.joint_axes
        turn_only = self._turn_only
        for i in range(self.n):
            k = 3 * i
            fx = t[k]
            fy = t[k + 1]
            fz = t[k + 2]
            px += r[0] * fx + r[1] * fy + r[2] * fz
            py += r[3] * fx + r[4] * fy + r[5] * fz
            pz += r[6] * fx + r[7] * fy + r[8] * fz
            origins[k] = px
            origins[k + 1] = py
            origins[k + 2] = pz
            # m = r * G_i (r itself where G_i is the identity), then r = m * Rz(q):
            # only the first two columns turn.
            src = r
            if not turn_only[i]:
                src = m
                b = 9 * i
                for row in range(0, 9, 3):
                    r0 = r[row]
                    r1 = r[row + 1]
                    r2 = r[row + 2]
                    m[row] = r0 * g[b] + r1 * g[b + 3] + r2 * g[b + 6]
                    m[row + 1] = r0 * g[b + 1] + r1 * g[b + 4] + r2 * g[b + 7]
                    m[row + 2] = r0 * g[b + 2] + r1 * g[b + 5] + r2 * g[b + 8]
            c = cos(q[i])
            s = sin(q[i])
            for row in range(0, 9, 3):
                m0 = src[row]
                m1 = src[row + 1]
                r[row] = c * m0 + s * m1
                r[row + 1] = c * m1 - s * m0
                r[row + 2] = src[row + 2]
            # r is the joint's world frame times A_i, whose z column is the joint axis.
            joint_axes[k] = r[2]
            joint_axes[k + 1] = r[5]
            joint_axes[k + 2] = r[8]
        fx, fy, fz = self._tool_t
        px += r[0] * fx + r[1] * fy + r[2] * fz
        py += r[3] * fx + r[4] * fy + r[5] * fz
        pz += r[6] * fx + r[7] * fy + r[8] * fz
        k = 3 * self.n
        origins[k] = px
        origins[k + 1] = py
        origins[k + 2] = pz
        dx, dy, dz = self._tool_d
        d = self.direction
        d[0] = r[0] * dx + r[1] * dy + r[2] * dz
        d[1] = r[3] * dx + r[4] * dy + r[5] * dz
        d[2] = r[6] * dx + r[7] * dy + r[8] * dz
        out[0] = px
        out[1] = py
        out[2] = pz
        return out

    def fk_moves(self, q, steps, tip, moves):
        """Solver.fk_moves from the Jacobian: joint i turns the tip about its world
        axis through its origin, by axis x (tip - origin) per radian."""
        self.fk(q, tip)
        x = tip[0]
        y = tip[1]
        z = tip[2]
        o = self.origins
        a = self.joint_axes
        for k in range(0, 3 * self.n, 3):
            dx = x - o[k]
            dy = y - o[k + 1]
            dz = z - o[k + 2]
            ax = a[k]
            ay = a[k + 1]
            az = a[k + 2]
            s = steps[k // 3]
            moves[k] = (ay * dz - az * dy) * s
            moves[k + 1] = (az * dx - ax * dz) * s
            moves[k + 2] = (ax * dy - ay * dx) * s
        return tip

    def joint_points(self, q):
        """Every joint origin and the tip of joints q (radians), x y z mm each: fk's
        self.origins (refilled by every call and by fk)."""
        self.fk(q, self._tip)
        return self.origins

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
