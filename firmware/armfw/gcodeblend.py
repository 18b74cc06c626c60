# SPDX-License-Identifier: MIT
"""Consecutive G1 lines blended: queued as each is checked, run as one plan under one tool ramp.

Loaded with the first G1 a streaming sender sends (armfw.gcode). A G1 line
is checked on its own when it arrives, from the pose where the lines queued
before it end (every step's IK, limits, zones and pulses, as a `line`), and
answered `ok` once queued: a sender that waits for each `ok` has the next
line on its way while the queue waits. The queue starts moving when it is
full (Blend.add), when a line arrives that is not a G1 (it waits for the
queue's end), or when no line has come for QUIET_MS.

Then the queued lines are one plan (armfw.planner.BLEND, start()): one
ToolRamp fed LOOK_AHEAD of them at a time (armfw.profile: GRBL's junction deviation at each
corner, no faster round a bend of short lines than the tool's acceleration
allows, from rest to rest), walked and checked whole before its first pulse
like any plan. joins() tells the lines that queue from those that wait for
the queued ones to run. Each block's top speed is also the one at which its
joints keep their speed limit (armfw.linesurvey, over the whole block); a
step that would still turn a joint too fast is halved along the lines, as a
line's is (armfw.linestep), and the ramp goes on from the speed the tool
really has. walk_blocks walks G2/G3 arcs' chords too (armfw.gcodearc),
feeding the ramp as it goes: an arc may have many more chords than the ramp holds.
"""

from math import sqrt

from armfw.compat import const, getenv, ticks_diff, ticks_ms
from armfw.gcode import strip_comment
from armfw.linestep import MIN_LINE_STEP_MM, too_fast
from armfw.numeric import floats, wrap_angle
from armfw.planner import BLEND, LINE, REASON_JUMP, REASON_SOLVER
from armfw.profile import ToolRamp
from armfw.solver import MIN_MOTION
from armfw.status import INTERNAL, NO_MEMORY, SINGULAR

# Blocks the tool ramp plans its speed over at once: GRBL's look-ahead on an ATmega328P.
LOOK_AHEAD = const(16)
# G1 lines one plan holds. A queue runs from rest to rest, so a longer one stops less often;
# a queue of short lines (a drawing cut into tenths of a mm) takes more than LOOK_AHEAD before
# its ramps up to speed and back no longer fill it (Blend.add; docs/BENCHMARKS.md section 10).
BLEND_LINES = const(64)
# With fewer lines queued, this long without a new one (ms) starts them: a sender
# waiting for each `ok` sends the next within a few ms; a person typing G1 lines waits no longer.
# Under the Unix port ARMFW_GCODE_QUIET_MS sets it: a test on a busy machine, whose next
# line may come later than this, sets it long and starts the lines with M400 or M114.
QUIET_MS = const(200)


