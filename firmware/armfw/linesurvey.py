# SPDX-License-Identifier: MIT
"""How fast the tool may go along straight lines where the joints' speed limit binds.

Near the base axis, the workspace's edge or a singular pose, a steady tool
speed turns some joint much faster than elsewhere on the same line. The
survey solves the line ahead of its steps, in stretches, and gives each
stretch the top speed at which no joint turns more than the step allows
(planner max_step). The tool ramp (armfw.profile.ToolRamp) then slows into
such a stretch within the tool's acceleration and speeds up after it, so the
tool's velocity has no step. A stretch is a ramp block that lowers the speed
without a turn.

A joint that turns fast for the tool's travel also turns with a large
acceleration when the tool speeds up or slows down there (at a line's start
and end, into and out of a slow stretch): joint acceleration = its turn per
mm x the tool's acceleration, plus its turn's own change with the tool's
speed squared. The survey gives each stretch the most tool acceleration at
which the first part stays within the margin of every joint's acceleration,
and the ramp brakes and speeds up there no harder. The second part is the
line bending in joint space: each joint's turn per mm changing from one
sample to the next along the line, as the base's does passing near its
axis. At the stretch's top it takes what it needs of the joint's margin, up
to half, and the first part the rest; where it would need more the stretch
is slower.

Samples are a little apart, and between two of them a joint may turn faster
than their average: a stretch's top keeps a margin, and the step halving of
armfw.linestep stays as the guard for what the samples miss. A stretch's
top is a whole number of sixteenths of the line's: its neighbours that need
the same share make one ramp block, and the board and the host (whose
floats round otherwise in the last bits) give a stretch the same speed. The
least is one sixteenth: what needs slower (the very edge of a singular pose,
a jump the walk refuses) is left to the halving, as a single spike of a
joint's rate is better passed by a few short steps than by a whole stretch
at a crawl.

The survey solves without the keep-out zones (they do not change how fast
a joint turns, and the walk checks every step against them).

The survey is a function of the line and of the ramp's state alone, so the
check walk and the walk that refills the running motion take the same steps.
"""

from math import sqrt

from armfw.compat import const
from armfw.numeric import floats
from armfw.status import SINGULAR

# A stretch's top is this part of the speed its samples allow, its acceleration this part
# of what they allow (the margin above).
_MARGIN = const(0.8)
# Of that acceleration, the most the line's bend in joint space takes at the stretch's top.
_BEND_SHARE = const(0.5)
# A stretch's top is a whole number of these parts of the line's, one at the least; its
# acceleration as much of the tool's.
_SHARES = const(16)
# One sample every this many steps' travel at the line's top speed.
_SAMPLE_STEPS = const(2)
# A stretch is at least this many steps' travel, and at least a quarter of the
# distance the tool brakes in from its top speed: a few stretches span that reach,
# so a ramp of armfw.planner.LINE_STRETCHES blocks never has to brake for want of
# a queued one.
_STRETCH_STEPS = const(4)


