# SPDX-License-Identifier: MIT
"""A chain arm built like the 5-joint arm, solved in closed form on the board.

Loaded only for a chain board whose arm section says "closed_form": "arm5"
(armfw.board). The arm is the board file's chain (armfw.chain: its FK, joint
points and zones are the chain's, exact to the URDF); what this adds is ik().

The structure it needs, checked when the board loads: joint 1 turns about a
vertical axis (pan), joints 2-4 about parallel axes perpendicular to it
(shoulder, elbow and wrist pitch), joint 5 about an axis in their plane (wrist
roll). Everything else may be offset: the pan axis anywhere on the table, the
shoulder ahead of it and to one side, links bent (the SO-101's upper arm is),
the roll axis to one side of the arm's plane, the tool off the roll axis.
Its parameters are read from the chain's own FK at the zero pose, in the
vertical plane the arm moves in: the shoulder point S (ahead of the pan
axis, height), the links l1, l2 with their angles from vertical at zero
(k1, k2), the roll axis's (k3), and the wrist-to-tip offset split into its
part along the roll axis, the part across it in the plane and the lateral
part, the last two turning with the roll.

Target (x, y, z mm, pitch rad): pitch is the roll axis's angle from
vertical, pointing from the wrist to the tool, in the plane the base faces
(pi/2: horizontal, reaching away). A position-only target (x, y, z) takes
the board's pitch (default_pitch). IK keeps the current wrist roll, as the
arm5 does; the roll turns the tool's lateral offset, so the base angle is
the target's bearing less asin(b / r) (b the lateral offset at that roll)
and no target nearer the pan axis than |b| has a solution (NEAR_AXIS).
"""

from math import atan2, cos, sin, sqrt, pi, isfinite

from armfw.chain import ChainSolver
from armfw.numeric import all_finite, wrap_angle
from armfw.solver import MIN_MOTION, PREFER_UP, PREFER_DOWN, UP, DOWN
from armfw.status import SINGULAR, JOINT_LIMIT, BAD_INPUT, NEAR_AXIS, TOO_FAR
from armfw.twolink import TwoLink, elbow_status

# How far (a dot product of unit axes, ~radians) the chain's axes may be from
# the structure above: a URDF rounds right angles (1.5708 for pi/2: 4e-6 rad).
AXIS_TOL = 1e-4

_INF = float("inf")


