# SPDX-License-Identifier: MIT
"""What the page draws, from the firmware's own kinematics (armfw), never a second model.

Every point is in the arm's base frame in mm, as [x, y, z] with z up. The
planar arm works in its vertical plane, y up (firmware/PROTOCOL.md): its
(x, y) is drawn as (x, 0, y).
"""

from armfw.numeric import DEG
from armfw.servo import REFUSED
from armfw.status import NAMES as STATUS_NAMES
from armfw.zones import BOX, CYLINDER, FLOOR

# Grid of the side-view workspace map the page paints under the arm (cells per side).
WORKSPACE_CELLS = 121


def link_points(solver, q):
    """Joint origins and tool tip of pose q (radians) as [[x, y, z], ...] mm, base first.

    They are the firmware's own joint points (Solver.joint_points: what its
    zone check tests, whose tip is its forward kinematics).
    """
    flat = solver.joint_points(q)
    points = [[flat[i], flat[i + 1], flat[i + 2]] for i in range(0, len(flat), 3)]
    if solver.kind == "arm5":
        points.insert(0, [0.0, 0.0, 0.0])     # the base plate under the shoulder axis
    return points


def _zone(kind, params):
    """One zone as the page draws it: mm in the base frame (planar: its plane as x, z)."""
    if kind == FLOOR:
        return {"kind": "floor", "height_mm": params[0], "clearance_mm": params[1]}
    if kind == CYLINDER:
        return {"kind": "cylinder", "centre": params[0:2], "radius_mm": params[2], "bottom_mm": params[3],
                "top_mm": params[4]}
    return {"kind": "box" if kind == BOX else "tool_box", "min": params[0:3], "max": params[3:6]}


def zones(solver):
    """The board's floor and zones (armfw.zones) for the page: [{"name", "kind", ...}]."""
    z = solver.zones
    if z is None:
        return []
    return [dict(_zone(z.zone_kinds[i], z.params[i]), name=z.zone_names[i]) for i in range(z.n_zones)]


def _distance(a, b):
    return sum((u - v) ** 2 for u, v in zip(a, b)) ** 0.5


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
    home = link_points(solver, solver.home)
    # shoulder: where the reach is measured from; column: the first segment is the base's own.
    arm = {"kind": solver.kind, "inner_mm": 0.0, "column": False}
    if solver.kind == "arm5":
        arm.update(shoulder=home[1], reach_mm=solver.l1 + solver.l2 + solver.l3, column=True)
    elif solver.kind == "planar":
        arm.update(shoulder=home[0], reach_mm=solver.l1 + solver.l2, inner_mm=abs(solver.l1 - solver.l2))
    else:
        arm.update(shoulder=home[0], reach_mm=sum(_distance(a, b) for a, b in zip(home, home[1:])))
    return {
        "name": board.name,
        "title": board.title,
        "arm": arm,
        "targets": list(solver.targets),
        "joints": joints,
        "home_points": home,
        "zones": zones(solver),
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
    if board.solver.kind not in ("arm5", "planar"):
        return None           # the numpy twin solves these two kinds only
    from armctl.plot import workspace_grid    # matplotlib loads only when a map is asked for

    (x0, x1), (y0, y1), status = workspace_grid(board, pitch_rad=pitch_deg * DEG, grid=cells)
    return {"x": [float(x0), float(x1)], "y": [float(y0), float(y1)], "pitch_deg": pitch_deg,
            "rows": [[int(v) for v in row] for row in status]}
