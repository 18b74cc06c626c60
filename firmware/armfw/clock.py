# SPDX-License-Identifier: MIT
"""The step clock: when a motion's next step starts, in real time.

Steps start one step period after the one before, however long computing a
step took. A step more than a whole period late starts the cadence afresh
from now: the arm is never rushed through steps to catch up.

The live console (armfw.session) waits on it while it reads the console;
ArmController.run() sleeps on it for Python calls at the REPL.
"""

from armfw.compat import ticks_ms, ticks_add, ticks_diff


class StepClock:
    """ticks_ms: the time source (ms), time.ticks_ms by default."""

    def __init__(self, ticks_ms=ticks_ms):
        self.ticks_ms = ticks_ms
        self._next = ticks_ms()

    def start(self):
        """The first step is due now."""
        self._next = self.ticks_ms()

    def due_after(self, ms):
        """The next step is due ms (ms) after the last one was."""
        self._next = ticks_add(self._next, ms)

    def left(self, ms):
        """ms until the step due starts (0 or less: now). More than ms late, the cadence starts afresh."""
        now = self.ticks_ms()
        left = ticks_diff(self._next, now)
        if left < -ms:
            self._next = now
        return left
