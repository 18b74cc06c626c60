# SPDX-License-Identifier: MIT
"""Straight tool lines, stepped: the one rule every line is walked by.

A line from p0 to p1 (tool coordinates) advances its nominal travel per step,
or the travel its tool ramp gives (armfw.profile, fed by armfw.linesurvey,
which slows the tool ahead where the joints need it). Where a step would
still turn a joint more than max_step (near the workspace edge, near a
singular pose) it is halved until it does not: the tool slows down, the
joints never jump. A step shorter than
MIN_LINE_STEP_MM that still turns a joint too far is a jump (a branch flip,
the base turning through the axis), and the line stops there.

The firmware walks its lines with it (armfw.planner); the host's numerical
fallback and its plots walk theirs with the same rule and their own solver.
"""

from armfw.compat import const
from armfw.numeric import floats
from armfw.status import SINGULAR

# A line step shorter than this (mm) that still turns a joint faster than the
# speed limit is a jump, not a steep stretch.
MIN_LINE_STEP_MM = 0.001

# What walk() yields for a jump (solver statuses are 0 and up).
JUMP = const(-1)


def too_fast(goal, q, max_step):
    """True where going from pose q to goal turns a joint more than max_step (radians)."""
    for i in range(len(q)):
        d = goal[i] - q[i]
        if d > max_step or d < -max_step:
            return True
    return False


class LineStepper:
    """Steps along straight lines; n joints, nt tool coordinates.

    After each step walk() yields, point holds its tool target, pose the
    solved joints (radians) and t the fraction of the line reached.
    """

    def __init__(self, n, nt):
        self.point = floats(nt)
        self.pose = [0.0] * n       # a list: ik's out (the host's solvers fill it as one)
        self.t = 0.0
        self._dp = floats(nt)
        self._fixed = floats(nt)

    def walk(self, p0, p1, length, step, q, ik, max_step, current_at=None, survey=False, ramp=None):
        """Walk the line p0 -> p1 (tool coordinates) of length (mm, > 0) in steps of step
        (mm of length) from pose q (radians), no joint turning more than max_step (radians)
        in one step.

        ik(point, out, current): solve the tool target point into the joint
        list out, continuing from pose current; an armfw.status code. current
        is q, or current_at(t) at the line's fraction t (a pose whose wrist
        roll turns along the line). The caller moves q on to pose after each
        step it takes.

        A generator: yields each step's status, ik's (OK or SINGULAR: the step
        passed), a worse one from ik, or JUMP; it ends after the line's last
        step or a refused one (survey: goes on past a refused step at the
        nominal travel, to find every one; never JUMP then, max_step is not
        applied).

        ramp: an armfw.profile.ToolRamp holding this line alone (its length),
        whose step() gives each step's travel instead of step; a step halved
        to keep the joints' limit is told to it (took()), so that it speeds up
        again from the speed the tool really has.
        """
        point = self.point
        goal = self.pose
        dp = self._dp
        fixed = self._fixed
        nt = len(point)
        for i in range(nt):
            dp[i] = p1[i] - p0[i]
            # A coordinate the line keeps: p0 + 0.0 * t for every t in (0, 1), the
            # same float bit for bit (-0.0 included) without two operations a step.
            fixed[i] = p0[i] + 0.0
        dt_nominal = step / length
        dt_floor = MIN_LINE_STEP_MM / length
        t = 0.0
        while t < 1.0:
            dt = dt_nominal
            end = halved = False
            if ramp is not None:
                dt = ramp.step() / length
                end = ramp.count == 0   # the ramp's last step: the line's end
            while True:
                tn = t + dt
                if tn > 1.0 - 1e-9 or end:
                    tn = 1.0
                if tn < 1.0:
                    for i in range(nt):
                        point[i] = p0[i] + dp[i] * tn if dp[i] != 0.0 else fixed[i]
                else:
                    for i in range(nt):
                        point[i] = p1[i]
                st = ik(point, goal, q if current_at is None else current_at(tn))
                if st > SINGULAR or survey or not too_fast(goal, q, max_step):
                    break
                dt = (tn - t) * 0.5
                end = False
                halved = True
                if dt < dt_floor:
                    st = JUMP
                    break
            if halved and ramp is not None:
                ramp.took((tn - t) * length)
            self.t = t = tn
            yield st
            if st > SINGULAR and not survey or st == JUMP:
                return
