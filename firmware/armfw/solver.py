# SPDX-License-Identifier: MIT
"""What every arm's solver shares: branch rules, joint limits, the choice among candidates.

A solver's ik() writes joint angles (radians) into a caller-owned list and
returns a status from armfw.status; candidates live in buffers allocated once
per arm. The arm kinds are armfw.planar, armfw.arm5 (closed forms) and
armfw.chain (forward kinematics only); armfw.board imports the one a board
names. The host imports them all through armfw.kinematics.
"""

from armfw.compat import const
from armfw.numeric import TWO_PI, finite
from armfw.status import OK, JOINT_LIMIT, COLLISION

# Branch rules. MIN_MOTION picks the valid solution nearest the current pose
# (a silent branch flip mid-path swings the arm violently); PREFER_UP and
# PREFER_DOWN fall back to the other branch only when theirs is not valid.
MIN_MOTION = const(0)
PREFER_UP = const(1)
PREFER_DOWN = const(2)
RULES = ("min", "up", "down")

# Elbow branches of an arm (planar: up is t2 <= 0; arm5: up is q3 >= 0 facing
# the target). Not +1 / -1: twolink.solve takes the sign of sin(t2), which is
# up on one arm kind and down on the other, and refuses these.
UP = const(2)
DOWN = const(3)
ELBOW_NAMES = {UP: "up", DOWN: "down"}

# Angles this far (radians, ~0.0006 deg, 0.004 us of a 270-degree servo) past
# a joint limit still count as inside, for every check of a joint limit (the
# solver's, joints, pose set, path add, the host's chains): a pose exactly on a
# limit must survive float32 rounding, which moves the solved angles by a few
# 1e-6 rad away from full stretch (tests/test_float32.py), and an angle ik
# answers must be accepted back.
LIMIT_EPS = 1e-5

# How far (radians) Solver._refit's shortcuts keep from the edges of their
# intervals, where fit_angle's rounding decides.
TURN_MARGIN = 1e-9

_INF = float("inf")

# ik_near's proof (see Arm5Solver.ik_near): a candidate G (radians) from the
# continued one in one joint costs more than it when G > NEAR_RATIO * D +
# NEAR_FLOOR, D the continued one's largest joint motion from the current pose.
# 3 is the bound itself (4 D^2 < (G - D)^2); the 0.001 of it and the floor are
# wider by far than the rounding of the costs (a relative 1e-15) and keep a
# cost of 0 from a tie.
NEAR_RATIO = 3.001
NEAR_FLOOR = 1e-9


def rule_code(rule_name):
    """Rule code for "min", "up" or "down" (ValueError if unknown)."""
    return RULES.index(rule_name)


def fit_angle(q, lo, hi):
    """q moved by whole turns into [lo, hi] (radians), or None if no turn fits."""
    if q > hi + LIMIT_EPS:
        q -= TWO_PI * int((q - hi - LIMIT_EPS) / TWO_PI + 1.0)
    if q < lo - LIMIT_EPS:
        q += TWO_PI * int((lo - LIMIT_EPS - q) / TWO_PI + 1.0)
    # An angle of 1e16 rad has no digits left below a turn: the turns taken off
    # can land it anywhere, below lo too (found by the property tests).
    if q > hi + LIMIT_EPS or q < lo - LIMIT_EPS:
        return None
    return q