class LineSurvey:
    """A line's stretches fed to a ToolRamp as the tool nears them; step(), took() and
    count stand in for the ramp's in armfw.linestep.LineStepper.walk. top() surveys any
    stretch of a line (armfw.gcodeblend's blocks) from the survey's own pose."""

    def __init__(self, n, nt):
        self.q = floats(n)              # the survey's pose, ahead of the walk's
        self._goal = floats(n)
        self._slope = floats(n)         # each joint's turn per mm (radians) at the last sample
        self._apart = 0.0               # mm from the sample before it (0.0: none yet)
        self._point = floats(nt)
        self.ramp = None
        self._stretches = 0
        self._fed = 0

    def begin(self, q, ik, max_step, step_s, joint_accel, tool_accel, solver=None):
        """Survey from pose q (radians) with ik(point, out, current) (armfw.solver's
        ik_near), no joint turning more than max_step (radians) in step_s (s), nor
        faster up or down than joint_accel (per joint, rad/s^2) as the tool speeds up
        or slows down at up to tool_accel (mm/s^2); solver: ik's, whose zones the
        survey sets aside while it solves."""
        for i in range(len(q)):
            self.q[i] = q[i]
        self._ik = ik
        self._solver = solver
        self._max_step = max_step
        self._step_s = step_s
        self._joint_accel = joint_accel
        self._tool_accel = tool_accel
        self.accel = tool_accel
        self._apart = 0.0

    def top(self, p0, p1, t0, t1, length, top, current_at=None):
        """The top speed (mm/s, at most top) over the stretch t0..t1 (fractions) of the line
        p0 -> p1 of length mm, the survey's pose moved on to its end; its most acceleration
        (mm/s^2) is left in accel. current_at(t): the pose a rolling line continues from
        (armfw.planner), instead of the survey's own."""
        q = self.q
        goal = self._goal
        point = self._point
        stretch_mm = (t1 - t0) * length
        samples = int(stretch_mm / (_SAMPLE_STEPS * top * self._step_s)) + 1
        apart_mm = stretch_mm / samples
        # A joint's turn over apart_mm at speed v mm/s lasts apart_mm / v s; within
        # max_step per step_s that is v <= allowed / turn.
        allowed = _MARGIN * self._max_step / self._step_s * apart_mm
        slowest = top
        joint_accel = self._joint_accel
        gentlest = self._tool_accel
        # Between samples of one straight line the joints' path bends: a stretch from a
        # line's start (a G-code block's, an arc's chord) has none before it, its corner
        # being the tool ramp's.
        slope = self._slope
        if t0 == 0.0:
            self._apart = 0.0
        solver = self._solver
        zones = None if solver is None else solver.zones
        if zones is not None:
            solver.zones = None
        try:
            for s in range(1, samples + 1):
                t = t0 + (t1 - t0) * s / samples
                for i in range(len(point)):
                    point[i] = p0[i] + (p1[i] - p0[i]) * t
                if self._ik(point, goal, q if current_at is None else current_at(t)) > SINGULAR:
                    break                   # the walk itself meets this point and refuses it
                turn = 0.0
                for i in range(len(q)):
                    d = goal[i] - q[i]
                    if d < 0.0:
                        d = -d
                    if d > turn:
                        turn = d
                if turn * slowest > allowed:
                    slowest = allowed / turn
                # A joint's acceleration: its turn per mm times the tool's acceleration, and
                # its turn per mm's change per mm (the bend) times the tool's speed squared,
                # together within the margin of its own; the bend takes at most _BEND_SHARE
                # of that, beyond which the tool goes slower.
                bent = self._apart > 0.0
                between = 0.5 * (apart_mm + self._apart)
                for i in range(len(q)):
                    per_mm = (goal[i] - q[i]) / apart_mm
                    room = _MARGIN * joint_accel[i]
                    if bent:
                        bend = per_mm - slope[i]
                        if bend < 0.0:
                            bend = -bend
                        bend /= between
                        if bend * slowest * slowest > _BEND_SHARE * room:
                            slowest = sqrt(_BEND_SHARE * room / bend)
                        room -= bend * slowest * slowest
                    slope[i] = per_mm
                    if per_mm < 0.0:
                        per_mm = -per_mm
                    if per_mm * gentlest > room:
                        gentlest = room / per_mm
                    q[i] = goal[i]
                # A line's first turn is from the pose it starts at, which the pulses it was
                # sent may leave a little off the line: no bend is measured against it.
                self._apart = apart_mm if s > 1 or t0 > 0.0 else 0.0
        finally:
            if zones is not None:
                solver.zones = zones
        self.accel = _in_shares(gentlest, self._tool_accel)
        return _in_shares(slowest, top)

    # -- a line, fed to a ramp stretch by stretch ----------------------------

    def line(self, ramp, p0, p1, length, top, current_at=None):
        """Start feeding ramp (reset, at rest) the line p0 -> p1 of length mm at up to top mm/s."""
        ramp.reset(ramp.accel, ramp.junction_deviation_mm, ramp.step_s)
        self.ramp = ramp
        self._p0 = p0
        self._p1 = p1
        self._length = length
        self._top = top
        self._current_at = current_at
        stretch = top * ramp.step_s * _STRETCH_STEPS
        brake = 0.25 * top * top / (2.0 * ramp.accel)
        if brake > stretch:
            stretch = brake
        self._stretch_mm = stretch
        # Whole stretches of at least that (to a thousandth: a line of a round length
        # splits the same in single and double precision), one at the least.
        stretches = int(length / stretch + 0.001)
        self._stretches = stretches if stretches > 0 else 1
        self._fed = 0

    @property
    def count(self):
        """Blocks left: the ramp's and the stretches not yet fed to it (0: the line's end)."""
        return self.ramp.count + self._stretches - self._fed

    def step(self):
        """The next step's travel (mm), the ramp's, with the stretches its braking reach needs queued."""
        ramp = self.ramp
        v = ramp.speed + ramp.accel * ramp.step_s
        if v > self._top:
            v = self._top
        reach = v * v / (2.0 * ramp.accel) + v * ramp.step_s + self._stretch_mm
        while self._fed < self._stretches and ramp.count < ramp.size and (ramp.count == 0 or ramp.left() < reach):
            k = self._fed
            t0 = k / self._stretches
            t1 = (k + 1) / self._stretches if k + 1 < self._stretches else 1.0
            top = self.top(self._p0, self._p1, t0, t1, self._length, self._top, self._current_at)
            stretch_mm = (t1 - t0) * self._length
            if not ramp.extend(stretch_mm, top, self.accel):
                ramp.add(stretch_mm, top, 0.0, 0.0, 0.0, self.accel)
            self._fed += 1
        return ramp.step()

    def took(self, step):
        """The walk shortened the last step to step mm (armfw.profile.ToolRamp.took)."""
        self.ramp.took(step)


def _in_shares(value, most):
    """value (at most most) down to a whole number of sixteenths of most, one at the least."""
    if value >= most:
        return most
    share = most / _SHARES
    shares = int(value / share)
    return share * shares if shares > 0 else share
