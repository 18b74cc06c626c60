# SPDX-License-Identifier: MIT
"""The keyboard of `armctl calibrate`: the key bindings, their help lines, and single key
presses read from the terminal without Enter."""

import os
import sys

# Keyboard jog steps in microseconds; shown on screen by jog_help().
JOG_KEYS = {"a": -10, "d": 10, "A": -1, "D": 1, "z": -100, "c": 100}
ARROWS = {"[D": "a", "[C": "d", "[B": "A", "[A": "D"}
RECORD_KEYS = ("\r", "\n")
QUIT_KEYS = ("q", "\x03", "\x04", "")
UNDO_KEY = "u"

# Tool-centre-point touches: keys 1..5 pick the joint, these step it (degrees).
TOUCH_KEYS = {"a": -1.0, "d": 1.0, "A": -0.1, "D": 0.1, "z": -10.0, "c": 10.0}
FINISH_KEYS = ("f",)


def jog_help():
    return ("keys: a/d or left/right -/+10 us   A/D or down/up -/+1 us   z/c -/+100 us   "
            "u undo   Enter record   q quit (nothing written to the board; progress kept)")


def verify_help():
    return ("keys: a/d -/+1 deg   A/D -/+0.1 deg   z/c -/+10 deg   Enter the joint is at the pose   "
            "q quit (nothing is written either way)")


def touch_help():
    return ("keys: 1..5 pick the joint   a/d -/+1 deg   A/D -/+0.1 deg   z/c -/+10 deg   "
            "Enter record the touch   f finish (4+ touches)   q quit (nothing saved)")


class TerminalKeys:
    """Single key presses from the terminal, without Enter (cbreak mode while open).

    Keys typed while the arm was still carrying out the last jog are dropped
    (drop_typed_ahead), not queued: the arm stops when the person stops typing.
    """

    def __enter__(self):
        import termios
        import tty
        self._fd = sys.stdin.fileno()
        self._saved = termios.tcgetattr(self._fd)
        self._kept = []
        tty.setcbreak(self._fd)
        return self

    def __exit__(self, *exc):
        import termios
        termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)

    def _byte(self):
        return os.read(self._fd, 1).decode("latin-1")

    def read(self, task):
        if self._kept:
            return self._kept.pop(0)
        key = self._byte()
        if key == "\x1b":  # an arrow key: ESC [ A..D; left/right step 10 us, down/up 1 us
            return ARROWS.get(self._byte() + self._byte(), "?")
        return key

    def drop_typed_ahead(self):
        """Forget the jog keys typed so far; keep the others (Enter, quit, undo) in order."""
        import select
        waiting = b""
        while select.select([self._fd], [], [], 0)[0]:
            chunk = os.read(self._fd, 256)
            if not chunk:
                break
            waiting += chunk
        text = waiting.decode("latin-1")
        i = 0
        while i < len(text):
            if text[i] == "\x1b":
                i += 3
                continue
            if text[i] not in JOG_KEYS:
                self._kept.append(text[i])
            i += 1


def confirm_on_terminal(question, out=sys.stdout):
    """Ask question; Enter (True) or q (False, as every quit key) from this terminal's
    keyboard, other keys ignored. Asked once single keys are read: keys typed before
    the question (a stray Enter) are dropped, not taken for the answer."""
    with TerminalKeys() as keys:
        print(question, file=out, flush=True)
        while True:
            key = keys.read(None)
            if key in RECORD_KEYS:
                return True
            if key in QUIT_KEYS:
                return False