class Blend:
    """The queued G1 lines of an arm with n joints and nt tool coordinates: each line's
    end (tool coordinates) and top speed (mm/s); walk() is the planner's walk of them."""

    def __init__(self, n, nt):
        self.nt = nt
        # Line j's end at [j * nt, (j + 1) * nt), in the interpreter's own float (as the
        # walk's): stored as the walk computes with it, bit for bit.
        self._ends = floats(nt * BLEND_LINES)
        self.top = floats(BLEND_LINES)
        self._length = floats(LOOK_AHEAD)
        self.count = 0
        self._queued_mm = 0.0           # the tool's travel from the first line's end to the last's
        self._fastest = 0.0             # the highest top speed of the lines queued (mm/s)
        self.running = False            # the lines are the running plan
        self.end_q = floats(n)          # the pose the last line's check ended at
        self.queued_at = 0              # ticks_ms of the last line queued
        self.quiet_ms = int(getenv("ARMFW_GCODE_QUIET_MS") or QUIET_MS)
        # Where the check slowed the tool (armfw.cornerwatch; -1.0: where it did not): the most
        # speed into line j from the line before (mm/s), the most acceleration along it (mm/s^2).
        self._entry = floats(BLEND_LINES)
        self._accel = floats(BLEND_LINES)
        self.ramp = ToolRamp(LOOK_AHEAD)
        self._start = floats(nt)
        self.target = floats(nt)
        self._point = floats(nt)

    def add(self, point, top, end_q, accel):
        """Queue the line to point (tool coordinates) at up to top mm/s, whose check ended
        at pose end_q; True when the queue is full: BLEND_LINES lines, or LOOK_AHEAD and more
        long enough that the tool's ramps (at accel mm/s^2) from rest to their top speed and
        back take at most a quarter of their travel (a longer queue would only lengthen the
        check before its first step). A line to where the queued lines end is not queued: it
        has no travel in their plan (its own check, from the pose the last one's check ended
        at, may have found a rounding's worth)."""
        nt = self.nt
        ends = self._ends
        base = self.count * nt
        for i in range(nt):
            ends[base + i] = point[i]
        self.queued_at = ticks_ms()
        if self.count:
            if nt == 4:
                # The pitch turns the short way from the line before (the planner's line rule).
                before = ends[base - 1]
                ends[base + 3] = before + wrap_angle(point[3] - before)
            for i in range(nt):
                if ends[base + i] != ends[base - nt + i]:
                    break
            else:
                return False
            dist = 0.0
            for i in range(3 if nt == 4 else nt):
                d = point[i] - ends[base - nt + i]
                dist += d * d
            self._queued_mm += sqrt(dist)
        else:
            self._queued_mm = 0.0
            self._fastest = 0.0
        if top > self._fastest:
            self._fastest = top
        self.top[self.count] = top
        self._entry[self.count] = -1.0
        self._accel[self.count] = -1.0
        for i in range(len(end_q)):
            self.end_q[i] = end_q[i]
        self.count += 1
        return self.count >= BLEND_LINES or (
            self.count >= LOOK_AHEAD and self._queued_mm >= 4.0 * self._fastest * self._fastest / accel)

    def end(self):
        """Where the queued lines end (tool coordinates)."""
        return self._line(self.count - 1, self._start, self.target)

    def quiet_left(self):
        """ms until the queue starts for want of new lines."""
        return self.quiet_ms - ticks_diff(ticks_ms(), self.queued_at)

    def _line(self, j, a, b):
        """Line j's start into a (after the first: the end of the one before) and end into b; b."""
        nt = self.nt
        ends = self._ends
        base = j * nt
        for i in range(nt):
            if j:
                a[i] = ends[base - nt + i]
            b[i] = ends[base + i]
        return b

    def top_speed(self, j):
        """Line j's top speed (mm/s)."""
        return self.top[j]

    def limit(self, j):
        """The most speed (mm/s) into line j from the one before, -1.0: as the ramp allows."""
        return self._entry[j]

    def accel(self, j, most):
        """The most acceleration (mm/s^2) along line j: most, or less where it was slowed."""
        a = self._accel[j]
        return a if 0.0 <= a < most else most

    def slow(self, first, last, fraction, speed, accel):
        """Slow the junctions into lines first..last to fraction of speed (mm/s), and where
        accel (mm/s^2, the ramp's there; 0.0: none) is given the acceleration along them and
        the line before to fraction of it (armfw.cornerwatch)."""
        for j in range(first, last + 1):
            most = fraction * speed
            if self._entry[j] < 0.0 or most < self._entry[j]:
                self._entry[j] = most
        if accel > 0.0:
            for j in range(first - 1, last + 1):
                most = fraction * accel
                if self._accel[j] < 0.0 or most < self._accel[j]:
                    self._accel[j] = most

    def walk(self, planner, k, q, refill):
        """The planner's walk of the lines, operation k of its plan, from pose q (walk_blocks)."""
        return walk_blocks(planner, k, q, refill, self, self.ramp)