class Chain5Solver(ChainSolver):
    """A chain of pan, three parallel pitch joints and a roll, with ik() in closed form.

    Candidates as the arm5's: the base faces the target or turns half a turn
    and leans back over itself, each with the elbow up (the forearm turned
    toward the reach from the upper arm's line, facing) and down.
    """

    targets = ("x", "y", "z", "pitch")
    n_candidates = 4
    closed_form = True
    default_pitch = pi / 2

    def __init__(self, *args):
        ChainSolver.__init__(self, *args)
        if self.n != 5:
            raise ValueError("a closed_form arm5 chain has 5 joints, got %d" % self.n)
        tip = self.fk([0.0] * 5, [0.0] * 3)
        o = self.origins
        a = self.joint_axes
        if abs(a[0]) > AXIS_TOL or abs(a[1]) > AXIS_TOL:
            raise ValueError("closed_form arm5: joint 1 must turn about a vertical axis")
        self._pan_sign = 1.0 if a[2] > 0.0 else -1.0
        self._cx = o[0]
        self._cy = o[1]
        # Forward: where a positive pitch tips the arm (the shoulder axis times up),
        # lateral: up times forward; both horizontal.
        ax = a[3]
        ay = a[4]
        norm = sqrt(ax * ax + ay * ay)
        fx = ay / norm
        fy = -ax / norm
        self._h0 = atan2(fy, fx)
        for i in (2, 3):
            if a[3 * i] * ax + a[3 * i + 1] * ay + a[3 * i + 2] * a[5] < 1.0 - AXIS_TOL:
                raise ValueError("closed_form arm5: joint %d must turn about joint 2's axis" % (i + 1))
        if abs(a[5]) > AXIS_TOL or abs(a[12] * ax + a[13] * ay + a[14] * a[5]) > AXIS_TOL:
            raise ValueError("closed_form arm5: joint 2's axis must be horizontal, joint 5's in the arm's plane")

        def plane(k):      # (forward, up, lateral) of world point k of o, or the tip
            p = tip if k < 0 else o[3 * k:3 * k + 3]
            dx = p[0] - self._cx
            dy = p[1] - self._cy
            return dx * fx + dy * fy, p[2], dy * fx - dx * fy

        sf, su, _ = plane(1)
        ef, eu, _ = plane(2)
        wf, wu, _ = plane(3)
        rf, ru, rl = plane(4)
        tf, tu, tl = plane(-1)
        self._sf = sf
        self._su = su
        self._links = TwoLink(sqrt((ef - sf) ** 2 + (eu - su) ** 2), sqrt((wf - ef) ** 2 + (wu - eu) ** 2))
        self._k1 = atan2(ef - sf, eu - su)
        self._k2 = atan2(wf - ef, wu - eu)
        # The roll axis, pointed from the wrist to the tool; the roll turns the
        # other way about it where the joint's axis points back.
        df = a[12] * fx + a[13] * fy
        du = a[14]
        self._roll_sign = 1.0
        if df * (tf - wf) + du * (tu - wu) < 0.0:
            df = -df
            du = -du
            self._roll_sign = -1.0
        self._k3 = atan2(df, du)
        norm = sqrt(df * df + du * du)
        df /= norm
        du /= norm
        # Wrist to roll origin (fixed) and roll origin to tip (turns with the roll),
        # along the roll axis (d), across it in the plane (n = lateral x d) and lateral.
        self._along = (tf - wf) * df + (tu - wu) * du
        self._across = (rf - wf) * du - (ru - wu) * df
        self._lateral = rl
        self._tn = (tf - rf) * du - (tu - ru) * df
        self._tl = tl - rl

    def _offsets(self, roll):
        """(across, lateral) mm of the tip from the roll axis's line at this roll."""
        p = self._roll_sign * roll
        c = cos(p)
        s = sin(p)
        tn = self._tn
        tl = self._tl
        return self._across + tn * c - tl * s, self._lateral + tn * s + tl * c

    def ik(self, target, out, current=None, rule=MIN_MOTION):
        """Solve target (x, y, z mm[, pitch rad]) into out (radians); returns the status.

        current: the pose the arm is in (radians), for the minimum-motion choice
        and the roll to keep, or None (roll 0). On a failing status out is
        left untouched.
        """
        # Finite numbers only: 3 or 4 of them, and a current pose of 5.
        if not (all_finite(target) and (current is None or all_finite(current))):
            return BAD_INPUT
        try:
            if len(target) == 3:
                x, y, z = target
                pitch = self.default_pitch
            else:
                x, y, z, pitch = target
            yaw = roll = 0.0
            if current is not None:
                yaw, _, _, _, roll = current
        except ValueError:
            return BAD_INPUT
        pitch = wrap_angle(pitch)
        st = self._candidates(x, y, z, pitch, roll, yaw, 4)
        if st:
            return st
        status = self._status
        for c in range(4):
            if status[c] <= SINGULAR and not self._fit_stored(self._q[c], 1, 0, 5):
                status[c] = JOINT_LIMIT
        st = self._choose(current, rule, out)
        # The closed form solves the chain with its axes exactly square; a URDF
        # rounds its right angles (1.5708 for pi/2), which moves the chain's tip
        # up to ~2 um from the model's. The choice is aimed that much the other
        # way, so the chain's own FK lands on the target; where nothing was
        # chosen for a joint limit, the candidates are aimed and checked again
        # (a pose the URDF has on a limit is found). The aimed pose is a few
        # 1e-6 rad from the one the zones passed: far inside any clearance.
        if st <= SINGULAR:
            c = self._chosen
            if self._aim(c, x, y, z, pitch, roll, yaw):
                self._pose(c, out)
                st = status[c]
        elif st == JOINT_LIMIT:
            again = False
            for c in range(4):
                if status[c] == JOINT_LIMIT and self._aim(c, x, y, z, pitch, roll, yaw):
                    again = True
            if again:
                st = self._choose(current, rule, out)
        return st

    def _aim(self, c, x, y, z, pitch, roll, yaw):
        """Solve candidate c again for the target moved by the chain's miss (its FK of c's
        angles); True if that one fits the limits (kept), else c is left as it was."""
        q = self._q[c]
        status = self._status
        keep = self._pose_buf
        before = status[c]
        for i in range(5):
            keep[i] = q[i]
        p = self.fk(q, self._tip)
        self._candidates(x + x - p[0], y + y - p[1], z + z - p[2], pitch, roll, yaw, c)
        if status[c] <= SINGULAR and self._fit_stored(q, 1, 0, 5):
            return True
        for i in range(5):
            q[i] = keep[i]
        status[c] = before
        return False

    def _candidates(self, x, y, z, pitch, roll, yaw, only):
        """Build candidate only (0-3), or all four (only 4), for tool (x, y, z, pitch) at this
        roll, not yet fitted into the joint limits; yaw: the base angle on the pan axis.
        Returns the status when no candidate can exist (each one built gets it), else 0."""
        status = self._status
        x -= self._cx
        y -= self._cy
        r = sqrt(x * x + y * y)
        st = 0
        if not isfinite(r):
            st = TOO_FAR
        across, b = self._offsets(roll)
        if r * r < b * b:
            st = NEAR_AXIS
        if st:
            for c in range(4):
                if only == 4 or c == only:
                    status[c] = st
            return st
        reach = sqrt(r * r - b * b)
        bearing = atan2(y, x) if r >= 1e-6 else self._h0 + self._pan_sign * yaw
        along = self._along
        pair = self._pair
        for half in range(2):
            if only < 4 and only // 2 != half:
                continue
            # Facing (c 0, 1): the tip reach ahead of the pan axis; turned (c 2, 3):
            # behind it, leaning back, the pitch measured the other way.
            f = -reach if half else reach
            a3 = -pitch if half else pitch
            s3 = sin(a3)
            c3 = cos(a3)
            st = self._links.solve_pair(z - along * c3 + across * s3 - self._su,
                                        f - along * s3 - across * c3 - self._sf, pair)
            for e in range(2):
                c = 2 * half + e
                if only < 4 and c != only:
                    continue
                self._elbow[c] = UP if e == half else DOWN
                status[c] = st
                if st > SINGULAR:
                    continue
                t1 = pair[2 * e]
                a2 = t1 + pair[2 * e + 1]
                q = self._q[c]
                q[0] = self._pan_sign * wrap_angle(bearing - atan2(b, f) - self._h0)
                q[1] = t1 - self._k1
                q[2] = a2 - self._k2 - q[1]
                q[3] = a3 - self._k3 - (a2 - self._k2)
                q[4] = roll
        return 0

    def _cheapest(self, current, rule):
        """The valid candidate of least cost (the first of equals), or -1: the cost is the
        squared joint motion from current, plus 1e9 off the branch the rule prefers."""
        want = UP if rule == PREFER_UP else (DOWN if rule == PREFER_DOWN else 0)
        best = -1
        best_cost = _INF
        for c in range(4):
            if self._status[c] > SINGULAR:
                continue
            cost = 0.0
            if current is not None:
                q = self._q[c]
                for i in range(5):
                    d = q[i] - current[i]
                    cost += d * d
            if want and self._elbow[c] != want:
                cost += 1e9
            if best < 0 or cost < best_cost:
                best = c
                best_cost = cost
        self._chosen = best     # the last call's is the choice (Solver._choose)
        return best

    def pose_status(self, q):
        """SINGULAR where the links stretch straight or fold (their own angle, not joint 3's)."""
        return elbow_status(q[2] + self._k2 - self._k1)

    def tool_pose(self, q, out):
        """Tool (x, y, z mm, pitch rad in (-pi, pi]) of joints q: the chain's tip, and the roll
        axis's angle from vertical measured in the direction the tool reaches."""
        self.fk(q, out)
        pitch = q[1] + q[2] + q[3] + self._k3
        heading = self._h0 + self._pan_sign * q[0]
        if (out[0] - self._cx) * cos(heading) + (out[1] - self._cy) * sin(heading) < 0.0:
            pitch = -pitch
        out[3] = wrap_angle(pitch)
        return out

    def fk_error(self, target, q, current=None):
        p = [0.0, 0.0, 0.0, 0.0]
        self.tool_pose(q, p)
        dx = p[0] - target[0]
        dy = p[1] - target[1]
        dz = p[2] - target[2]
        d = wrap_angle(p[3] - (target[3] if len(target) > 3 else self.default_pitch))
        return sqrt(dx * dx + dy * dy + dz * dz), abs(d)
