# SPDX-License-Identifier: MIT
"""The console's machine state, as GRBL keeps one: moving, held, and the alarm that locks motion.

The protocol starts and ends motions and sets or clears the alarm; the
session holds, resumes and aborts them as real-time bytes arrive. Both change
it only through these methods, and the `?` status line reads it.
"""

from armfw.compat import const

ALARM_ABORTED = "a move was aborted"
ALARM_NO_MEMORY = "a move ran out of memory"

# The states the status line names.
_IDLE = const("idle")
_RUN = const("run")
_HOLD = const("hold")
_STATE_RELAXED = const("relaxed")
STATE_ALARM = "alarm"
_STATE_CHECK = const("check")      # a motion's plan is being checked, nothing has moved yet


class MachineState:
    def __init__(self):
        self.moving = False
        self.held = False
        self.alarm = False
        self.alarm_reason = ALARM_ABORTED     # why motion is locked while alarm is set

    def started(self):
        """A checked motion runs (held already where `!` came during its check)."""
        self.moving = True

    def ended(self):
        """The motion ran to its end or was stopped."""
        self.moving = self.held = False

    def hold(self):
        """`!`: the motion pauses at its next step (or starts held, during its check)."""
        self.held = True

    def resume(self):
        """`~`: the held motion goes on; True if it was held."""
        was = self.held
        self.held = False
        return was

    def lock(self, reason):
        """Motion is refused until unlock() (reason: why, for the refusals)."""
        self.alarm = True
        self.alarm_reason = reason

    def unlock(self):
        """Motion is allowed again (unlock, home: the deliberate acts, as in GRBL)."""
        self.alarm = False
        self.alarm_reason = ALARM_ABORTED

    def word(self, checking, relaxed):
        """The state the status line names: checking, a plan's check under way; relaxed, the pose unknown."""
        if self.moving:
            return _HOLD if self.held else _RUN
        if checking:
            return _STATE_CHECK
        if self.alarm:
            return STATE_ALARM
        if relaxed:
            return _STATE_RELAXED
        return _IDLE
