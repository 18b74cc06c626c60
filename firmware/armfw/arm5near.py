# SPDX-License-Identifier: MIT
"""The 5-joint arm's continuation solve (armfw.arm5): ik_near, the answer of a target
near the last one, proven to be ik's own without building every candidate. A
function of an Arm5Solver (self): its class takes it in as a method.
"""

from math import atan2, cos, sin, sqrt, pi

from armfw.arm5fk import AXIS_EPS
from armfw.solver import MIN_MOTION, NEAR_RATIO, NEAR_FLOOR
from armfw.status import SINGULAR

_INF = float("inf")
_NEG_INF = -_INF

# The base angle of a continued candidate is this close (radians) to the
# current one; the turned one is half a turn away.
NEAR_YAW = 1.0
_NEAR_YAW_NEG = -NEAR_YAW


def ik_near(self, target, out, current):
    """ik(target, out, current, MIN_MOTION) for a target near the one whose answer
    current is (a line's next step): the same status, angles and elbow to the
    bit, at less cost where it can prove the answer.

    Between neighbouring steps of a path the arm barely moves, so the answer
    is the candidate that continues current: the same half turn of the base,
    the same elbow. Only that one is built (with ik's arithmetic and fits),
    and it is returned where the minimum-motion choice provably picks it.
    Every other candidate is G from it in one joint: the other elbow in the
    elbow (its stored elbow angle is minus this one's, fitted as ik fits it),
    the turned pair in the base yaw (the fitted yaws of the two half turns).
    When each joint of the continued candidate is within D < (G - NEAR_FLOOR)
    / NEAR_RATIO of current (the roll is current's, inside its limits: cost 0),
    its cost, the squared motion summed over yaw and the pitch joints, is at
    most 4 D^2, and by the triangle inequality another's term in that one
    joint alone is at least (G - D)^2 > (2 D)^2; a float sum of terms >= 0
    never falls below one of them, and the margins dwarf the rounding. So it
    is the strictly cheapest valid candidate (the only one where the others
    cannot fit the limits: G infinite). With zones its pose is checked as ik
    checks its choice (the same call, the same pose).

    Anything else is ik's own answer, the full solve: a tool offset, input ik
    refuses, a failing two-link solve, the roll outside its limits, no
    candidate within NEAR_YAW of current's yaw or one that cannot fit the
    limits, a motion not proven small enough (near a singular pose, a big
    step, another current), a pose in a zone.
    """
    try:
        if self._offset:
            return self.ik(target, out, current, MIN_MOTION)
        # Each read once, as ik reads them (not 4 and 5 of them: ValueError, ik answers).
        x, y, z, pitch = target
        b0, b1, b2, b3, roll = current
        # NaN and inf in current fail the comparisons below, in target the
        # two-link solve (sin(inf) raises ValueError): ik answers them.
        lo = self._lo_eps
        hi = self._hi_eps
        if not lo[4] <= roll <= hi[4]:
            return self.ik(target, out, current, MIN_MOTION)
        # As Arm5Solver's ik computes them, to the bit.
        sp = sin(pitch)
        cp = cos(pitch)
        if not -pi < pitch <= pi:
            pitch = atan2(sp, cp)
        r = sqrt(x * x + y * y)
        if r < AXIS_EPS:
            # On the axis the yaw is current's: an infinite one would reach the
            # whole-turn fit, which cannot count its turns (ik refuses it first).
            if not _NEG_INF < b0 < _INF:
                return self.ik(target, out, current, MIN_MOTION)
            yaw = b0
        else:
            yaw = atan2(y, x)
        pair = self._pair
        l3 = self.l3
        st = self._links.solve_pair(z - self.base - l3 * cp, r - l3 * sp, pair)
        if st > SINGULAR:
            return self.ik(target, out, current, MIN_MOTION)
        back = yaw - pi if yaw > 0 else yaw + pi
        facing = yaw if lo[0] <= yaw <= hi[0] else self._refit(0, yaw, 1)
        if lo[0] <= back <= hi[0]:
            turned = back
        else:
            # Solver._refit's first answer inline: no turn fits.
            t = self._turns[0]
            turned = None if t[0] < back < t[1] or t[2] < back < t[3] else self._refit(0, back, 1)
        # The continued half turn: its yaw, the other's (None: those candidates
        # cannot fit), the sign the pitch joints are stored with (see _pose).
        d0 = _INF if facing is None else facing - b0
        if _NEAR_YAW_NEG < d0 < NEAR_YAW:
            c = 0
            a0 = facing
            other = turned
            sign = 1
            nlo = lo
            nhi = hi
        else:
            d0 = _INF if turned is None else turned - b0
            if not _NEAR_YAW_NEG < d0 < NEAR_YAW:
                return self.ik(target, out, current, MIN_MOTION)
            c = 2
            a0 = turned
            other = facing
            sign = -1
            nlo = self._neg_lo_eps
            nhi = self._neg_hi_eps
        # The elbow: up stores pair[0:2], its elbow angle gamma >= 0 (turned: -gamma).
        e = 0 if (b2 >= 0.0) == (sign > 0) else 1
        c += e
        a1 = pair[2 * e]
        a2 = pair[2 * e + 1]
        a3 = pitch - pair[2] - pair[3] if e else pitch - pair[0] - pair[1]
        if not (nlo[1] <= a1 <= nhi[1] and nlo[2] <= a2 <= nhi[2] and nlo[3] <= a3 <= nhi[3]):
            q = self._q[c]          # its store (the fit reads joints 1-3 only)
            q[1] = a1
            q[2] = a2
            q[3] = a3
            if not self._fit_stored(q, sign, 1, 4):
                return self.ik(target, out, current, MIN_MOTION)
            a1 = q[1]
            a2 = q[2]
            a3 = q[3]
        # G: the other elbow's stored elbow angle as ik fits it, and the other half
        # turn's yaw; infinite where those candidates cannot fit the limits (the
        # other elbow's shoulder first: Solver._refit's no-turn answer inline).
        gap = _INF
        a = pair[2 - 2 * e]
        if not nlo[1] <= a <= nhi[1]:
            t = self._turns[1] if sign > 0 else self._turns_neg[1]
            a = None if t[0] < a < t[1] or t[2] < a < t[3] else self._refit(1, a, sign)
        if a is not None:
            a = pair[3 - 2 * e]
            if not nlo[2] <= a <= nhi[2]:
                a = self._refit(2, a, sign)
            if a is not None:
                gap = a - a2 if a >= a2 else a2 - a
        if other is not None:
            g = other - a0 if other >= a0 else a0 - other
            if g < gap:
                gap = g
        if gap < _INF:
            most = (gap - NEAR_FLOOR) / NEAR_RATIO
            least = -most
            if not least < d0 < most:
                return self.ik(target, out, current, MIN_MOTION)
            if sign > 0:
                near = least < a1 - b1 < most and least < a2 - b2 < most and least < a3 - b3 < most
            else:
                # The pose's pitch joints are minus the stored: -a - b, its size a + b's.
                near = least < a1 + b1 < most and least < a2 + b2 < most and least < a3 + b3 < most
        else:
            # The only candidate that fits, however far: ik's choice if current is
            # finite (NaN and inf fail these; ik refuses them).
            near = _NEG_INF < b1 < _INF and _NEG_INF < b2 < _INF and _NEG_INF < b3 < _INF
        if not near:
            return self.ik(target, out, current, MIN_MOTION)
        pose = self._pose_buf
        pose[0] = a0
        if sign > 0:
            pose[1] = a1
            pose[2] = a2
            pose[3] = a3
        else:
            pose[1] = -a1
            pose[2] = -a2
            pose[3] = -a3
        pose[4] = roll
        zones = self.zones
        if zones is not None and not zones.clear(pose):
            return self.ik(target, out, current, MIN_MOTION)
    except (TypeError, ValueError):
        return self.ik(target, out, current, MIN_MOTION)
    out[0] = pose[0]
    out[1] = pose[1]
    out[2] = pose[2]
    out[3] = pose[3]
    out[4] = pose[4]
    self.elbow = self._elbow[c]
    return st
