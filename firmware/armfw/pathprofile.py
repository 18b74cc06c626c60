# SPDX-License-Identifier: MIT
"""path run's timing: one motion through every waypoint, loaded on the first path run.

The arm follows the joint-space polyline from its pose through the waypoints,
exactly as checked: each step ends on it, a distance s further along (s: the
joints' Euclidean distance, radians). Only the distance per step is planned
here, with ToolRamp's whole-step braking (armfw.profile.brake_speed):
the arm starts from rest, passes each waypoint at the speed its turn allows
and ends at rest.

A step's joint velocity is its displacement / step_s, and no joint's may
change by more than its accel * step_s from one step to the next. Two things
change it: the speed along the path, and a turn at a waypoint passed inside
one of the two steps. SPEED_SHARE of each joint's acceleration goes to the
speed (one rate for the whole path, the least any leg allows), the rest to
the turns:

- a leg's top speed keeps every joint within its speed and passes at most one
  waypoint a step, so two steps hold at most two turns, and one where the
  waypoints around it are two steps apart at their legs' top speeds;
- the step that passes a waypoint is no faster than its junction speed: the
  speed at which the turn, joint i's change of direction du_i, changes its
  velocity within one step by the rest of its acceleration (half of it where
  two turns may share two steps);
- a turn of a right angle or more (a reversal) stops: the last step lands on
  the waypoint, the arm stands there a step and goes on from rest.

The steps lie on the polyline; a servo going from one step's pose to the
next cuts a waypoint passed inside the step by at most junction speed *
step_s * du_i, (1 - SPEED_SHARE) * accel_i * step_s^2 (0.036 deg at 360
deg/s^2 and 20 ms, under a pulse microsecond).

A path whose steps, one on each waypoint in turn from rest to rest, keep
every joint within its speed and acceleration (up to the pulse steps the host
puts waypoints on) is run so, at its own pace: the host's lines are planned a
step a waypoint, ramped as the board ramps its own.
"""

from math import sqrt

from armfw.compat import const
from armfw.numeric import floats
from armfw.profile import brake_speed

# The share of each joint's acceleration the speed along the path takes; turns have the rest.
_SPEED_SHARE = const(0.75)
_BIG = const(1e30)


