# SPDX-License-Identifier: MIT
"""What the page draws, from the firmware's own kinematics (armfw), never a second model.

Every point is in the arm's base frame in mm, as [x, y, z] with z up. The
planar arm works in its vertical plane, y up (firmware/PROTOCOL.md): its
(x, y) is drawn as (x, 0, y).
"""

import math

from armfw.numeric import DEG
from armfw.servo import REFUSED
from armfw.status import NAMES as STATUS_NAMES

# Grid of the side-view workspace map the page paints under the arm (cells per side).
WORKSPACE_CELLS = 121


def _direction(yaw, angle):
    """Unit vector of a link at angle (rad, from vertical) in the vertical plane the base faces."""
    s = math.sin(angle)
    return (s * math.cos(yaw), s * math.sin(yaw), math.cos(angle))


def link_points(solver, q):
    """Joint origins and tool tip of pose q (radians) as [[x, y, z], ...] mm, base first.

    The tip is the firmware's forward kinematics (solver.fk); the joints
    behind it are found by walking back along each link from there, so the
    drawn tip is exactly where the board's FK puts it.
    """
    if solver.kind == "planar":
        tip = solver.fk(q, [0.0, 0.0])
        a = q[0] + q[1]
        elbow = (tip[0] - solver.l2 * math.cos(a), tip[1] - solver.l2 * math.sin(a))
        return [[0.0, 0.0, 0.0], [elbow[0], 0.0, elbow[1]], [tip[0], 0.0, tip[1]]]
    tip = solver.fk(q, [0.0, 0.0, 0.0, 0.0])
    yaw = q[0]
    a4 = tip[3]                 # the tool's angle from vertical
    a3 = a4 - q[3]              # the forearm's
    a2 = a3 - q[2]              # the upper arm's
    points = [[tip[0], tip[1], tip[2]]]
    for length, angle in ((solver.l3, a4), (solver.l2, a3), (solver.l1, a2)):
        d = _direction(yaw, angle)
        p = points[0]
        points.insert(0, [p[0] - length * d[0], p[1] - length * d[1], p[2] - length * d[2]])
    points.insert(0, [0.0, 0.0, 0.0])
    return points


def pulses(board, q):
    """Servo pulses (us) of pose q (radians) by the firmware's servo map; None where refused."""
    servos = board.servos
    out = [servos.pulse(i, q[i]) for i in range(servos.n)]
    return [None if us == REFUSED else us for us in out]


def describe(board):
    """The board as the page needs it: arm kind and lengths, joints with limits, home, gripper, speeds."""
    solver = board.solver
    joints = []
    for i, name in enumerate(solver.names):
        joints.append({"name": name, "min_deg": solver.lo[i] / DEG, "max_deg": solver.hi[i] / DEG,
                       "home_deg": solver.home[i] / DEG, "channel": board.servos.channels[i]})
    arm = {"kind": solver.kind, "l1_mm": solver.l1, "l2_mm": solver.l2}
    if solver.kind == "arm5":
        arm.update(l3_mm=solver.l3, base_mm=solver.base, reach_mm=solver.l1 + solver.l2 + solver.l3)
    else:
        arm.update(reach_mm=solver.l1 + solver.l2)
    return {
        "name": board.name,
        "title": board.title,
        "arm": arm,
        "targets": list(solver.targets),
        "joints": joints,
        "home_points": link_points(solver, solver.home),
        "gripper": board.gripper is not None,
        "max_speed_deg_s": board.motion["max_speed_deg_s"],
        "line_step_mm": board.motion["line_step_mm"],
        "statuses": list(STATUS_NAMES),
    }


def workspace(board, pitch_deg=90.0, cells=WORKSPACE_CELLS):
    """The side view's workspace map: IK status codes over a grid (the numpy twin of armfw's solver).

    Arm5: the vertical plane the base faces, r (negative behind the base) by
    z, for tool pitch pitch_deg. Planar: its (x, y) plane. Returns extents in
    mm and rows of status codes (armfw.status), first row at the lowest edge.
    """
    from armctl.plot import workspace_grid    # matplotlib loads only when a map is asked for

    (x0, x1), (y0, y1), status = workspace_grid(board, pitch_rad=pitch_deg * DEG, grid=cells)
    return {"x": [float(x0), float(x1)], "y": [float(y0), float(y1)], "pitch_deg": pitch_deg,
            "rows": [[int(v) for v in row] for row in status]}
