# SPDX-License-Identifier: MIT
"""Arm kinematics: inverse (analytic, with branch choice) and forward.

Two arm kinds, both described by data (see armfw.board):

- "planar": a two-link planar arm. Target (x, y) in mm; joints t1, t2 in
  radians from the x axis, counter-clockwise.
- "arm5": the 5-joint teaching arm of docs/KINEMATICS.md. J1 base yaw; J2, J3, J4 pitch
  joints about parallel horizontal axes, angles from the vertical Z axis (all
  zero: the arm stands straight up); J5 wrist roll, redundant for position.
  Target (x, y, z, pitch): tool tip in mm, tool pitch in radians from vertical
  (pi/2 = horizontal, pointing away from the base).

ik() writes joint angles (radians) into a caller-owned list and returns a
status from armfw.status. Candidates live in buffers allocated once per arm.
"""

from math import atan2, cos, sin, sqrt, pi, isfinite

from armfw import twolink
from armfw.compat import const
from armfw.numeric import TWO_PI, all_finite, finite
from armfw.status import OK, SINGULAR, TOO_FAR, JOINT_LIMIT, BAD_INPUT, COLLISION, solved

# Branch rules. MIN_MOTION picks the valid solution nearest the current pose
# (a silent branch flip mid-path swings the arm violently); PREFER_UP and
# PREFER_DOWN fall back to the other branch only when theirs is not valid.
MIN_MOTION = const(0)
PREFER_UP = const(1)
PREFER_DOWN = const(2)
RULES = ("min", "up", "down")

UP = const(1)
DOWN = const(-1)
ELBOW_NAMES = {UP: "up", DOWN: "down"}

# Angles this far (radians, ~0.0006 deg, 0.004 us of a 270-degree servo) past
# a joint limit still count as inside: a pose exactly on a limit must survive
# float32 rounding, which moves the solved angles by up to ~3e-6 rad away from
# full stretch (tests/test_float32.py); 1e-6 refused 0.6% of such poses.
LIMIT_EPS = 1e-5

# A target closer than this (mm) to the base axis has no yaw of its own.
AXIS_EPS = 1e-6


def rule_code(rule_name):
    """Rule code for "min", "up" or "down" (ValueError if unknown)."""
    return RULES.index(rule_name)


def fit_angle(q, lo, hi):
    """q moved by whole turns into [lo, hi] (radians), or None if no turn fits."""
    if q > hi + LIMIT_EPS:
        q -= TWO_PI * int((q - hi - LIMIT_EPS) / TWO_PI + 1.0)
    if q < lo - LIMIT_EPS:
        q += TWO_PI * int((lo - LIMIT_EPS - q) / TWO_PI + 1.0)
    if q > hi + LIMIT_EPS:
        return None
    return q


