# SPDX-License-Identifier: MIT
"""The 5-joint arm's forward kinematics (armfw.arm5): joint points, the tool pose as
the protocol speaks it, how far an answer misses its target, and the tool
offset turned into the arm's plane, which the offset candidates of the ik use
too. Functions of an Arm5Solver (self): its class takes them in as methods.
"""

from math import atan2, cos, sin, sqrt, pi

from armfw.numeric import wrap_angle

# A target closer than this (mm) to the base axis has no yaw of its own.
AXIS_EPS = 1e-6


def plane_offset(self, a4, roll, v):
    """The tool offset Ry(a4) Rz(roll) t in the arm's plane frame: v = [along the
    reach, lateral, up]."""
    t = self._tool
    cr = cos(roll)
    sr = sin(roll)
    u = t[0] * cr - t[1] * sr
    v[1] = t[0] * sr + t[1] * cr
    ca = cos(a4)
    sa = sin(a4)
    v[0] = u * ca + t[2] * sa
    v[2] = t[2] * ca - u * sa
    return v



def joint_points(self, q):
    """The J2 axis (on the base axis, base above the base plane), elbow, wrist and
    tool tip of joints q (radians), x y z mm each, in the solver's own list
    (refilled by every call and by fk)."""
    p = self._points
    l1 = self.l1
    l2 = self.l2
    l3 = self.l3
    base = self.base
    a2 = q[1]
    a3 = a2 + q[2]
    a4 = a3 + q[3]
    cy = cos(q[0])
    sy = sin(q[0])
    # Each point's distance from the base axis (r) and height (z), link by link.
    r1 = l1 * sin(a2)
    z1 = base + l1 * cos(a2)
    r2 = r1 + l2 * sin(a3)
    z2 = z1 + l2 * cos(a3)
    r3 = r2 + l3 * sin(a4)
    z3 = z2 + l3 * cos(a4)
    p[2] = base
    p[3] = r1 * cy
    p[4] = r1 * sy
    p[5] = z1
    p[6] = r2 * cy
    p[7] = r2 * sy
    p[8] = z2
    if self._offset:
        # The tip is the offset on from the l3 tip, in the rolled tool frame.
        v = self._plane_offset(a4, q[4], self._v)
        r3 += v[0]
        z3 += v[2]
        p[9] = r3 * cy - v[1] * sy
        p[10] = r3 * sy + v[1] * cy
    else:
        p[9] = r3 * cy
        p[10] = r3 * sy
    p[11] = z3
    return p


def fk(self, q, out):
    """Tool (x, y, z mm, pitch rad) for joints q (radians), into out: the tip of
    joint_points (whose list it refills).

    The pitch is the tool's angle from vertical in the plane the base faces.
    """
    p = self.joint_points(q)
    out[0] = p[9]
    out[1] = p[10]
    out[2] = p[11]
    out[3] = q[1] + q[2] + q[3]
    return out


def fk_moves(self, q, steps, tip, moves):
    """Solver.fk_moves from the Jacobian of the tool position: the yaw turns the tip
    about the base axis, each pitch joint about its horizontal axis through its
    point (J2 axis, elbow, wrist), the roll about the tool axis through the flange
    (only a tool offset moves with it)."""
    p = self.joint_points(q)
    x = p[9]
    y = p[10]
    z = p[11]
    a4 = q[1] + q[2] + q[3]
    tip[0] = x
    tip[1] = y
    tip[2] = z
    tip[3] = a4
    s = steps[0]
    moves[0] = -y * s
    moves[1] = x * s
    moves[2] = 0.0
    cy = cos(q[0])
    sy = sin(q[0])
    for k in range(0, 9, 3):
        # The pitch axis is (-sy, cy, 0): up and down with the point's height above
        # the axis, back and forth with its reach from it.
        s = steps[k // 3 + 1]
        up = (z - p[k + 2]) * s
        moves[k + 3] = up * cy
        moves[k + 4] = up * sy
        moves[k + 5] = ((p[k] - x) * cy + (p[k + 1] - y) * sy) * s
    if self._offset:
        # The tool axis (sin a4, 0, cos a4) times the offset, in the arm's plane frame
        # [reach, lateral, up] (joint_points left the offset there), then turned by the yaw.
        v = self._v
        sa = sin(a4)
        ca = cos(a4)
        s = steps[4]
        reach = -ca * v[1] * s
        lateral = (ca * v[0] - sa * v[2]) * s
        moves[12] = reach * cy - lateral * sy
        moves[13] = reach * sy + lateral * cy
        moves[14] = sa * v[1] * s
    else:
        moves[12] = moves[13] = moves[14] = 0.0
    return tip


def tool_pose(self, q, out):
    """Tool (x, y, z mm, pitch rad in (-pi, pi]) of joints q (radians) as the protocol
    speaks it, into out: fk's point, and the pitch measured in the direction the
    tool reaches, so a base turned half a turn and leaning back over itself
    reports it unchanged (fk gives it in the plane the base faces: -pitch there)."""
    self.fk(q, out)
    if out[0] * cos(q[0]) + out[1] * sin(q[0]) < 0.0:
        out[3] = -out[3]
    out[3] = wrap_angle(out[3])
    return out


def fk_error(self, target, q, current=None):
    # With a tool offset the base need not face the tip: the pitch is compared
    # as the protocol reports it; without one, as FK gives it (see below).
    p = [0.0, 0.0, 0.0, 0.0]
    if self._offset:
        self.tool_pose(q, p)
    else:
        self.fk(q, p)
    dx = p[0] - target[0]
    dy = p[1] - target[1]
    dz = p[2] - target[2]
    if self._offset:
        d = p[3] - target[3]
        return sqrt(dx * dx + dy * dy + dz * dz), abs(atan2(sin(d), cos(d)))
    # Compare tool directions, not pitch numbers: a base turned half a turn
    # reaches the same tool direction with the opposite pitch.
    tx = target[0]
    ty = target[1]
    tr = sqrt(tx * tx + ty * ty)
    if tr >= AXIS_EPS:
        az = atan2(ty, tx)
    elif current is not None:
        az = current[0]     # as ik() read it; q[0] may be the base turned away
    else:
        az = q[0]
    ex = sin(p[3]) * cos(q[0]) - sin(target[3]) * cos(az)
    ey = sin(p[3]) * sin(q[0]) - sin(target[3]) * sin(az)
    ez = cos(p[3]) - cos(target[3])
    chord = sqrt(ex * ex + ey * ey + ez * ez)
    return sqrt(dx * dx + dy * dy + dz * dz), 2.0 * _asin_clamped(chord / 2.0)

def _asin_clamped(v):
    if v >= 1.0:
        return pi / 2
    return atan2(v, sqrt(1.0 - v * v))
