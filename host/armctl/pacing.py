# SPDX-License-Identifier: MIT
"""How long a motion request may keep a silent board busy: the extra wait for its reply.

The firmware says nothing while the arm moves, so a long motion must not look
like a dead link. The allowance is an upper bound from the path length and
the speed in force, both asked from the board itself (`where`, `speed`,
`info`, and `ik` for a move), so it follows a changed speed. Firmware that
reports progress while moving needs none of it: every line received restarts
the link's silence timeout anyway.
"""

import math

from armfw.commands import moving

# The firmware's own list (armfw.commands): every request that may move the arm.
MOTION_COMMANDS = moving()
# Joint moves whose target the host does not know (home, servo, the first
# leg of pick/place): no joint turns further than this.
FULL_TURN_DEG = 360.0
# Straight lines halve their steps near the workspace edge: this much slack.
LINE_SLACK = 4.0
# pick/place: the two vertical legs together are shorter than this, and each
# gripper action waits for the jaws.
PICK_LEGS_MM = 400.0
# An arm5 line turns the pitch along the tool: it counts as this many mm per radian.
TOOL_MM = 300.0
GRIPPER_S = 0.5
MARGIN_S = 1.0


def is_motion(request):
    """True for a request that moves the arm (its reply waits for the motion)."""
    words = request.split()
    return bool(words) and words[0].lower() in MOTION_COMMANDS


class Pacer:
    """Motion allowances (seconds) for requests sent over link."""

    def __init__(self, link):
        self.link = link
        self._info = None
        self._speed = None

    def _ask(self, request):
        reply = self.link.request(request)
        if not reply.ok:
            raise ValueError(reply.final)
        return reply

    def allowance(self, request):
        """Seconds request's motion may take (0 for requests that do not move the arm)."""
        words = request.split()
        command = words[0].lower() if words else ""
        if command == "speed":
            self._speed = None
        if command not in MOTION_COMMANDS:
            return 0.0
        try:
            return MARGIN_S + self._estimate(command, words[1:])
        except (ValueError, IndexError, KeyError, TypeError, ZeroDivisionError):
            # The board will refuse the request (or cannot say where it is): it answers at once.
            return MARGIN_S

    def _estimate(self, command, args):
        if self._info is None:
            self._info = self._ask("info").fields
        if self._speed is None:
            self._speed = self._ask("speed").values[0]
        speed = self._speed
        turn_s = FULL_TURN_DEG / speed
        line_mm_s = float(self._info.get("line_step_mm", 1.0)) / (float(self._info["step_ms"]) / 1000.0)
        if command in ("relax", "unlock"):
            return 0.0
        if command == "wait":
            return float(args[0]) / 1000.0
        if command == "grip":
            return GRIPPER_S
        if command in ("home", "servo", "pose") or (command == "jog" and args[0][:1] in ("j", "J")):
            return turn_s
        if command == "path":
            # A run passes every waypoint held, none further than a full turn from the last.
            return turn_s * self._ask("path").values[0] if args[:1] == ["run"] else 0.0
        if command in ("pick", "place"):
            return turn_s + LINE_SLACK * PICK_LEGS_MM / line_mm_s + 2 * GRIPPER_S
        if command == "jog":
            # A line by so much; an arm5 pitch turn (the fourth word) is a joint motion.
            d = [float(v) for v in args]
            length = math.hypot(*d[:3]) + (TOOL_MM * math.radians(abs(d[3])) if len(d) > 3 else 0.0)
            return LINE_SLACK * length / line_mm_s
        here = self._ask("where")
        joints = len(str(self._info["joints"]).split(","))
        q = here.values[:joints]
        if command == "joints":
            target = [float(v) for v in args]
            return max(abs(a - b) for a, b in zip(target, q)) / speed
        if command == "move":
            solved = self._ask("ik " + " ".join(args)).values[:joints]
            return max(abs(a - b) for a, b in zip(solved, q)) / speed
        # line: the tool's path from where it is; the pitch turn (arm5) is a joint motion.
        target = [float(v) for v in args]
        start = [here.fields[k] for k in ("x", "y", "z")[:min(3, len(target))]]
        length = math.dist(start, target[:len(start)])
        if len(target) == 4:
            length += TOOL_MM * math.radians(abs(target[3] - here.fields["pitch"]))
        return LINE_SLACK * length / line_mm_s