class PathProfile:
    """The steps along a joint path of up to size waypoints: plan(), then step() until False,
    each step's pose from pose()."""

    def __init__(self, size, servos):
        """size: the most waypoints; servos: the arm's armfw.servo.ServoMap (its pulse step)."""
        from armfw.pulsepick import grid
        num, den = grid(servos.driver)
        self.size = size
        self._quantum = [den / num / k for k in servos.us_per_rad]     # a pulse step, radians
        self._last = [0.0] * servos.n   # the leg before's joint displacements
        self._length = floats(size, "f")     # leg j: from waypoint j-1 (the start) to j
        self._top = floats(size, "f")        # its top speed (rad/s along the path)
        self._junction = floats(size, "f")   # the most the step passing its end may be
        self.count = 0
        self.accel = 1.0                # along the path, rad/s^2
        self.step_s = 0.02

    def plan(self, start, path, count, speed, accel, step_s):
        """Plan the path from pose start through count waypoints (path[w * n + i], radians),
        joint i within speed[i] (rad/s) and accel[i] (rad/s^2), in steps of step_s."""
        self.step_s = step_s
        self.each = self._each_a_step(start, path, count, speed, accel)
        if self.each:
            self.count = count
            self.restart()
            return
        n = len(start)
        length = self._length
        top = self._top
        junction = self._junction
        least = _BIG                    # the least acceleration along any leg
        prev = -1                       # the last leg that moves
        for j in range(count):
            a = (j - 1) * n
            b = j * n
            dist = 0.0
            for i in range(n):
                d = path[b + i] - (start[i] if j == 0 else path[a + i])
                dist += d * d
            dist = sqrt(dist)
            length[j] = dist
            top[j] = _BIG
            junction[j] = _BIG          # a leg that does not move: no turn at its end
            if dist <= 0.0:
                continue
            v = dist / step_s           # a waypoint a step at most
            cos_turn = 0.0
            turn = _BIG
            for i in range(n):
                d = path[b + i] - (start[i] if j == 0 else path[a + i])
                if d < 0.0:
                    d = -d
                if d > 0.0:
                    if speed[i] * dist < v * d:
                        v = speed[i] * dist / d
                    if accel[i] * dist < least * d:
                        least = accel[i] * dist / d
                if prev >= 0:
                    u = (path[b + i] - (start[i] if j == 0 else path[a + i])) / dist
                    u0 = self._direction(start, path, prev, i)
                    cos_turn += u * u0
                    du = u - u0
                    if du < 0.0:
                        du = -du
                    if accel[i] * step_s < turn * du:
                        turn = accel[i] * step_s / du
            top[j] = v
            if prev >= 0:
                if cos_turn <= 0.0:
                    turn = 0.0
                # A waypoint two steps from its neighbours at the legs' top speeds has the
                # whole turn share; two steps that may pass two waypoints, half each.
                if length[prev] >= 2.0 * step_s * top[prev] and dist >= 2.0 * step_s * v:
                    turn *= 1.0 - _SPEED_SHARE
                else:
                    turn *= 0.5 * (1.0 - _SPEED_SHARE)
                if top[prev] < turn:
                    turn = top[prev]
                if v < turn:
                    turn = v
                junction[prev] = turn
            prev = j
        if prev >= 0:
            junction[prev] = 0.0        # the path's end: at rest
        self.count = prev + 1           # legs after the last that moves do not
        self.accel = _SPEED_SHARE * least
        self.restart()

    def restart(self):
        """Back to the path's start, as planned: walked again, the same steps."""
        self.leg = 0
        self.offset = 0.0               # along leg
        self.speed = 0.0                # the last step's (rad/s along the path)
        self.done = self.count == 0

    def _each_a_step(self, start, path, count, speed, accel):
        """True if a step on each waypoint in turn, from rest to rest, keeps every joint
        within its speed and its acceleration, up to the pulse steps the waypoints may have
        been put on: a path the host spaced and ramped itself, run at its pace."""
        n = len(start)
        last = self._last
        quantum = self._quantum
        for i in range(n):
            last[i] = 0.0
        dt = self.step_s
        for j in range(count + 1):
            for i in range(n):
                if j == count:
                    d = 0.0             # and at rest after the last
                else:
                    d = path[j * n + i] - (start[i] if j == 0 else path[(j - 1) * n + i])
                change = d - last[i]
                if abs(d) > speed[i] * dt + quantum[i] or abs(change) > accel[i] * dt * dt + 2.0 * quantum[i]:
                    return False
                last[i] = d
        return True

    def _direction(self, start, path, j, i):
        n = len(start)
        d = path[j * n + i] - (start[i] if j == 0 else path[(j - 1) * n + i])
        return d / self._length[j]

    def step(self):
        """Advance one step; False when the path is done (the last step landed on its end)."""
        if self.done:
            return False
        if self.each:
            self.leg += 1
            self.done = self.leg >= self.count
            self.offset = 1.0           # on the waypoint (pose())
            return True
        length = self._length
        junction = self._junction
        last = self.count - 1
        leg = self.leg
        while leg < last and length[leg] <= 0.0:
            leg += 1
        if self.offset >= length[leg] and junction[leg] <= 0.0:
            # Landed on a stop: a step at rest there, then on from rest.
            if self.speed > 0.0:
                self.speed = 0.0
                return True
            leg += 1
            self.offset = 0.0
            while leg < last and length[leg] <= 0.0:
                leg += 1
        self.leg = leg
        dt = self.step_s
        accel = self.accel
        b = accel * dt
        v = self.speed + b
        if self._top[leg] < v:
            v = self._top[leg]
        # Every waypoint within braking reach (the one at this step's start too) whose
        # junction speed is lower bounds this step: the step passing it is no faster.
        end = length[leg] - self.offset
        reach = v * v / (2.0 * accel) + v * dt
        j = leg
        while True:
            exit_speed = junction[j]
            if exit_speed < v:
                most = brake_speed(end, exit_speed, b, dt)
                if most < v:
                    v = most
            if j >= last:
                break
            j += 1
            if end >= reach:
                break
            end += length[j]
        if v < self.speed - b:
            v = self.speed - b          # rounding only: the braking left room
        step = v * dt
        # A stop ahead on this leg (the path's end, a reversal): the step that reaches it,
        # or leaves a rounding's sliver of it, lands on it.
        left = length[leg] - self.offset
        if junction[leg] <= 0.0 and (step >= left - 1e-6 * b * dt or v <= 0.0):
            self.offset = length[leg]
            self.speed = left / dt
            if leg >= last:
                self.done = True
            return True
        self.speed = v
        offset = self.offset + step
        # A step the braking meant to end on a waypoint ends on it, not a rounding past it
        # or short of it (a few float32 units of the leg on a board): the next step passes
        # it, no faster than its junction speed.
        sliver = 1e-4 * step + 1e-6 * length[leg]
        while offset > length[leg] + sliver and leg < last:
            offset -= length[leg]
            leg += 1
            sliver = 1e-4 * step + 1e-6 * length[leg]
        if offset >= length[leg] - sliver:
            offset = length[leg]
            self.done = leg >= last     # the path's end, reached passing a waypoint
        self.leg = leg
        self.offset = offset
        return True

    def pose(self, start, path, q):
        """The pose the last step ended at (radians) into q."""
        n = len(q)
        leg = self.leg
        if self.each:
            leg -= 1                    # the waypoint the step ended on
            f = 1.0
        else:
            length = self._length[leg]
            f = self.offset / length if length > 0.0 else 1.0
        b = leg * n
        for i in range(n):
            p0 = start[i] if leg == 0 else path[b - n + i]
            q[i] = path[b + i] if f >= 1.0 else p0 + (path[b + i] - p0) * f     # on the waypoint exactly
