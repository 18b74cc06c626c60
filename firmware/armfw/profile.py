# SPDX-License-Identifier: MIT
"""Motion timing: when each step of an already checked path is reached.

A profile changes the timing of a path, never its geometry: the planner
walks the same straight joint-space line (joint moves) or the same tool line
(lines) as at constant speed, and asks here how far along it each step ends.
Every step still lasts step_ms; only the distance covered per step changes.

JointProfile: a synchronized joint move. All joints run one shared
trapezoid f(t), 0 to 1, so the joint-space path stays the straight line from
start to goal and every joint starts and stops together. With per-joint
distances d_i, speed limits vmax_i and accelerations amax_i the normalized
limits are V = min(vmax_i / |d_i|), A = min(amax_i / |d_i|), and the
trapezoid with those limits is the quickest such motion that keeps the line
(triangular where the move is too short to reach V). Its duration is rounded
up to whole steps by running it slightly slower (the same shape, stretched):
no limit is exceeded and the last step lands exactly on 1.0.

ToolRamp: the tool's speed along lines, planned over a look-ahead queue of
straight blocks as GRBL does (a backward pass, and each step's speed as the forward one; each junction's
speed from the angle between the blocks and the junction deviation). A block
may be a part of a line where the joints need the tool slower: lowering the
speed along the path is a block boundary with no turn. Each step's speed
changes by at most accel * step_s from the last one's, and the queue's end
is reached at rest. A hold decelerates along the path at the same rate.

Trapezoid, not S-curve: a step lasts step_ms (20 ms) and the servo's own
loop smooths within it; the jerk an S-curve would bound is already spread
over one step (accel * step_s per step at most), and the S-curve's extra
phases cost more time for the same limits and three times the code.
"""

from math import sqrt

# Blocks the tool ramp plans over: GRBL's look-ahead on an ATmega328P.
LOOKAHEAD = 16

# Lines brake at this fraction of accel: fixed steps rarely end exactly at rest, and the
# last one, cut short, may slow by up to 9/8 of a step's speed change (a hold stops
# between steps and brakes at accel itself).
BRAKE = 8.0 / 9.0

# A junction turning less than this (cosine of the turn, 1 - 1e-6) is straight on.
_STRAIGHT = 0.999999


class JointProfile:
    """One synchronized trapezoid, planned by plan(), sampled per step by fraction(s).

    After plan(): steps (the move's whole steps), duration_s (the unrounded
    time-optimal duration), speed (V, the peak of df/dt, 1/s), accel (A, 1/s^2)
    and ramp_s (the time spent accelerating, and decelerating).
    """

    def __init__(self):
        self.steps = 0
        self.duration_s = 0.0
        self.speed = 0.0
        self.accel = 0.0
        self.ramp_s = 0.0
        self._time_per_step = 0.0

    def plan(self, start, goal, vmax, amax, step_s):
        """Plan the move from joint angles start to goal (radians), each joint i within
        vmax[i] (rad/s) and amax[i] (rad/s^2), in steps of step_s seconds; returns steps."""
        speed = accel = -1.0
        for i in range(len(start)):
            d = goal[i] - start[i]
            if d < 0.0:
                d = -d
            if d > 0.0:
                v = vmax[i] / d
                a = amax[i] / d
                if speed < 0.0 or v < speed:
                    speed = v
                if accel < 0.0 or a < accel:
                    accel = a
        if speed < 0.0:
            self.steps = 0
            self.duration_s = 0.0
            return 0
        ramp = speed / accel
        if speed * ramp >= 1.0:
            # Too short to reach V: accelerate to half way, decelerate from there.
            ramp = sqrt(1.0 / accel)
            speed = accel * ramp
            duration = 2.0 * ramp
        else:
            duration = 1.0 / speed + ramp
        self.speed = speed
        self.accel = accel
        self.ramp_s = ramp
        self.duration_s = duration
        # Whole steps, rounded up; a float hair over a whole number is not one more step.
        steps = int(duration / step_s + 1.0 - 1e-9)
        if steps < 1:
            steps = 1
        self.steps = steps
        self._time_per_step = duration / steps
        return steps

    def fraction(self, s):
        """How far along (0..1) the move is at the end of step s (1..steps); exactly 1.0 at the last."""
        if s >= self.steps:
            return 1.0
        t = s * self._time_per_step
        ramp = self.ramp_s
        if t < ramp:
            return 0.5 * self.accel * t * t
        left = self.duration_s - t
        if left < ramp:
            return 1.0 - 0.5 * self.accel * left * left
        return self.speed * (t - 0.5 * ramp)


