# SPDX-License-Identifier: MIT
"""Corners a joint cannot take at the tool's junction speed, found by the check walk and slowed.

The tool ramp (armfw.profile.ToolRamp) passes a corner between two blocks (G1
lines, an arc's chords) as fast as GRBL's junction deviation allows: a rule of
the tool's path. A joint's rate of turn per mm of the tool's may change much
at a corner: at a right angle the elbow, still turning along one line, hardly
turns along the next, and changes its speed by more than its acceleration
allows in the one step that crosses it.

CornerWatch follows each joint's speed over a check walk's steps along blocks
(armfw.gcodeblend.walk_blocks: the exact poses, a step at a time, from rest).
A joint's change of speed over a step is its turn per mm's change (the corner)
times the tool's speed before it, plus its turn per mm times the tool's change
of speed (the ramp's). Where that passes the joint's limit within the two
steps that reach a junction, the tool's speed there and its acceleration into
and out of it come down by one share, which takes both parts down in
proportion (blocks.slow), and the executor walks the plan again: the check,
and every later walk of the plan, take the slower corner.
"""

from armfw.compat import const
from armfw.numeric import floats

# A slowed corner keeps this percentage of what its joint's limit leaves (the rest, for what
# is not in proportion to the speed).
_KEPT_PERCENT = const(90)


class CornerWatch:
    """Each joint's speed over the steps of a check walk of blocks, for an arm of n joints;
    slowed: True once a corner was slowed (the executor walks the plan again)."""

    def __init__(self, n):
        self._q = floats(n)             # the pose the last step reached
        self._slope = floats(n)         # each joint's turn per mm of the tool's over it (rad/mm)
        self.slowed = False

    def begin(self, q):
        """Blocks walked from pose q, at rest."""
        for i in range(len(q)):
            self._q[i] = q[i]
            self._slope[i] = 0.0
        self._from = 0                  # the block the last step started in
        self._last = 0                  # and the one it ended in
        self._speed = 0.0               # the tool's speed over it (mm/s)

    def step(self, q, j, speed, accel, planner, blocks):
        """A step of planner's walk to pose q, ending in block j (its index), at speed mm/s,
        braking at accel mm/s^2 (the ramp's); slows blocks' corner where a joint needs it."""
        step_s = planner.step_s
        limits = planner.joint_accel
        was = self._speed
        first = self._from + 1          # the junctions the last two steps passed
        self._from = self._last
        self._last = j
        self._speed = speed
        fraction = 1.0                  # of the speed and acceleration at the corner kept
        ramping = False
        for i in range(len(q)):
            slope = (q[i] - self._q[i]) / (speed * step_s) if speed > 0.0 else 0.0
            self._q[i] = q[i]
            bend = slope - self._slope[i]
            self._slope[i] = slope
            most = limits[i] * step_s   # the most change of the joint's speed over a step
            ramp = abs(slope * (speed - was))
            change = abs(bend) * was + ramp
            if first > j or most <= 0.0 or abs(bend * was + slope * (speed - was)) <= most:
                continue
            kept = _KEPT_PERCENT * most / (100.0 * change)
            if kept < fraction:
                fraction = kept
                ramping = ramp > 0.1 * change       # the ramp's part is more than rounding
        if fraction < 1.0:
            blocks.slow(first, j, fraction, speed, accel if ramping else 0.0)
            self.slowed = True
