# SPDX-License-Identifier: MIT
"""The two-link planar arm: target (x, y) in mm; joints t1, t2 in radians from
the x axis, counter-clockwise (armfw.solver has what all solvers share)."""

from math import cos, sin, sqrt, isfinite

from armfw import twolink
from armfw.solver import MIN_MOTION, PREFER_UP, PREFER_DOWN, UP, DOWN, NEAR_RATIO, NEAR_FLOOR, Solver
from armfw.status import SINGULAR, JOINT_LIMIT, BAD_INPUT, COLLISION


_INF = float("inf")

class PlanarSolver(Solver):
    """Two-link planar arm; joints (t1, t2)."""

    kind = "planar"
    elbow_joint = 1
    targets = ("x", "y")
    n_candidates = 2

    def __init__(self, l1, l2, names, lo, hi, home):
        self.l1 = l1
        self.l2 = l2
        self.reach = l1 + l2    # mm, the farthest the tip gets from the shoulder
        self._links = twolink.TwoLink(l1, l2)
        self._points = [0.0] * 9        # joint_points' answer
        Solver.__init__(self, names, lo, hi, home)
        # Elbow up (the elbow above the line to a target on +x) is t2 <= 0.
        self._elbow[0] = UP
        self._elbow[1] = DOWN

    def ik(self, target, out, current=None, rule=MIN_MOTION):
        """Solve target (x, y mm) into out (radians); returns the status.

        current: the pose the arm is in (radians) for minimum-motion choice, or
        None. rule: MIN_MOTION, PREFER_UP or PREFER_DOWN. On a failing status
        out is left untouched. Both candidates and their choice in one call
        (with zones, Solver's choice, which checks them).
        """
        # Finite numbers only, each read once (see Arm5Solver.ik).
        try:
            x, y = target
            if not (isfinite(x) and isfinite(y)):
                return BAD_INPUT
            if current is not None:
                b0, b1 = current
                if not (isfinite(b0) and isfinite(b1)):
                    return BAD_INPUT
        except (TypeError, ValueError):     # not numbers, or not 2 of them
            return BAD_INPUT
        status = self._status
        qs = self._q
        pair = self._pair
        lo = self._lo_eps
        hi = self._hi_eps
        st = self._links.solve_pair(x, y, pair)
        if st > SINGULAR:
            status[0] = st
            status[1] = st
            return st
        # Up (candidate 0) is the branch with t2 <= 0: pair[2], pair[3].
        for c in range(2):
            a1 = pair[2 - 2 * c]
            a2 = pair[3 - 2 * c]
            q = qs[c]
            q[0] = a1
            q[1] = a2
            if (lo[0] <= a1 <= hi[0] and lo[1] <= a2 <= hi[1]) or self._fit_stored(q, 1, 0, 2):
                status[c] = st
            else:
                status[c] = JOINT_LIMIT
        # The valid candidate of least cost (the first of equals; see Solver),
        # chosen here, not in a _cheapest method: this is the solver's hot path.
        zones = self.zones
        while True:
            if status[0] > SINGULAR:
                best = 1 if status[1] <= SINGULAR else -1
            elif status[1] > SINGULAR or (current is None and rule == MIN_MOTION):
                best = 0
            elif current is None:
                best = 1 if rule == PREFER_DOWN else 0
            else:
                q = qs[0]
                d = q[0] - b0
                e = q[1] - b1
                up = d * d + e * e
                if rule == PREFER_DOWN:
                    up += 1e9
                q = qs[1]
                d = q[0] - b0
                down = d * d
                if down >= up:
                    best = 0        # its first term already loses: the sum is not needed
                else:
                    e = q[1] - b1
                    down = down + e * e
                    if rule == PREFER_UP:
                        down += 1e9
                    best = 1 if down < up else 0
            if best < 0:
                return self._verdict()
            # Zone hook, as in Solver._choose.
            if zones is None or zones.clear(self._pose(best, self._pose_buf)):
                break
            status[best] = COLLISION
        q = qs[best]
        out[0] = q[0]
        out[1] = q[1]
        self.elbow = self._elbow[best]
        return status[best]

    def joint_points(self, q):
        """The shoulder, elbow and tool tip of joints q (radians) in the solver's own
        list (refilled by every call and by fk), x 0 y mm each: the plane's x and y
        as the zones' x and z (armfw.zones), the shoulder at the origin."""
        p = self._points
        l1 = self.l1
        t1 = q[0]
        t12 = t1 + q[1]
        x1 = l1 * cos(t1)
        y1 = l1 * sin(t1)
        p[3] = x1
        p[5] = y1
        p[6] = x1 + self.l2 * cos(t12)
        p[8] = y1 + self.l2 * sin(t12)
        return p

    def fk(self, q, out):
        """Tool (x, y) in mm for joints q (radians), into out: the tip of joint_points
        (whose list it refills)."""
        p = self.joint_points(q)
        out[0] = p[6]
        out[1] = p[8]
        return out

    def fk_moves(self, q, steps, tip, moves):
        """Solver.fk_moves from the Jacobian: joint i turns the tip about its own
        point (the shoulder, the elbow), by (-dy, dx) per radian."""
        p = self.joint_points(q)
        x = p[6]
        y = p[8]
        tip[0] = x
        tip[1] = y
        s = steps[0]
        moves[0] = -y * s
        moves[1] = x * s
        s = steps[1]
        moves[3] = (p[5] - y) * s
        moves[4] = (x - p[3]) * s
        return tip

    def fk_error(self, target, q, current=None):
        p = self.fk(q, [0.0, 0.0])
        dx = p[0] - target[0]
        dy = p[1] - target[1]
        return sqrt(dx * dx + dy * dy), 0.0

    def ik_near(self, target, out, current):
        """ik(target, out, current, MIN_MOTION) for a target near the one whose answer
        current is (a line's next step): the same status, angles and elbow to the
        bit, at less cost where it can prove the answer.

        Arm5Solver.ik_near's continuation on two joints: only the candidate with
        current's elbow is fitted, and it is returned where each joint of it is
        within D < (G - NEAR_FLOOR) / NEAR_RATIO of current, G the distance to the
        other elbow's t2 (minus this one's, fitted as ik fits it): its cost is at
        most 2 D^2, the other's at least (G - D)^2 > (2 D)^2. Anything else is
        ik's own answer, the full solve.
        """
        try:
            # Each read once, as ik reads them (not 2 of them: ValueError, ik answers).
            x, y = target
            b0, b1 = current
            # NaN and inf in target fail the two-link solve, in current the
            # comparisons below: ik answers them.
            pair = self._pair
            st = self._links.solve_pair(x, y, pair)
            if st > SINGULAR:
                return self.ik(target, out, current, MIN_MOTION)
            lo = self._lo_eps
            hi = self._hi_eps
            # Up (candidate 0) is the branch with t2 <= 0: pair[2], pair[3].
            c = 0 if b1 <= 0.0 else 1
            a1 = pair[2 - 2 * c]
            a2 = pair[3 - 2 * c]
            if not (lo[0] <= a1 <= hi[0] and lo[1] <= a2 <= hi[1]):
                q = self._q[c]
                q[0] = a1
                q[1] = a2
                if not self._fit_stored(q, 1, 0, 2):
                    return self.ik(target, out, current, MIN_MOTION)
                a1 = q[0]
                a2 = q[1]
            # G: the other elbow's t2 as ik fits it (None: it cannot, that candidate is invalid).
            gap = _INF
            a = pair[1 + 2 * c]
            if not lo[1] <= a <= hi[1]:
                a = self._refit(1, a, 1)
            if a is not None:
                gap = a - a2 if a >= a2 else a2 - a
            most = (gap - NEAR_FLOOR) / NEAR_RATIO
            least = -most
            if not (least < a1 - b0 < most and least < a2 - b1 < most):
                return self.ik(target, out, current, MIN_MOTION)
            zones = self.zones
            if zones is not None:
                pose = self._pose_buf
                pose[0] = a1
                pose[1] = a2
                if not zones.clear(pose):
                    return self.ik(target, out, current, MIN_MOTION)
        except (TypeError, ValueError):
            return self.ik(target, out, current, MIN_MOTION)
        out[0] = a1
        out[1] = a2
        self.elbow = self._elbow[c]
        return st