def junction_speed(cos_turn, accel, deviation_mm):
    """GRBL's junction deviation: the speed (mm/s) at which the tool may pass a corner that
    turns it by the angle whose cosine is cos_turn (1: straight on, -1: straight back):
    that of an arc at centripetal acceleration accel whose middle stays deviation_mm
    from the corner. -1.0: no limit (straight on)."""
    if cos_turn >= _STRAIGHT:
        return -1.0                     # no turn: only the blocks' own speeds limit it
    if cos_turn <= -_STRAIGHT:
        return 0.0                      # straight back: stop
    sin_half = sqrt(0.5 * (1.0 + cos_turn))     # sine of half the angle between the blocks' backs
    return sqrt(accel * deviation_mm * sin_half / (1.0 - sin_half))


class ToolRamp:
    """The tool's speed along a queue of straight blocks, one step at a time.

    reset() starts from rest; add() queues a block (its length mm, its top
    speed mm/s, its direction, for the junction with the block before);
    step() returns the distance (mm) the next step covers and leaves passed
    (how many blocks it finished; they leave the queue) and offset (mm into
    the block it ends in, the first one left). The queue always plans to
    stop at its last block's end; blocks added while the tool moves are
    planned in (the speed already reached is kept).

    Braking: the steps after this one, each slower by b = BRAKE * accel *
    step_s, are down to a block's exit speed x by the step that crosses its
    end R mm ahead (this step and those faster than x end before it) when
    v^2 + b v <= 2 a R + x^2 + b x, a = BRAKE * accel. With R = end - position
    every block's bound is one number less 2 a position: the backward pass
    keeps, per block, the least of its own and those after it, and a step
    computes one square root whatever the queue holds.
    """

    def __init__(self, size=LOOKAHEAD):
        self.size = size
        self._length = [0.0] * size
        self._top = [0.0] * size        # a block's top speed
        self._limit = [0.0] * size      # the most its entry speed may be (junction, tops)
        self._entry = [0.0] * size      # its entry speed, at most (the backward pass)
        self._bound = [0.0] * size      # the least braking bound from its end on (class doc)
        self._dir = [0.0] * 3           # the last block's direction (unit)
        self.reset(1.0, 0.0, 0.02)

    def reset(self, accel, deviation_mm, step_s):
        """Empty the queue, the tool at rest: accel mm/s^2, junction deviation mm, step s."""
        self.accel = accel
        self.deviation_mm = deviation_mm
        self.step_s = step_s
        self.count = 0
        self._head = 0
        self._queued = 0.0              # mm from the first block's start to the queue's end
        self._base = 0.0                # mm from where the bounds count to the first block's start
        self.passed = 0                 # blocks the last step() finished
        self.offset = 0.0
        self.speed = 0.0                # this step's speed (distance / step_s), mm/s
        self.holding = False
        self._dir[0] = self._dir[1] = self._dir[2] = 0.0

    def add(self, length, top, dx, dy, dz):
        """Queue a block of length mm at up to top mm/s, in direction (dx, dy, dz) (unit,
        or zeros for a block that only turns the wrist); False if the queue is full (or
        length or top is not above zero: nothing to queue)."""
        if self.count >= self.size or not length > 0.0 or not top > 0.0:
            return False
        d = self._dir
        k = (self._head + self.count) % self.size
        if self.count == 0:
            limit = 0.0                 # the queue ran out: the tool is at rest
        else:
            if dx == 0.0 and dy == 0.0 and dz == 0.0 or d[0] == 0.0 and d[1] == 0.0 and d[2] == 0.0:
                limit = -1.0            # a wrist-only block: no corner to cut
            else:
                limit = junction_speed(d[0] * dx + d[1] * dy + d[2] * dz, self.accel, self.deviation_mm)
            before = self._top[(k - 1) % self.size]
            if limit < 0.0 or before < limit:
                limit = before
            if top < limit:
                limit = top
        d[0] = dx
        d[1] = dy
        d[2] = dz
        self._length[k] = length
        self._top[k] = top
        self._limit[k] = limit
        self.count += 1
        self._queued += length
        self._plan()
        return True

    def _plan(self):
        """The backward pass: each block's highest entry speed from which the tool can
        still stop at the queue's end (and meet every junction's limit on the way),
        and the braking bounds (class doc), counted from the first block's start.

        The forward pass is step() itself: each step is at most accel * step_s
        faster than the last, so the speed reached is planned as it is reached.
        """
        size = self.size
        a = self.accel * BRAKE
        b = a * self.step_s
        exit_speed = 0.0
        end = self._queued
        bound = -1.0
        for j in range(self.count - 1, -1, -1):
            k = (self._head + j) % size
            here = 2.0 * a * end + exit_speed * exit_speed + b * exit_speed
            if bound < 0.0 or here < bound:
                bound = here
            self._bound[k] = bound
            length = self._length[k]
            v = sqrt(exit_speed * exit_speed + 2.0 * a * length)
            limit = self._limit[k]
            exit_speed = v if v < limit else limit
            self._entry[k] = exit_speed
            end -= length
        self._base = 0.0

    def remaining_mm(self):
        """Distance (mm) from the tool to the queue's end."""
        return self._queued - self.offset

    def stopping_mm(self):
        """Distance (mm) the tool still covers if it decelerates from now at accel (a hold)."""
        a_dt = self.accel * self.step_s
        n = int(self.speed / a_dt)
        far = self.step_s * (n * self.speed - a_dt * 0.5 * n * (n + 1))
        left = self.remaining_mm()
        return far if far < left else left

    def hold(self):
        """Decelerate to rest along the path (step() returns 0.0 once at rest)."""
        self.holding = True

    def resume(self):
        """Accelerate again from where the hold stopped."""
        self.holding = False

    def step(self):
        """The distance (mm) the next step covers; 0.0 at rest (the queue done, or held)."""
        self.passed = 0
        if self.count == 0:
            self.speed = 0.0
            return 0.0
        a_dt = self.accel * self.step_s
        head = self._head
        v = self.speed - a_dt if self.holding else self.speed + a_dt
        top = self._top[head]
        if top < v:
            v = top
        a = self.accel * BRAKE
        b = a * self.step_s
        c = self._bound[head] - 2.0 * a * (self._base + self.offset)
        brake = 0.5 * (sqrt(b * b + 4.0 * c) - b) if c > 0.0 else 0.0
        if brake < v:
            v = brake
            if v < self.speed - a_dt:
                v = self.speed - a_dt   # rounding only: the backward pass leaves room to brake
        if v <= 0.0:
            self.speed = 0.0
            return 0.0
        ds = v * self.step_s
        left = self._queued - self.offset
        if ds >= left:
            # The last step: it ends on the queue's end (at most as fast as this one), at rest.
            self.passed = self.count
            self.count = 0
            self._queued = 0.0
            self.offset = 0.0
            self.speed = 0.0
            return left
        self.speed = v
        # Move along the queue, dropping the blocks passed.
        offset = self.offset + ds
        passed = 0
        while self.count > 1 and offset >= self._length[head]:
            length = self._length[head]
            offset -= length
            self._queued -= length
            self._base += length
            head = (head + 1) % self.size
            self.count -= 1
            passed += 1
        self._head = head
        self.offset = offset
        self.passed = passed
        return ds