def walk_blocks(planner, k, q, refill, blocks, ramp):
    """The planner's walk of straight blocks (a Blend's lines, an arc's chords), operation k
    of its plan, from pose q, under ramp (a ToolRamp, fed a look-ahead of blocks at a time):
    each step's travel from the ramp, its point on the blocks, solved near the last pose and
    checked (armfw.planner.Planner._check_step); True, or False where refused.

    blocks: count, _line(j, a, b) (block j's start into a after the first, its end into b),
    top_speed(j) (mm/s), what the check slowed (limit(j), the most speed into block j, mm/s;
    accel(j, most), the most acceleration along it; slow(): armfw.cornerwatch's), and scratch:
    _length (ramp.size floats), _start and _point (nt).
    """
    solver = planner.solver
    count = blocks.count
    lengths = blocks._length
    size = ramp.size
    nt = len(blocks._start)
    xyz = 3 if nt == 4 else nt
    # The blocks' ends are p1, each start p0 (the first: where pose q puts the tool).
    p0 = planner._p0
    p1 = planner._tools[k]
    start = blocks._start
    solver.tool_pose(q, start)
    if nt == 4:
        first = blocks._line(0, p0, p1)[3]
        start[3] = first + wrap_angle(start[3] - first)
    ramp.reset(planner.tool_accel, planner.junction_deviation_mm, planner.step_s)
    point = blocks._point
    goal = planner._goal
    max_step = planner._max_step()
    # Each block no faster, nor faster up or down, than its joints allow along it (armfw.linesurvey).
    survey = planner.line_survey(q)
    n = len(q)
    watch = None
    if not refill and planner.corner_rounds > 0:
        watch = planner.corner_watch
        if watch is None:
            from armfw.cornerwatch import CornerWatch
            watch = planner.corner_watch = CornerWatch(n)
        watch.begin(q)
    fed = 0                         # blocks handed to the ramp
    s = 0.0                         # mm along the blocks where the last step ended
    j = 0                           # the block it ended on
    js = 0.0                        # mm along the blocks where block j starts
    step = 0
    while True:
        # Blocks into the ramp while it and the ring of their lengths have room.
        while fed < count and ramp.count < size and fed - j < size:
            if fed == 0:
                for i in range(nt):
                    p0[i] = start[i]
            blocks._line(fed, p0, p1)
            length = planner._line_length(p0, p1, 0.0, 0.0)
            lengths[fed % size] = length
            dist = 0.0
            for i in range(xyz):
                d = p1[i] - p0[i]
                dist += d * d
            dist = sqrt(dist)
            top = survey.top(p0, p1, 0.0, 1.0, length, blocks.top_speed(fed))
            limit = blocks.limit(fed) if fed else -1.0
            accel = blocks.accel(fed, survey.accel)
            if dist > 0.0:
                ramp.add(length, top, (p1[0] - p0[0]) / dist, (p1[1] - p0[1]) / dist,
                         (p1[2] - p0[2]) / dist if xyz == 3 else 0.0, accel, limit)
            else:
                ramp.add(length, top, 0.0, 0.0, 0.0, accel, limit)
            fed += 1
        h = ramp.step()
        # The ramp's last step is the last block's end; so is one that leaves a float's
        # hair of it (the rounding of many steps' sum: armfw.linestep's rule).
        end = fed == count and (ramp.count == 0 or ramp.count == 1
                                and ramp.left() < 1e-9 * lengths[(count - 1) % size])
        halved = False
        while True:
            jj = j
            jjs = js
            f = 1.0
            if end:
                jj = count - 1
            else:
                to = s + h
                while jj < fed - 1 and to >= jjs + lengths[jj % size]:
                    jjs += lengths[jj % size]
                    jj += 1
                length = lengths[jj % size]
                if length > 0.0 and to - jjs < length:
                    f = (to - jjs) / length
            for i in range(nt):
                p0[i] = start[i]
            blocks._line(jj, p0, p1)
            for i in range(nt):
                point[i] = p0[i] + (p1[i] - p0[i]) * f
            st = solver.ik_near(point, goal, q)
            if st > SINGULAR:
                return planner.refuse(st, REASON_SOLVER, k, step + 1, point)
            if not too_fast(goal, q, max_step):
                break
            # A joint would turn too fast: half the step, as a line's (armfw.linestep).
            h *= 0.5
            end = False
            halved = True
            if h < MIN_LINE_STEP_MM:
                return planner.refuse(SINGULAR, REASON_JUMP, k, step + 1, point)
        if halved:
            ramp.took(h)
        step += 1
        s += h
        j = jj
        js = jjs
        for i in range(n):
            q[i] = goal[i]
        if watch is not None and not end:
            watch.step(q, jj, h / planner.step_s, ramp.least_accel, planner, blocks)
        if not planner._check_step(k, step, q, point, True, end):
            return False
        if refill:
            yield
        if end:
            return True


