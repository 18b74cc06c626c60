# SPDX-License-Identifier: MIT
"""A straight tool line checked before anything moves, by the firmware's own motion planner.

The host runs armfw.motion.ArmController (the code the board runs) from the
pose the board reported, with a driver that only records: the same steps,
the same refusals (status, step, tool point) the board would answer to
`line`, and the tool point of every step for the page to draw.
"""

from armfw.motion import ArmController, OP_NAMES
from armfw.numeric import DEG

# Tool points sent to the page per preview (a long line is thinned evenly).
MAX_POINTS = 200


class _SilentDriver:
    """Stands in for the servo driver: takes pulses, sends none."""

    def set_us(self, channel, us):
        pass


def _tool_pose_deg(target):
    """Tool coordinates as the protocol speaks them: mm, arm5 pitch in degrees."""
    out = list(target)
    if len(out) == 4:
        out[3] = out[3] / DEG
    return out


def line(board, q_rad, target, speed_deg_s):
    """Check the straight line from pose q_rad (radians) to target (mm; arm5 pitch in degrees).

    Returns {"ok", "steps", "points": tool points of the steps (mm, pitch
    deg), "start"} and when refused also "status", "reason", "operation",
    "step" (1 = first) and "at" (the failing step's tool target).
    """
    path = []
    controller = None

    def record_step(ms):
        path.append(controller.tool())

    controller = ArmController(board, _SilentDriver(), sleep_ms=record_step)
    controller.output.send_pose(list(q_rad))     # the pose the board reported; the recorder takes the pulses
    if not controller.set_speed_deg_s(speed_deg_s):
        controller.set_speed_deg_s(board.motion["max_speed_deg_s"])
    start = _tool_pose_deg(controller.tool())
    goal = list(target)
    if len(goal) == 4:
        goal[3] *= DEG
    ok = controller.line(goal)
    result = {"ok": ok, "start": start, "steps": len(path)}
    if ok:
        stride = max(1, len(path) // MAX_POINTS)
        points = path[::stride]
        if path and points[-1] is not path[-1]:
            points.append(path[-1])
        result["points"] = [_tool_pose_deg(p) for p in points]
    else:
        result.update(
            points=[],
            status=controller.refusal.status,
            reason=controller.refusal.reason,
            operation=OP_NAMES[controller.refusal.kind],
            step=controller.refusal.step,
            at=_tool_pose_deg(controller.refusal.point))
    return result
