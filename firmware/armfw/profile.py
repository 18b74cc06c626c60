# SPDX-License-Identifier: MIT
"""Line timing: the tool's speed along straight blocks, loaded by the first line.

A profile changes the timing of a path, never its geometry: the planner
walks the same tool line as at constant speed, and asks here how far along
it each step ends. Every step still lasts step_ms; only the distance covered
per step changes. (Joint moves: armfw.jointprofile, which says why a
trapezoid and not an S-curve.)

ToolRamp: the tool's speed along lines, planned over a look-ahead queue of
straight blocks as GRBL does (a backward pass, and each step's speed as the forward one; each junction's
speed from the angle between the blocks and the junction deviation). A block
may be a part of a line where the joints need the tool slower: lowering the
speed along the path is a block boundary with no turn. A block may also
need a gentler acceleration than the tool's, where a joint turns fast for
the tool's travel (armfw.linesurvey): as GRBL's blocks, each has its own.
Each step's speed changes by at most accel * step_s from the last one's
(the accel of the block it starts in; braking towards a block's end, the
least of the blocks on the way and of the one after it), and the queue's end is reached at rest. A
hold decelerates along the path at the same rate.
"""

from math import sqrt

from armfw.numeric import floats


def brake_speed(left, exit_speed, b, step_s):
    """The highest speed (mm/s) of this step from which the steps after it, each slower by b
    (mm/s), are down to exit_speed x by the one that crosses the end left mm ahead. With v
    in (x + (m-1) b, x + m b] the m steps faster than x end before it: m v - b m (m-1) / 2
    <= left / step_s. m is the least whole number with G(m) = m x + b m (m+1) / 2 (the sum
    at the top of its range) above that."""
    u = left / step_s
    x = exit_speed
    if x > u:
        return x                    # not one step faster than x fits: cross at x
    w = 2.0 * x + b
    m = int((sqrt(w * w + 8.0 * b * u) - w) / (2.0 * b)) + 1
    # The root in floats: settle m by the sums themselves (G(m-1) <= u < G(m)).
    below = (m - 1) * (x + 0.5 * b * m)
    while m > 1 and below > u:
        m -= 1
        below = (m - 1) * (x + 0.5 * b * m)
    while m * (x + 0.5 * b * (m + 1)) <= u:
        m += 1
        below = (m - 1) * (x + 0.5 * b * m)
    if below + x > u:
        return x + (m - 1) * b      # piece m out of reach: the top of piece m - 1
    return (u + 0.5 * b * m * (m - 1)) / m


def junction_speed(cos_turn, accel, junction_deviation_mm):
    """GRBL's junction deviation: the speed (mm/s) at which the tool may pass a corner that
    turns it by the angle whose cosine is cos_turn (1: straight on, -1: straight back):
    that of an arc at centripetal acceleration accel whose middle stays
    junction_deviation_mm from the corner. -1.0: no limit (straight on)."""
    if cos_turn >= 0.999999:            # less than 0.08 deg
        return -1.0                     # no turn: only the blocks' own speeds limit it
    if cos_turn <= -0.999999:
        return 0.0                      # straight back: stop
    sin_half = sqrt(0.5 * (1.0 + cos_turn))     # sine of half the angle between the blocks' backs
    return sqrt(accel * junction_deviation_mm * sin_half / (1.0 - sin_half))


