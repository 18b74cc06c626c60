# SPDX-License-Identifier: MIT
"""G2/G3 arcs in the XY plane, split into straight chords (loaded with the first arc).

An arc is given by its end and either its centre's offset from the start
(I J) or its radius (R; negative R: the arc longer than half a turn), as
GRBL and LinuxCNC read them. It is split into chords of equal angle: no
chord strays more than CHORD_TOLERANCE_MM from the true arc (the sagitta
r (1 - cos(a / 2)) of a chord of angle a), and none is longer than a step
at its top speed (F, at most sqrt(accel * r)), so each corner turns little.
The planner's walk of an ARC operation hands over to Arc.walk: the chords
are blocks of one tool ramp, as blended G1 lines are (armfw.gcodeblend.walk_blocks,
fed a look-ahead of chords at a time), from rest to rest within the tool's
acceleration, each corner at the ramp's junction speed; every step is solved
and checked as a G1's.
Coordinates other than X and Y (an arm5's Z and pitch) change linearly with
the angle turned: a helix where Z changes.
"""

from math import asin, atan2, ceil, cos, pi, sin, sqrt

from armfw.gcodeblend import LOOK_AHEAD, walk_blocks
from armfw.numeric import finite
from armfw.profile import ToolRamp

# The most a chord may stray from the true arc (mm): well below a hobby servo's
# 1 us pulse step at the arm's reach (a few tenths of a mm).
CHORD_TOLERANCE_MM = 0.05
# An I J arc's end may lie off the start's circle by this much (GRBL's rule):
# up to 0.005 mm always, up to 0.5 mm within 0.1 % of the radius.
RADIUS_SLACK_MM = 0.005
RADIUS_SLACK_MAX_MM = 0.5
RADIUS_SLACK_RATIO = 0.001
# No chord turns more than a quarter turn, however large the tolerance against the radius.
MAX_CHORD_ANGLE = pi / 2
# A turn this close to zero between start and end is a full circle (I J only; GRBL's epsilon).
_FULL_TURN_EPSILON = 5e-7
# A chord a hair shorter than a step at the top speed: its length, worked out again by the
# walk, may come out a float's width longer, and it must still turn at most a step's worth.
_STEP_MARGIN = 1e-4


class Arc:
    """The chords of an arc from start to end (tool coordinates, X and Y first) about
    centre (cx, cy) with radius, turning by travel radians (> 0 counterclockwise).

    chords: how many (split() may make them more); point(i, out): the end of chord i
    (1..chords) into out, the last end itself; top: the tool's top speed along them (mm/s).
    """

    def __init__(self, start, end, cx, cy, radius, travel):
        self.start = list(start)
        self.end = list(end)
        self.cx = cx
        self.cy = cy
        self.radius = radius
        self.travel = travel
        self.angle0 = atan2(start[1] - cy, start[0] - cx)
        # Sagitta r (1 - cos(a / 2)) = 2 r sin^2(a / 4) <= tolerance, solved for a (stable for any r).
        ratio = CHORD_TOLERANCE_MM / (2.0 * radius)
        most = 4.0 * asin(sqrt(ratio)) if ratio < 1.0 else MAX_CHORD_ANGLE
        if most > MAX_CHORD_ANGLE:
            most = MAX_CHORD_ANGLE
        self.chords = int(ceil(abs(travel) / most))
        if self.chords < 1:
            self.chords = 1
        self.top = 0.0
        self._accel = -1.0              # the most acceleration along it, where slowed (mm/s^2)
        self.slowed = None              # (top, _accel) the check slowed it to, for the next walk
        # The walk's (armfw.gcodeblend.walk_blocks).
        self.count = 0
        self.ramp = ToolRamp(LOOK_AHEAD)
        self._length = [0.0] * LOOK_AHEAD
        self._start = [0.0] * len(start)
        self._point = [0.0] * len(start)

    def point(self, i, out):
        """The end of chord i (1..chords), into out (a list of the tool's coordinates)."""
        if i >= self.chords:
            for j in range(len(out)):
                out[j] = self.end[j]
            return out
        f = i / self.chords
        a = self.angle0 + self.travel * f
        out[0] = self.cx + self.radius * cos(a)
        out[1] = self.cy + self.radius * sin(a)
        start = self.start
        end = self.end
        for j in range(2, len(out)):
            out[j] = start[j] + (end[j] - start[j]) * f
        return out

    def top_speed(self, j):
        """Chord j's top speed (mm/s): the arc's."""
        return self.top

    def limit(self, j):
        """The most speed (mm/s) into chord j from the one before: the ramp's (-1.0)."""
        return -1.0

    def accel(self, j, most):
        """The most acceleration (mm/s^2) along chord j: most, or less where it was slowed."""
        return self._accel if 0.0 <= self._accel < most else most

    def slow(self, first, last, fraction, speed, accel):
        """Slow the whole arc to fraction of its top speed, its corners being alike and a chord
        a step's travel at most (corners slowed below the top, the tool would speed up and
        brake again at every chord), and where accel (mm/s^2, the ramp's there; 0.0: none)
        is given its acceleration to fraction of it: from the next walk on (armfw.cornerwatch)."""
        top, most = self.slowed if self.slowed is not None else (self.top, self._accel)
        if fraction * self.top < top:
            top = fraction * self.top
        if accel > 0.0 and (most < 0.0 or fraction * accel < most):
            most = fraction * accel
        self.slowed = (top, most)

    def _line(self, j, a, b):
        """Chord j's start (0-based; after the first) into a, its end into b; b."""
        if j:
            self.point(j, a)
        return self.point(j + 1, b)

    def walk(self, planner, k, q, refill):
        """The planner's walk of the chords, operation k of its plan, from pose q."""
        self.count = self.chords
        if self.slowed is not None:
            self.top, self._accel = self.slowed
            self.slowed = None
        return walk_blocks(planner, k, q, refill, self, self.ramp)

    def split(self, most_mm):
        """Make each chord at most most_mm long (mm: a step at the top speed; more chords
        where the tolerance allows longer ones), so a corner turns by a step's share at most."""
        rise = 0.0
        if len(self.end) == 4:          # an arm5's Z rises evenly (its pitch stays)
            rise = self.end[2] - self.start[2]
        turn = self.radius * self.travel
        # A chord is no longer than the helix it cuts: a step's share of the helix fits in one.
        length = sqrt(turn * turn + rise * rise) * (1.0 + _STEP_MARGIN)
        chords = int(ceil(length / most_mm))
        if chords > self.chords:
            self.chords = chords