class Solver:
    """What both arm kinds share: limits, candidate buffers, branch choice."""

    kind = ""
    targets = ()      # names of the target coordinates, in order
    n_candidates = 0
    closed_form = True    # ik() solves; False: the host must (armfw.chain)
    zones = None        # armfw.zones.Zones, set by the board loader; None: no zone check

    def __init__(self, names, lo, hi, home):
        self.names = names          # joint names
        self.n = len(names)
        self.lo = lo                # joint limits, radians
        self.hi = hi
        self.home = home            # rest pose, radians
        self.elbow = UP             # branch of the last solution ik() returned
        self._q = [[0.0] * self.n for _ in range(self.n_candidates)]
        self._status = [OK] * self.n_candidates
        self._cost = [0.0] * self.n_candidates
        self._elbow = [UP] * self.n_candidates
        self._pair = [0.0, 0.0, 0.0, 0.0]      # twolink.solve_pair's answer
        # The limits as compared, LIMIT_EPS included, computed once.
        self._lo_eps = [a - LIMIT_EPS for a in lo]
        self._hi_eps = [a + LIMIT_EPS for a in hi]

    def within_limits(self, q):
        """True when every angle of q lies inside its joint limits."""
        lo = self._lo_eps
        hi = self._hi_eps
        for i in range(self.n):
            a = q[i]
            if not finite(a) or a < lo[i] or a > hi[i]:
                return False
        return True

    def _fit_limits(self, q):
        """Fit every angle of q into its limits by whole turns; False if one cannot."""
        lo = self._lo_eps
        hi = self._hi_eps
        for i in range(self.n):
            a = q[i]
            if a < lo[i] or a > hi[i]:
                a = fit_angle(a, self.lo[i], self.hi[i])
                if a is None:
                    return False
                q[i] = a
        return True

    def _choose(self, current, rule, out):
        """Copy the best valid candidate into out; return its status or the honest failure."""
        status = self._status
        elbow = self._elbow
        costs = self._cost
        n = self.n
        for c in range(self.n_candidates):
            if status[c] > SINGULAR:
                continue
            q = self._q[c]
            cost = 0.0
            if current is not None:
                for i in range(n):
                    d = q[i] - current[i]
                    cost += d * d
            if (rule == PREFER_UP and elbow[c] != UP) or (
                    rule == PREFER_DOWN and elbow[c] != DOWN):
                cost += 1e9
            costs[c] = cost
        while True:
            best = -1
            best_cost = 0.0
            for c in range(self.n_candidates):
                if status[c] <= SINGULAR and (best < 0 or costs[c] < best_cost):
                    best = c
                    best_cost = costs[c]
            # Zone hook (armfw.zones): the best candidate that is clear wins, so
            # a clear branch beats minimum motion; usually one check per solve.
            if best < 0 or self.zones is None or self.zones.clear(self._q[best]):
                break
            status[best] = COLLISION
        if best < 0:
            # Reachable but forbidden is its own answer (a zone before a joint
            # limit: a pose exists, something is in its way); otherwise the
            # primary candidate's geometric verdict (TOO_FAR / TOO_CLOSE / BAD_INPUT).
            for forbidden in (COLLISION, JOINT_LIMIT):
                for c in range(self.n_candidates):
                    if self._status[c] == forbidden:
                        return forbidden
            return self._status[0]
        q = self._q[best]
        for i in range(self.n):
            out[i] = q[i]
        self.elbow = self._elbow[best]
        return self._status[best]

    def ik(self, target, out, current=None, rule=MIN_MOTION):
        """Solve target into out (radians); returns the status.

        current: the pose the arm is in (radians) for minimum-motion choice, or
        None. rule: MIN_MOTION, PREFER_UP or PREFER_DOWN. On a failing status
        out is left untouched.
        """
        if not _finite_vector(target, len(self.targets)):
            return BAD_INPUT
        if current is not None and not _finite_vector(current, self.n):
            return BAD_INPUT
        self._candidates(target, current)
        return self._choose(current, rule, out)

    def fk_error(self, target, q, current=None):
        """How far FK of q misses target: (position error mm, pitch error rad).

        current: the pose ik() was given, if any (arm5 reads the pitch of a
        target on the base axis in the plane of the current yaw).
        """
        raise NotImplementedError


class PlanarSolver(Solver):
    """Two-link planar arm; joints (t1, t2)."""

    kind = "planar"
    targets = ("x", "y")
    n_candidates = 2

    def __init__(self, l1, l2, names, lo, hi, home):
        self.l1 = l1
        self.l2 = l2
        self.reach = l1 + l2
        Solver.__init__(self, names, lo, hi, home)
        # Elbow up (the elbow above the line to a target on +x) is t2 <= 0.
        self._elbow[0] = UP
        self._elbow[1] = DOWN

    def _candidates(self, target, current):
        pair = self._pair
        st = twolink.solve_pair(self.l1, self.l2, target[0], target[1], pair)
        for c in range(2):
            s = st
            if solved(st):
                # Up (candidate 0) is the branch with t2 <= 0: pair[2], pair[3].
                q = self._q[c]
                k = 2 - 2 * c
                q[0] = pair[k]
                q[1] = pair[k + 1]
                if not self._fit_limits(q):
                    s = JOINT_LIMIT
            self._status[c] = s

    def fk(self, q, out):
        """Tool (x, y) in mm for joints q (radians), into out."""
        return twolink.forward(self.l1, self.l2, q[0], q[1], out)

    def fk_error(self, target, q, current=None):
        p = self.fk(q, [0.0, 0.0])
        dx = p[0] - target[0]
        dy = p[1] - target[1]
        return sqrt(dx * dx + dy * dy), 0.0