class Solver:
    """What both arm kinds share: limits, candidate buffers, branch choice.

    A subclass's ik(target, out, current=None, rule=MIN_MOTION) fills, per
    candidate c, _status[c] and the stored pose _q[c]: the joint angles (the
    arm5's turned-base candidates store their pitch joints negated: see
    Arm5Solver._pose, which hands out the angles).
    The choice: the valid candidate of least cost (the first of equals), the
    cost being the squared joint motion from current, summed in joint order,
    plus 1e9 when the rule prefers the other branch; with zones, the cheapest
    one that is clear of them. _choose makes it from a subclass's
    _cheapest(current, rule) (the candidate or -1) and writes its angles to
    the caller's list; the planar arm makes it inside its ik.
    """

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
        nc = self.n_candidates
        self._q = [[0.0] * self.n for _ in range(nc)]
        self._status = [OK] * nc
        self._elbow = [UP] * nc
        self._pose_buf = [0.0] * self.n      # a candidate's angles for the zone check
        self._pair = [0.0, 0.0, 0.0, 0.0]      # twolink.TwoLink.solve_pair's answer
        # The limits as compared, LIMIT_EPS included, computed once; the same
        # negated for stored values that are minus the angle.
        self._lo_eps = [a - LIMIT_EPS for a in lo]
        self._hi_eps = [a + LIMIT_EPS for a in hi]
        self._neg_lo_eps = [-a for a in self._hi_eps]
        self._neg_hi_eps = [-a for a in self._lo_eps]
        # Per joint spanning less than a turn, the open intervals where
        # fit_angle's answer is certain: no turn fits (just past either limit, up
        # to a turn beyond the other), one turn down fits, one turn up fits.
        # TURN_MARGIN keeps clear of the edges, where its rounding decides.
        self._turns = []
        self._turns_neg = []    # the same for stored values that are minus the angle
        m = TURN_MARGIN
        for i in range(self.n):
            a = self._lo_eps[i]
            b = self._hi_eps[i]
            if b - a < TWO_PI - 2.0 * m:
                t = (b + m, a + TWO_PI - m, b - TWO_PI + m, a - m,
                     a + TWO_PI + m, b + TWO_PI - m, a - TWO_PI + m, b - TWO_PI - m)
            else:
                t = (0.0,) * 8
            self._turns.append(t)
            self._turns_neg.append((-t[1], -t[0], -t[3], -t[2], -t[7], -t[6], -t[5], -t[4]))

    def within_limits(self, q):
        """True when every angle of q lies inside its joint limits."""
        lo = self._lo_eps
        hi = self._hi_eps
        for i in range(self.n):
            a = q[i]
            if not finite(a) or a < lo[i] or a > hi[i]:
                return False
        return True

    def _refit(self, i, v, sign):
        """A stored value v of joint i (the angle times sign) that is outside the limits,
        moved by whole turns into them; None when no turn fits.

        fit_angle's answer, found without its arithmetic where it is certain:
        no turn fits, or exactly one turn does (the stored value one turn
        nearer zero, as fit_angle computes it).
        """
        turns = self._turns[i] if sign > 0 else self._turns_neg[i]
        if turns[0] < v < turns[1] or turns[2] < v < turns[3]:
            return None
        if turns[4] < v < turns[5]:
            return v - TWO_PI
        if turns[6] < v < turns[7]:
            return v + TWO_PI
        if sign > 0:
            return fit_angle(v, self.lo[i], self.hi[i])
        a = fit_angle(-v, self.lo[i], self.hi[i])
        return None if a is None else -a

    def _fit_stored(self, q, sign, first, stop):
        """Fit the stored joints first..stop-1 of a candidate into the limits; False if one cannot."""
        if sign > 0:
            lo = self._lo_eps
            hi = self._hi_eps
        else:
            lo = self._neg_lo_eps
            hi = self._neg_hi_eps
        for i in range(first, stop):
            a = q[i]
            if a < lo[i] or a > hi[i]:
                a = self._refit(i, a, sign)
                if a is None:
                    return False
                q[i] = a
        return True

    def _pose(self, c, out):
        """Candidate c's joint angles into out (stored as they are)."""
        q = self._q[c]
        for i in range(self.n):
            out[i] = q[i]
        return out

    def _choose(self, current, rule, out):
        """Copy the best valid candidate into out; return its status or the honest failure."""
        status = self._status
        zones = self.zones
        while True:
            best = self._cheapest(current, rule)
            # Zone hook (armfw.zones): the best candidate that is clear wins, so
            # a clear branch beats minimum motion; usually one check per solve.
            if best < 0 or zones is None or zones.clear(self._pose(best, self._pose_buf)):
                break
            status[best] = COLLISION
        if best < 0:
            return self._verdict()
        self._pose(best, out)
        self.elbow = self._elbow[best]
        return status[best]

    def _verdict(self):
        """The status when no candidate is left. Reachable but forbidden is its own
        answer (a zone before a joint limit: a pose exists, something is in its
        way); otherwise the primary candidate's geometric verdict (TOO_FAR /
        TOO_CLOSE / BAD_INPUT)."""
        status = self._status
        for forbidden in (COLLISION, JOINT_LIMIT):
            for c in range(self.n_candidates):
                if status[c] == forbidden:
                    return forbidden
        return status[0]

    # The joint whose full stretch or fold is the arm's singular pose (the two-link
    # core's elbow, armfw.twolink); None: the solver knows of none (a chain's are the
    # host solver's business).
    elbow_joint = None

    def pose_status(self, q):
        """OK, or SINGULAR where pose q (radians) is near full stretch or fold of the elbow:
        a small tool motion needs a large joint motion there (the warning ik gives)."""
        if self.elbow_joint is None:
            return OK
        from armfw.twolink import elbow_status
        return elbow_status(q[self.elbow_joint])

    def fk_moves(self, q, steps, tip, moves):
        """fk(q, tip), and into moves (x, y, z per joint; a plane arm's z left alone) how
        far the tool's position moves when joint i alone turns by steps[i] (radians).
        Here by finite differences, one fk per joint (q is turned and put back); the
        arm kinds answer it to first order from one fk and their Jacobian."""
        dim = 3 if len(tip) > 3 else len(tip)
        for i in range(self.n):
            a = q[i]
            q[i] = a + steps[i]
            self.fk(q, tip)
            q[i] = a
            for j in range(dim):
                moves[3 * i + j] = tip[j]
        self.fk(q, tip)
        for i in range(self.n):
            for j in range(dim):
                moves[3 * i + j] -= tip[j]
        return tip

    def tool_pose(self, q, out):
        """Tool coordinates of joints q (radians) as the protocol speaks them, into out:
        fk's, except where an arm kind's protocol reads them otherwise (Arm5Solver's pitch)."""
        return self.fk(q, out)

    def joint_points(self, q):
        """The arm's joint points for pose q (radians): x y z mm each, base first, the
        tool tip last, in a list the solver owns and refills on every call and on
        every fk (whose tip is the last point). The keep-out check (armfw.zones)
        tests the links between them; the host draws them."""
        raise NotImplementedError

    def fk_error(self, target, q, current=None):
        """How far FK of q misses target: (position error mm, pitch error rad).

        current: the pose ik() was given, if any (arm5 reads the pitch of a
        target on the base axis in the plane of the current yaw).
        """
        raise NotImplementedError

    def ik_near(self, target, out, current):
        """ik(target, out, current, MIN_MOTION) for a target near the one whose answer
        current is (a line's next step): the same status, angles and elbow to the
        bit. The closed-form arms find it cheaper where they can prove it is that
        (see Arm5Solver.ik_near); here it is the full solve."""
        return self.ik(target, out, current, MIN_MOTION)