def arc(start, end, clockwise, offset=None, radius=None):
    """The Arc from start to end (tool coordinates) clockwise (G2) or not (G3), about the
    centre start + offset (I, J), or of radius (R); a ValueError's message where the
    words make no arc (a radius too small for the ends, an end off the circle, ...)."""
    x0 = start[0]
    y0 = start[1]
    dx = end[0] - x0
    dy = end[1] - y0
    if radius is not None:
        if dx == 0.0 and dy == 0.0:
            raise ValueError("an R arc needs an end other than its start (a full circle takes I J)")
        r = abs(radius)
        d = sqrt(dx * dx + dy * dy)
        h2 = 4.0 * r * r - d * d
        if not finite(h2) or r == 0.0:
            raise ValueError("R %s gives no arc" % radius)
        if h2 < 0.0:
            if d - 2.0 * r > RADIUS_SLACK_MM:
                raise ValueError("R %.3f is too small: the ends are %.3f mm apart" % (r, d))
            h2 = 0.0
        # The centre lies on the ends' bisector, h from their midpoint: to the right of
        # the chord for a short clockwise arc, to the left for a short counterclockwise one.
        k = sqrt(h2) / d
        if clockwise == (radius > 0.0):
            k = -k
        cx = x0 + 0.5 * (dx - dy * k)
        cy = y0 + 0.5 * (dy + dx * k)
    else:
        cx = x0 + offset[0]
        cy = y0 + offset[1]
        r = sqrt(offset[0] * offset[0] + offset[1] * offset[1])
        if r == 0.0:
            raise ValueError("I J put the centre on the start: no radius")
        ex = end[0] - cx
        ey = end[1] - cy
        miss = abs(sqrt(ex * ex + ey * ey) - r)
        if not finite(miss):
            raise ValueError("the arc is not finite (too large)")
        if miss > RADIUS_SLACK_MM and (miss > RADIUS_SLACK_MAX_MM or miss > RADIUS_SLACK_RATIO * r):
            raise ValueError("the end is %.3f mm off the circle of radius %.3f the start and I J give" % (miss, r))
    if not (finite(cx) and finite(cy) and finite(r)):
        raise ValueError("the arc is not finite (too large)")
    sx = x0 - cx
    sy = y0 - cy
    ex = end[0] - cx
    ey = end[1] - cy
    travel = atan2(sx * ey - sy * ex, sx * ex + sy * ey)
    if clockwise:
        if travel >= -_FULL_TURN_EPSILON:
            travel -= 2.0 * pi
    elif travel <= _FULL_TURN_EPSILON:
        travel += 2.0 * pi
    return Arc(start, end, cx, cy, r, travel)
