# SPDX-License-Identifier: MIT
"""Joint-move timing: when each step of an already checked joint move is reached.

A profile changes the timing of a path, never its geometry: the planner
walks the same straight joint-space line as at constant speed, and asks here
how far along it each step ends. Every step still lasts step_ms; only the
distance covered per step changes. (Lines: armfw.profile's ToolRamp, loaded
by the first line.)

JointProfile: a synchronized joint move. All joints run one shared
trapezoid f(t), 0 to 1, so the joint-space path stays the straight line from
start to goal and every joint starts and stops together. With per-joint
distances d_i, speed limits vmax_i and accelerations amax_i the normalized
limits are V = min(vmax_i / |d_i|), A = min(amax_i / |d_i|), and the
trapezoid with those limits is the quickest such motion that keeps the line
(triangular where the move is too short to reach V). Its duration is rounded
up to whole steps by running it slightly slower (the same shape, stretched):
no limit is exceeded and the last step lands exactly on 1.0.

Trapezoid, not S-curve: a step lasts step_ms (20 ms) and the servo's own
loop smooths within it; the jerk an S-curve would bound is already spread
over one step (accel * step_s per step at most), and the S-curve's extra
phases cost more time for the same limits and three times the code.
"""

from math import sqrt


class JointProfile:
    """One synchronized trapezoid, planned by plan(), sampled per step by fraction(s).

    After plan(): steps (the move's whole steps), duration_s (the unrounded
    time-optimal duration) and ramp_s (the time spent accelerating, and
    decelerating). The limits are kept inverted, 1/V (s) and 1/A (s^2): a
    joint's distance divided by its limit, never a limit divided by a distance
    that may be next to nothing.
    """

    def __init__(self):
        self.steps = 0
        self.duration_s = 0.0
        self.ramp_s = 0.0
        self.inv_speed = 0.0
        self.inv_accel = 0.0
        self.period = 0.0

    def plan(self, start, goal, speed, accel, step_s):
        """Plan the move from joint angles start to goal (radians), each joint i within
        speed[i] (rad/s) and accel[i] (rad/s^2), in steps of step_s seconds; returns steps."""
        inv_speed = inv_accel = 0.0
        for i in range(len(start)):
            d = goal[i] - start[i]
            if d < 0.0:
                d = -d
            if d / speed[i] > inv_speed:
                inv_speed = d / speed[i]
            if d / accel[i] > inv_accel:
                inv_accel = d / accel[i]
        if inv_speed <= 0.0:
            self.steps = 0
            self.duration_s = 0.0
            return 0
        if inv_accel < inv_speed * inv_speed:
            ramp = inv_accel / inv_speed            # V / A
            span = inv_speed + ramp
        else:
            # Too short to reach V: accelerate to half way, decelerate from there.
            ramp = sqrt(inv_accel)
            inv_speed = ramp                        # the peak reached, A * ramp
            span = 2.0 * ramp
        self.inv_speed = inv_speed
        self.inv_accel = inv_accel
        self.ramp_s = ramp
        self.duration_s = span
        # Whole steps, rounded up; a float hair over a whole number is not one more step.
        steps = int(span / step_s + 1.0 - 1e-9)
        if steps < 1:
            steps = 1
        self.steps = steps
        self.period = span / steps
        return steps

    def fraction(self, s):
        """How far along (0..1) the move is at the end of step s (1..steps); exactly 1.0 at the last."""
        if s >= self.steps:
            return 1.0
        t = s * self.period
        ramp = self.ramp_s
        if t < ramp:
            return 0.5 * t * t / self.inv_accel
        left = self.duration_s - t
        if left < ramp:
            return 1.0 - 0.5 * left * left / self.inv_accel
        return (t - 0.5 * ramp) / self.inv_speed