class ToolRamp:
    """The tool's speed along a queue of straight blocks, one step at a time.

    reset() starts from rest; add() queues a block (its length mm, its top
    speed mm/s, its direction, for the junction with the block before, and
    the most acceleration it takes, the tool's unless less);
    step() returns the distance (mm) the next step covers and leaves passed
    (how many blocks it finished; they leave the queue) and offset (mm into
    the block it ends in, the first one left). The queue always plans to
    stop at its last block's end; blocks added while the tool moves are
    planned in (the speed already reached is kept).

    Braking is counted in whole steps (brake_speed): the steps are what the
    arm takes, and a bound that counts them continuously would leave the
    last one, cut short, or the one that crosses into a slower block, more
    than one step's speed change from the one before.
    """

    def __init__(self, size=16):        # GRBL's look-ahead on an ATmega328P
        self.size = size
        self._length = floats(size)
        self.top = floats(size)         # a block's top speed
        self.limit = floats(size)       # the most its entry speed may be (junction, tops)
        self._accel = floats(size)      # the most acceleration it takes
        self._entry = floats(size)      # its entry speed, at most (the backward pass)
        self.delta = floats(3)          # the last block's direction (unit)
        self.reset(1.0, 0.0, 0.02)

    def reset(self, accel, junction_deviation_mm, step_s):
        """Empty the queue, the tool at rest: the tool's accel mm/s^2 (the most any block
        takes; its corners' too), junction deviation mm, step s."""
        self.accel = accel
        self.least_accel = accel        # of the queued blocks, or less (see plan())
        self.junction_deviation_mm = junction_deviation_mm
        self.step_s = step_s
        self.count = 0
        self._head = 0
        self.total = 0.0                # mm from the first block's start to the queue's end
        self.passed = 0                 # blocks the last step() finished
        self.offset = 0.0
        self._from = 0.0                # the offset the last step started at
        self.speed = 0.0                # this step's speed (distance / step_s), mm/s
        self.holding = False
        self.delta[0] = self.delta[1] = self.delta[2] = 0.0
        self._was_head = self._was_count = 0
        self._was_total = 0.0

    def add(self, length, top, dx, dy, dz, accel=0.0, limit=-1.0):
        """Queue a block of length mm at up to top mm/s, in direction (dx, dy, dz) (unit,
        or zeros for a block that only turns the wrist), taking at most accel mm/s^2 (0.0
        or above the tool's: the tool's), entered from the block before at most at limit
        mm/s (-1.0: as fast as the junction allows); False if the queue is full (or length
        or top is not above zero: nothing to queue)."""
        if self.count >= self.size or not length > 0.0 or not top > 0.0:
            return False
        d = self.delta
        k = (self._head + self.count) % self.size
        if self.count == 0:
            entry = 0.0                 # the queue ran out: the tool is at rest
        else:
            if dx == 0.0 and dy == 0.0 and dz == 0.0 or d[0] == 0.0 and d[1] == 0.0 and d[2] == 0.0:
                entry = -1.0            # a wrist-only block: no corner to cut
            else:
                cos_turn = d[0] * dx + d[1] * dy + d[2] * dz
                entry = junction_speed(cos_turn, self.accel, self.junction_deviation_mm)
                if entry > 0.0:
                    # Short blocks turning a little each are an arc (a circle's chords): no faster
                    # round it than accel allows across, v^2 / r (Marlin's rule for short segments),
                    # r the arc's through the shorter block, chord / (2 sin(turn / 2)).
                    chord = self._length[(k - 1) % self.size]
                    if length < chord:
                        chord = length
                    arc = sqrt(self.accel * chord / sqrt(2.0 * (1.0 - cos_turn)))
                    if arc < entry:
                        entry = arc
            before = self.top[(k - 1) % self.size]
            if entry < 0.0 or before < entry:
                entry = before
            if top < entry:
                entry = top
            if 0.0 <= limit < entry:
                entry = limit
        d[0] = dx
        d[1] = dy
        d[2] = dz
        self._length[k] = length
        self.top[k] = top
        self.limit[k] = entry
        self._accel[k] = self._block_accel(accel)
        self.count += 1
        self.total += length
        self.plan()
        return True

    def _block_accel(self, accel):
        """A block's acceleration (mm/s^2) given accel: the tool's where accel is 0.0 or more."""
        return accel if 0.0 < accel < self.accel else self.accel

    def extend(self, length, top, accel=0.0):
        """Lengthen the last queued block by length mm where its top speed is top mm/s and it
        takes accel mm/s^2 (as add()'s) (the next stretch of a line, as the one before: one
        block keeps the ramp's steps those of the whole line); False where it is not, for
        add() to queue."""
        if self.count == 0:
            return False
        k = (self._head + self.count - 1) % self.size
        if self.top[k] != top or self._accel[k] != self._block_accel(accel):
            return False
        self._length[k] += length
        self.total += length
        self.plan()
        return True

    def plan(self):
        """The backward pass: each block's highest entry speed from which the tool can
        still stop at the queue's end, meeting every junction's limit on the way.

        Braking towards a block's end takes the least acceleration of the blocks
        on the way and of the one after it (the speed's change at a block's end
        is that block's), as step() brakes: a block's entry is bounded by every
        later block's exit, not by the next block's entry alone.

        The forward pass is step() itself: each step is at most accel * step_s
        faster than the last, so the speed reached is planned as it is reached.

        least_accel is set anew here, to the queue's least; blocks that leave the
        queue may leave it lower than the rest need, which brakes a hold gently
        and looks further for ends to brake for: never less safe.
        """
        size = self.size
        head = self._head
        count = self.count
        least = self.accel
        for j in range(count):
            if self._accel[(head + j) % size] < least:
                least = self._accel[(head + j) % size]
        self.least_accel = least
        if least >= self.accel:
            # Every block takes the tool's acceleration: the next block's entry bounds
            # every later exit already, the same rule in one term a block.
            a2 = 2.0 * least
            exit_speed = 0.0
            for j in range(count - 1, 0, -1):
                k = (head + j) % size
                v = sqrt(exit_speed * exit_speed + a2 * self._length[k])
                limit = self.limit[k]
                exit_speed = v if v < limit else limit
                self._entry[k] = exit_speed
            return
        for j in range(count - 1, 0, -1):
            k = (head + j) % size
            entry = self.limit[k]
            accel = self.accel
            dist = 0.0
            for i in range(j, count):
                b = (head + i) % size
                if self._accel[b] < accel:
                    accel = self._accel[b]
                dist += self._length[b]
                exit_speed = 0.0
                if i + 1 < count:
                    after = (b + 1) % size
                    exit_speed = self._entry[after]
                    if self._accel[after] < accel:
                        accel = self._accel[after]
                v = sqrt(exit_speed * exit_speed + 2.0 * accel * dist)
                if v < entry:
                    entry = v
            self._entry[k] = entry

    def left(self):
        """Distance (mm) from the tool to the queue's end."""
        return self.total - self.offset

    def stopping_mm(self):
        """Distance (mm) the tool still covers if it decelerates from now (a hold)."""
        delta = self.least_accel * self.step_s
        n = int(self.speed / delta)
        dist = self.step_s * (n * self.speed - delta * 0.5 * n * (n + 1))
        left = self.left()
        return dist if dist < left else left

    def hold(self):
        """Decelerate to rest along the path (step() returns 0.0 once at rest)."""
        self.holding = True

    def resume(self):
        """Accelerate again from where the hold stopped."""
        self.holding = False

    def took(self, step):
        """The last step covered only step mm, its caller shortened it: the tool is there,
        at that speed (the blocks it no longer reaches are back in the queue)."""
        self._head = self._was_head
        self.count = self._was_count
        self.total = self._was_total
        self.speed = step / self.step_s
        self._advance(self._from + step)

    def step(self):
        """The distance (mm) the next step covers; 0.0 at rest (the queue done, or held)."""
        # The last step passed a block's end faster than the junction allows: it ended there
        # (braking lands on the end, to rounding; a step across it is no faster than the
        # limit). This step crosses the corner, then, no faster than the limit (a corner
        # that stops the tool, limit 0.0, is the braking's).
        crossing = self.passed > 0 and self.count > 0 and self.speed > self.limit[self._head]
        self.passed = 0
        self._from = self.offset
        # What took() goes back to.
        self._was_head = self._head
        self._was_count = self.count
        self._was_total = self.total
        if self.count == 0:
            self.speed = 0.0
            return 0.0
        size = self.size
        dt = self.step_s
        head = self._head
        accel = self._accel[head]
        delta = accel * dt
        v = self.speed - self.least_accel * dt if self.holding else self.speed + delta
        top = self.top[head]
        if crossing and 0.0 < self.limit[head] < top:
            top = self.limit[head]
        if top < v:
            v = top
        # Every block end within braking reach whose exit is slower bounds this step,
        # braking at the least acceleration of the blocks up to it and the one after.
        end = self._length[head] - self.offset
        reach = v * v / (2.0 * self.least_accel) + v * dt     # more than a stop from v takes
        k = head
        for j in range(self.count):
            if end >= reach:
                break                   # a stop from v fits before this end: it, and those after, do not bind
            k = (k + 1) % size
            exit_speed = 0.0
            if j + 1 < self.count:
                exit_speed = self._entry[k]
                if self._accel[k] < accel:
                    accel = self._accel[k]      # the speed's change at the end is the next block's
            if exit_speed < v:
                most = brake_speed(end, exit_speed, accel * dt, dt)
                if most < v:
                    v = most
            end += self._length[k]
        if v < self.speed - delta:
            v = self.speed - delta      # rounding only: the backward pass leaves room to brake
        left = self.total - self.offset
        if v <= 0.0 and (self.holding or left > delta * dt):
            self.speed = 0.0
            return 0.0
        step = v * dt
        if step >= left or v <= 0.0:
            # The last step: it ends on the queue's end, at rest (what rounding left of it, too).
            self.passed = self.count
            self.count = 0
            self.total = 0.0
            self.offset = 0.0
            self.speed = 0.0
            return left
        self.speed = v
        self._advance(self.offset + step)
        return step

    def _advance(self, offset):
        """Move along the queue to offset mm into its first block, dropping the blocks passed."""
        head = self._head
        passed = 0
        while self.count > 1 and offset >= self._length[head]:
            length = self._length[head]
            offset -= length
            self.total -= length
            head = (head + 1) % self.size
            self.count -= 1
            passed += 1
        self._head = head
        self.offset = offset
        self.passed = passed