def queue(gcode, words, step_mm):
    """G1 to words (the protocol's target words) at step_mm per step (0: the board's):
    checked from where the queued lines end, queued, and answered `ok` (None where the
    full queue starts and has written `ok` itself); raises gcode.Refused."""
    p = gcode.protocol
    p.closed_form()
    p.parse_target(words, False)
    p.may_move()
    controller = p.controller
    plan = controller.planner
    blend = gcode.blend
    if blend is None:
        blend = gcode.blend = Blend(p.n, p.nt)
    controller.plan()
    controller.add(LINE, p.target, MIN_MOTION, None, step_mm)
    if not plan.check(blend.end_q if blend.count else controller.q):
        p.machine.ended()               # a `!` during the check holds nothing now
        raise gcode.Refused(controller.refusal.status, p.refusal())
    if plan.steps == 0:
        return "ok"                     # no travel: nothing to queue
    if blend.add(p.target, plan.line_top(step_mm), plan.pose, plan.tool_accel):
        p.write("ok")
        start(gcode)
        return None
    return "ok"


def _digits_end(text, i):
    """Where the digits from text[i] on end."""
    while i < len(text) and "0" <= text[i] <= "9":
        i += 1
    return i


def joins(raw):
    """True where request line raw (bytes) joins the queued G1 lines (a G1 without a roll,
    a comment, G90/G91 and the header words that change nothing) rather than waiting
    for them to run."""
    try:
        text = bytes(raw).decode()
    except (UnicodeError, TypeError):
        return False
    star = text.find("*")
    if star >= 0:
        text = text[:star]
    text = "".join(strip_comment(text).upper().split())
    if text[:1] == "N":
        text = text[_digits_end(text, 1):]
    if not text:
        return True
    i = _digits_end(text, 1)
    if text[0] != "G" or i == 1:
        return False
    code = int(text[1:i])
    if code == 1:
        return "B" not in text
    return code in (17, 21, 54, 90, 91, 94) and i == len(text)


def start(gcode):
    """Start the queued G1 lines of gcode (an armfw.gcode.GCode): one plan, checked whole
    first. A refusal is an alarm line (each line was answered when queued) and locks
    motion."""
    p = gcode.protocol
    controller = p.controller
    blend = gcode.blend
    controller.plan()
    controller.add(BLEND, blend)
    try:
        p.start()
        blend.running = True
    except gcode.Refused as e:
        blend.count = 0
        p.machine.lock("G1 refused (%s)" % e.word)
        p.final(True, e.word, e.message)
    except MemoryError:
        blend.count = 0
        p.machine.ended()
        p.machine.lock("G1 refused (%s)" % NO_MEMORY)
        p.out_of_memory("the queued G1 lines: nothing moved", True)
    except Exception as e:  # the last line of defence, as the protocol's: an alarm line, never a traceback
        blend.count = 0
        p.machine.ended()
        p.machine.lock("G1 refused (%s)" % INTERNAL)
        p.final(True, INTERNAL, "%s in the queued G1 lines: %s: nothing moved" % (type(e).__name__, e))
