# SPDX-License-Identifier: MIT
"""The 5-joint teaching arm of docs/KINEMATICS.md (armfw.solver has what all solvers share).

J1 base yaw; J2, J3, J4 pitch joints about parallel horizontal axes, angles
from the vertical Z axis (all zero: the arm stands straight up); J5 wrist
roll, redundant for position. Target (x, y, z, pitch): tool tip in mm, tool
pitch in radians from vertical (pi/2 = horizontal, pointing away from the base).

This module is the closed-form ik and its choice among the candidates; the
forward kinematics and the tool offset's geometry are armfw.arm5fk's, the
continuation solve of a line's steps (ik_near) armfw.arm5near's: functions
Arm5Solver takes into its class as methods (one class, so a method is found
where it was before the split). armfw.arm5near loads with the first line:
a board that only moves joint to joint never holds it.
"""

from math import atan2, cos, sin, sqrt, pi, isfinite

from armfw import twolink
from armfw import arm5fk
from armfw.arm5fk import AXIS_EPS
from armfw.solver import MIN_MOTION, PREFER_UP, PREFER_DOWN, UP, DOWN, Solver
from armfw.status import SINGULAR, TOO_FAR, JOINT_LIMIT, BAD_INPUT, NEAR_AXIS

_INF = float("inf")