class Arm5Solver(Solver):
    """The 5-joint teaching arm; joints (yaw, shoulder, elbow, wrist pitch, wrist roll).

    Candidates: the base faces the target (yaw = atan2(y, x)) or turns away
    from it by half a turn and leans back over itself, each with both elbow
    branches. Elbow "up" is the branch that, reaching forward, lifts the elbow
    above the shoulder-wrist line (q3 >= 0 facing the target).
    Wrist roll does not move the tool tip: IK keeps the current roll (0 with
    no current pose).
    """

    kind = "arm5"
    targets = ("x", "y", "z", "pitch")
    n_candidates = 4

    def __init__(self, l1, l2, l3, base, names, lo, hi, home):
        self.l1 = l1
        self.l2 = l2
        self.l3 = l3
        self.base = base    # height of the J2 axis above the base plane, mm
        self.reach = l1 + l2
        Solver.__init__(self, names, lo, hi, home)
        self._elbow[0] = UP
        self._elbow[1] = DOWN
        self._elbow[2] = UP
        self._elbow[3] = DOWN

    def _candidates(self, target, current):
        x = target[0]
        y = target[1]
        sp = sin(target[3])
        cp = cos(target[3])
        # Whole turns off the pitch first: q4 = pitch - q2 - q3 must not lose
        # the digits of a large pitch that sin() and cos() keep.
        pitch = atan2(sp, cp)
        r = sqrt(x * x + y * y)
        status = self._status
        if not isfinite(r):
            # x*x + y*y overflowed (from 1e154 mm in double, 2e19 in float32):
            # a finite target farther than any reach, not bad input.
            for c in range(4):
                status[c] = TOO_FAR
            return
        if r < AXIS_EPS:
            yaw = current[0] if current is not None else 0.0
        else:
            yaw = atan2(y, x)
        roll = current[4] if current is not None else 0.0
        # Wrist point in the arm's vertical plane, relative to the J2 axis; the
        # planar solver's x axis is vertical here, its y axis horizontal.
        pair = self._pair
        st = twolink.solve_pair(self.l1, self.l2, target[2] - self.base - self.l3 * cp,
                                r - self.l3 * sp, pair)
        if not solved(st):
            for c in range(4):
                status[c] = st
            return
        # Facing the target: up is q3 >= 0 (pair[0:2]), down q3 <= 0 (pair[2:4]).
        # Turned half a turn and leaning back (wrist at -r, pitch -pitch), the
        # two-link answers are the exact mirrors: every pitch joint negated.
        back = yaw - pi if yaw > 0 else yaw + pi
        for c in range(4):
            q = self._q[c]
            k = 2 * (c & 1)
            q2 = pair[k]
            q3 = pair[k + 1]
            q4 = pitch - q2 - q3
            if c < 2:
                q[0] = yaw
                q[1] = q2
                q[2] = q3
                q[3] = q4
            else:
                q[0] = back
                q[1] = -q2
                q[2] = -q3
                q[3] = -q4
            q[4] = roll
            status[c] = st if self._fit_limits(q) else JOINT_LIMIT

    def fk(self, q, out):
        """Tool (x, y, z mm, pitch rad) for joints q (radians), into out.

        The pitch is the tool's angle from vertical in the plane the base faces.
        """
        a2 = q[1]
        a3 = a2 + q[2]
        a4 = a3 + q[3]
        s = self.l1 * sin(a2) + self.l2 * sin(a3) + self.l3 * sin(a4)
        out[0] = s * cos(q[0])
        out[1] = s * sin(q[0])
        out[2] = self.base + self.l1 * cos(a2) + self.l2 * cos(a3) + self.l3 * cos(a4)
        out[3] = a4
        return out

    def fk_error(self, target, q, current=None):
        p = self.fk(q, [0.0, 0.0, 0.0, 0.0])
        dx = p[0] - target[0]
        dy = p[1] - target[1]
        dz = p[2] - target[2]
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


def _finite_vector(values, n):
    """True when values is a sequence of n finite numbers."""
    try:
        if len(values) != n:
            return False
    except TypeError:
        return False
    return all_finite(values)


def _asin_clamped(v):
    if v >= 1.0:
        return pi / 2
    return atan2(v, sqrt(1.0 - v * v))
