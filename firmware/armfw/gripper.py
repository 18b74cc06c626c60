# SPDX-License-Identifier: MIT
"""The gripper: one servo channel with an open and a closed pulse.

cfg is a board's "gripper" object (board.py has checked it):
{"channel": 5, "open_us": 1000, "close_us": 1900, "min_us": 500, "max_us": 2500}.
A pulse outside min_us..max_us is refused (ValueError), never clamped.
Whether the jaws really close on an object (stall current, grip force) only
hardware can show; state records what was commanded, not what happened.
"""

from armfw.compat import const

_OPEN = const("open")
_CLOSED = const("closed")


class Gripper:
    """Open/close the gripper through any servo driver (drivers.make)."""

    def __init__(self, driver, cfg):
        self.driver = driver
        self.channel = cfg["channel"]
        self.open_us = cfg["open_us"]
        self.close_us = cfg["close_us"]
        self.min_us = cfg["min_us"]
        self.max_us = cfg["max_us"]
        self.state = None       # unknown until commanded

    def set_us(self, us):
        """Raw pulse (int microseconds) inside the gripper's window; state follows it."""
        if type(us) is not int or us < self.min_us or us > self.max_us:
            raise ValueError("gripper pulse must be an int %d..%d us, got %r"
                             % (self.min_us, self.max_us, us))
        self.driver.set_us(self.channel, us)
        if us == self.open_us:
            self.state = _OPEN
        elif us == self.close_us:
            self.state = _CLOSED
        else:
            self.state = None

    def open(self):
        self.set_us(self.open_us)

    def close(self):
        self.set_us(self.close_us)

    def off(self):
        """Stop the gripper's pulses (it goes limp; its position is then unknown)."""
        self.driver.off(self.channel)
        self.state = None