class Arm5Solver(Solver):
    """The 5-joint teaching arm; joints (yaw, shoulder, elbow, wrist pitch, wrist roll).

    Candidates: the base faces the target (yaw = atan2(y, x)) or turns away
    from it by half a turn and leans back over itself, each with both elbow
    branches. Elbow "up" is the branch that, reaching forward, lifts the elbow
    above the shoulder-wrist line (q3 >= 0 facing the target).
    IK keeps the current wrist roll (0 with no current pose); a caller that
    sets the roll passes it as current[4].

    tool: the tool tip's offset (mm) from the l3 tip in the flange frame,
    [across, lateral, along the tool]: z along the tool, y lateral (horizontal
    at roll 0, to the left of a tool reaching away from the base), x across
    the tool in the arm's plane; the frame turns with the wrist roll q5:
    R = Rz(q1) Ry(q2+q3+q4) Rz(q5). With a lateral component the base angle
    is atan2(y, x) - asin(b / r) (b the lateral offset at this roll, r the
    target's distance from the base axis) and no target nearer the axis than
    |b| has a solution (NEAR_AXIS). A zero offset takes the original closed
    form, so its answers are unchanged to the bit.
    """

    kind = "arm5"
    elbow_joint = 2
    targets = ("x", "y", "z", "pitch")
    n_candidates = 4

    # The forward kinematics and the tool offset in the arm's plane (armfw.arm5fk).
    joint_points = arm5fk.joint_points
    fk = arm5fk.fk
    fk_moves = arm5fk.fk_moves
    tool_pose = arm5fk.tool_pose
    fk_error = arm5fk.fk_error
    _plane_offset = arm5fk.plane_offset
    def ik_near(self, target, out, current):
        """A line's next step: armfw.arm5near.ik_near, loaded by the first line, which puts
        it in this method's place (the lines after the first call it directly)."""
        from armfw.arm5near import ik_near
        Arm5Solver.ik_near = ik_near
        return ik_near(self, target, out, current)

    def __init__(self, l1, l2, l3, base, names, lo, hi, home, tool=None):
        self.l1 = l1
        self.l2 = l2
        self.l3 = l3
        self.base = base    # height of the J2 axis above the base plane, mm
        self.reach = l1 + l2    # mm, the farthest the wrist gets from the J2 axis
        self.tool = (0.0, 0.0, 0.0) if tool is None else tool
        self._v = [0.0, 0.0, 0.0]       # the offset in the arm's plane frame
        self._points = [0.0] * 12       # joint_points' answer
        self._links = twolink.TwoLink(l1, l2)
        Solver.__init__(self, names, lo, hi, home)
        self._elbow[0] = UP
        self._elbow[1] = DOWN
        self._elbow[2] = UP
        self._elbow[3] = DOWN
        # Pitch limits symmetric about 0: a turned candidate's (negated) pitch joints
        # are inside exactly when the facing one's are.
        self._symmetric = all(self._neg_lo_eps[i] == self._lo_eps[i] and self._neg_hi_eps[i] == self._hi_eps[i]
                              for i in (1, 2, 3))

    @property
    def tool(self):
        """The tool offset (mm, a tuple; see the class doc)."""
        return self._tool

    @tool.setter
    def tool(self, tool):
        # The one place the offset changes: what depends on it (_offset here, the
        # zones' joint reach) follows it here, never a copy taken earlier.
        t = (tool[0], tool[1], tool[2])
        self._tool = t
        self._offset = t[0] != 0.0 or t[1] != 0.0 or t[2] != 0.0
        if self.zones is not None:
            self.zones.arm_changed()

    def ik(self, target, out, current=None, rule=MIN_MOTION):
        """Solve target (x, y, z mm, pitch rad) into out (radians); returns the status.

        current: the pose the arm is in (radians) for minimum-motion choice and
        the wrist roll to keep, or None. rule: MIN_MOTION, PREFER_UP or
        PREFER_DOWN. On a failing status out is left untouched.
        """
        # Finite numbers only, each coordinate read once into a named local.
        fin = isfinite
        try:
            x, y, z, pitch = target
            if not (fin(x) and fin(y) and fin(z) and fin(pitch)):
                return BAD_INPUT
            roll = 0.0
            if current is not None:
                b0, b1, b2, b3, roll = current
                if not (fin(b0) and fin(b1) and fin(b2) and fin(b3) and fin(roll)):
                    return BAD_INPUT
        except (TypeError, ValueError):     # not numbers, or not 4 (5) of them
            return BAD_INPUT
        # The candidates are built here, not in a method of their own: this is
        # the solver's hot path (docs/BENCHMARKS.md, section 1).
        sp = sin(pitch)
        cp = cos(pitch)
        # Whole turns off the pitch first: q4 = pitch - q2 - q3 must not lose
        # the digits of a large pitch that sin() and cos() keep.
        if not -pi < pitch <= pi:
            pitch = atan2(sp, cp)
        r = sqrt(x * x + y * y)
        status = self._status
        if not fin(r):
            # x*x + y*y overflowed (from 1e154 mm in double, 2e19 in float32):
            # a finite target farther than any reach, not bad input.
            for c in range(4):
                status[c] = TOO_FAR
            return TOO_FAR
        if self._offset:
            self._candidates_offset(target, current, atan2(sp, cp), roll, r)
            return self._choose(current, rule, out)
        lo = self._lo_eps
        hi = self._hi_eps
        if not lo[4] <= roll <= hi[4]:
            roll = self._refit(4, roll, 1)     # None: no turn fits, no candidate either
        if r < AXIS_EPS:
            yaw = b0 if current is not None else 0.0
        else:
            yaw = atan2(y, x)
        # Wrist point in the arm's vertical plane, relative to the J2 axis; the
        # planar solver's x axis is vertical here, its y axis horizontal.
        l3 = self.l3
        pair = self._pair
        st = self._links.solve_pair(z - self.base - l3 * cp, r - l3 * sp, pair)
        if st > SINGULAR:
            for c in range(4):
                status[c] = st
            return st
        # Facing the target: up is q3 >= 0 (pair[0:2]), down q3 <= 0 (pair[2:4]).
        # Turned half a turn and leaning back (wrist at -r, pitch -pitch), the
        # two-link answers are the exact mirrors: every pitch joint negated,
        # which the stored values leave to _pose.
        back = yaw - pi if yaw > 0 else yaw + pi
        # Base yaw, facing and turned: fitted once for both candidates of each.
        facing = yaw if lo[0] <= yaw <= hi[0] else self._refit(0, yaw, 1)
        turned = back if lo[0] <= back <= hi[0] else self._refit(0, back, 1)
        if roll is None:
            facing = turned = None
        q4_up = pitch - pair[0] - pair[1]
        q4_down = pitch - pair[2] - pair[3]
        # Each elbow's pitch joints, checked against the limits as they are (facing)
        # and negated (turned); only a candidate outside them pays for _fit_stored.
        lo1, lo2, lo3 = lo[1], lo[2], lo[3]
        hi1, hi2, hi3 = hi[1], hi[2], hi[3]
        symmetric = self._symmetric
        if not symmetric:
            nlo = self._neg_lo_eps
            nhi = self._neg_hi_eps
            nlo1, nlo2, nlo3 = nlo[1], nlo[2], nlo[3]
            nhi1, nhi2, nhi3 = nhi[1], nhi[2], nhi[3]
        qs = self._q
        for e in range(2):
            a1 = pair[2 * e]
            a2 = pair[2 * e + 1]
            a3 = q4_down if e else q4_up
            q = qs[e]
            q[0] = facing
            q[1] = a1
            q[2] = a2
            q[3] = a3
            q[4] = roll
            inside = lo1 <= a1 <= hi1 and lo2 <= a2 <= hi2 and lo3 <= a3 <= hi3
            if facing is not None and (inside or self._fit_stored(q, 1, 1, 4)):
                status[e] = st
            else:
                status[e] = JOINT_LIMIT
            q = qs[e + 2]
            q[0] = turned
            q[1] = a1
            q[2] = a2
            q[3] = a3
            q[4] = roll
            if not symmetric:
                inside = nlo1 <= a1 <= nhi1 and nlo2 <= a2 <= nhi2 and nlo3 <= a3 <= nhi3
            if turned is not None and (inside or self._fit_stored(q, -1, 1, 4)):
                status[e + 2] = st
            else:
                status[e + 2] = JOINT_LIMIT
        if self.zones is not None:
            return self._choose(current, rule, out)
        # No zones: _choose's work without the call to it.
        best = self._cheapest(current, rule)
        if best < 0:
            return self._verdict()
        self._pose(best, out)
        self.elbow = self._elbow[best]
        return status[best]

    def _pose(self, c, out):
        """Candidate c's joint angles into out. The turned-base candidates (2, 3) store
        their pitch joints as solved facing the target, the angles negated (with a
        tool offset they are solved on their own and stored as the angles); the
        yaw and the roll are stored as they are."""
        q = self._q[c]
        out[0] = q[0]
        if c >= 2 and not self._offset:
            out[1] = -q[1]
            out[2] = -q[2]
            out[3] = -q[3]
        else:
            out[1] = q[1]
            out[2] = q[2]
            out[3] = q[3]
        out[4] = q[4]
        return out

    def _cheapest(self, current, rule):
        """The valid candidate of least cost (the first of equals), or -1 (see Solver).

        Nothing is summed when one candidate is valid or every cost is 0. The
        facing pair shares the yaw term and the turned pair its own; the roll
        term is the same for all four (ik keeps the roll); the pitch joints are
        summed with the sign their candidates are stored with. A candidate stops
        being summed once a term or its partial sum reaches the best so far (the
        terms are >= 0 and a float sum of them never shrinks below any of them,
        so it cannot win).
        """
        status = self._status
        qs = self._q
        elbow = self._elbow
        valid = 0
        first = -1
        for c in range(4):
            if status[c] <= SINGULAR:
                valid += 1
                if first < 0:
                    first = c
        if valid < 2 or (current is None and rule == MIN_MOTION):
            return first
        # The branch the rule prefers (0: none); the others pay its penalty.
        want = UP if rule == PREFER_UP else (DOWN if rule == PREFER_DOWN else 0)
        if current is None:
            # Every cost is 0 or the penalty: the first valid candidate the rule likes.
            for c in range(first, 4):
                if status[c] <= SINGULAR and elbow[c] == want:
                    return c
            return first
        b0 = current[0]
        a = qs[first][4]
        b = current[4]
        roll_term = 0.0     # the roll's term, 0 when ik kept the roll as it is
        if a != b:
            d = a - b
            roll_term = d * d
        negated = not self._offset      # turned candidates store their pitch joints negated
        # The bound a candidate must stay below; infinite until one is complete
        # (a cost that overflows to inf is left to the end: the first valid one).
        best = -1
        best_cost = _INF
        yaw = None
        yaw_term = 0.0
        for c in range(4):
            if status[c] > SINGULAR:
                continue
            q = qs[c]
            a = q[0]
            if a != yaw:
                yaw = a
                if a == b0:
                    yaw_term = 0.0
                elif b0 == 0.0:
                    yaw_term = a * a
                else:
                    d = a - b0
                    yaw_term = d * d
            cost = yaw_term
            if cost >= best_cost:
                continue
            # Joints 1-3: (-a - b)^2 is (a + b)^2 bit for bit for a stored negated.
            neg = negated and c >= 2
            lost = False
            for i in range(1, 4):
                a = q[i]
                b = current[i]
                if b == 0.0:
                    term = a * a
                else:
                    d = a + b if neg else a - b
                    term = d * d
                if term >= best_cost:
                    lost = True         # one term already loses: the sum is not needed
                    break
                cost = term if cost == 0.0 else cost + term
                if cost >= best_cost:
                    lost = True
                    break
            if lost:
                continue
            if roll_term != 0.0:
                cost = cost + roll_term
            if want and elbow[c] != want:
                cost += 1e9
            if cost < best_cost:
                best = c
                best_cost = cost
        return first if best < 0 else best

    def _store(self, c, yaw, q2, q3, q4, roll, st):
        """Stores candidate c with status st, or JOINT_LIMIT when a joint does not fit
        (the yaw and the roll come fitted: None when they cannot)."""
        q = self._q[c]
        q[0] = yaw
        q[1] = q2
        q[2] = q3
        q[3] = q4
        q[4] = roll
        fits = yaw is not None and roll is not None and self._fit_stored(q, 1, 1, 4)
        self._status[c] = st if fits else JOINT_LIMIT

    def _candidates_offset(self, target, current, pitch, roll, r):
        """Candidates with a tool offset: per half turn of the base, the lateral
        offset fixes the base angle, the rest fixes the flange point in the plane.

        Turned half a turn and leaning back, the tool has the same orientation as
        facing the target with the roll half a turn on: the offset's components
        across the tool and lateral change sign, so the turned two-link problem is
        not the facing one mirrored (unless the offset lies on the tool axis) and
        is solved on its own. What the two halves share is computed once: the
        trigonometry, the lateral offset (the same on both), the reach, the fits.
        """
        status = self._status
        t = self._tool
        cr = cos(roll)
        sr = sin(roll)
        across = t[0] * cr - t[1] * sr
        b = t[0] * sr + t[1] * cr       # lateral, the same facing and turned
        rr = r * r
        bb = b * b
        if rr < bb:
            for c in range(4):
                status[c] = NEAR_AXIS
            return
        reach = sqrt(rr - bb)
        if r < AXIS_EPS:
            yaw = current[0] if current is not None else 0.0
            back = yaw - pi if yaw > 0 else yaw + pi
        else:
            phi = atan2(target[1], target[0])
            yaw = phi - atan2(b, reach)
            back = phi - atan2(b, -reach)
        lo = self._lo_eps
        hi = self._hi_eps
        if not lo[4] <= roll <= hi[4]:
            roll = self._refit(4, roll, 1)
        if not lo[0] <= yaw <= hi[0]:
            yaw = self._refit(0, yaw, 1)
        if not lo[0] <= back <= hi[0]:
            back = self._refit(0, back, 1)
        # The offset in the arm's plane, Ry(a4) (across, b, t[2]) with a4 = +-pitch:
        # along the reach across*cos a4 + t[2]*sin a4, up t[2]*cos a4 - across*sin a4.
        # Every term is rounded as the general form rounds it on each half (sin(-a)
        # is -sin(a), cos(-a) cos(a), exactly): at full stretch the angles go with
        # the square root of the wrist point's rounding, which must not move.
        sa = sin(pitch)
        ca = cos(pitch)
        along_c = across * ca
        along_s = t[2] * sa
        up_c = t[2] * ca
        up_s = across * sa
        l3 = self.l3
        l3_s = l3 * sa
        l3_c = l3 * ca
        z = target[2]
        base = self.base
        pair = self._pair
        # Facing (a4 = pitch): the flange at reach - along, the wrist l3 further back.
        st = self._links.solve_pair(z - (up_c - up_s) - base - l3_c, reach - (along_c + along_s) - l3_s, pair)
        if st > SINGULAR:
            status[0] = status[1] = st
        else:
            self._store(0, yaw, pair[0], pair[1], pitch - pair[0] - pair[1], roll, st)
            self._store(1, yaw, pair[2], pair[3], pitch - pair[2] - pair[3], roll, st)
        # Turned and leaning back (a4 = -pitch): reach -reach; up is now the mirror, q3 <= 0.
        st = self._links.solve_pair(z - (up_c + up_s) - base - l3_c, -reach - (along_c - along_s) + l3_s, pair)
        if st > SINGULAR:
            status[2] = status[3] = st
        else:
            a4 = -pitch
            self._store(2, back, pair[2], pair[3], a4 - pair[2] - pair[3], roll, st)
            self._store(3, back, pair[0], pair[1], a4 - pair[0] - pair[1], roll, st)
