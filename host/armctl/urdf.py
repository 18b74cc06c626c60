# SPDX-License-Identifier: MIT
"""A board file from a URDF: `armctl board import ARM.urdf --output BOARD.json`.

The URDF is read by yourdfpy (a maintained parser that follows the URDF spec:
origins, rpy order, axis defaults, limits, mimic tags), not by a hand-written
XML walk. Only the kinematic chain is used; meshes are never loaded.

What it takes, from the root link to the tip link (the only leaf, or --tip):
- revolute joints: their origin (xyz, rpy), axis and limits, as one joint each;
- continuous joints: the same, with the servo's range as limits;
- fixed joints: folded into the next joint's origin (or into the tool after
  the last joint);
- anything a hobby servo cannot drive (prismatic, floating, planar, mimic) is
  refused with a message naming the joint.

A joint limit wider than the servo's range is narrowed to it (and reported).
Where the chain is exactly the two-link planar arm or the 5-joint teaching arm
(FK of the candidate closed-form arm equals the chain's FK on random poses),
the board gets that analytic kind and its fast solver on the board; otherwise
"chain" (FK on the board, IK on the host: armctl move).

Servo defaults a person edits afterwards (docs: README, "Your own arm"):
channels 0, 1, 2, ... in chain order, a 270-degree servo per joint
(1500 us at the joint's zero, 424.448 us/rad, window 500..2500 us, sign +1,
offset 0), home at zero (or the limit nearest to it), the simulated driver.

Table and base: a chain arm gets a floor in its workspace, the plane z = 0
of the URDF's root frame (where a robot description puts the surface the
base stands on) with FLOOR_CLEARANCE_MM, so the board refuses a pose or a
path that would put a link into the table (the analytic kinds have their own
default workspace). Where the home pose already reaches below that plane
the root frame is not the table: no floor, and a note says so. With the
floor comes the base: the root link runs from the table up to the first
joint, so where that joint turns about a vertical axis above the table, a
keep-out cylinder of BASE_RADIUS_MM (armfw.workspace's default for the arm5's
column: meshes are never loaded) stands on the floor around that axis, up
to the first joint's origin, for every link from the third on (the first
turns on top of it, the second is the upper arm hinged to it, as on the
arm5). --no-floor leaves both out.
"""

import math

import numpy as np

from armctl import chain as chain_mod
from armfw.workspace import BASE_RADIUS_MM

SERVO = {"center_us": 1500, "us_per_rad": 424.448, "min_us": 500, "max_us": 2500}
SERVO_RANGE_DEG = 135.0       # what the default window reaches either side of centre
DRIVEN = ("revolute", "continuous")
# FK of the candidate analytic arm must match the chain this closely (mm, unit vector).
MATCH_MM = 1e-6
MATCH_POSES = 2000
FLOOR_CLEARANCE_MM = 5.0


class UrdfError(ValueError):
    """The URDF cannot become a board file; the message says why."""


def _rpy_of(r):
    """Fixed-axis roll, pitch, yaw (radians) of a rotation matrix, R = Rz Ry Rx."""
    # Near pitch +-90 degrees r00, r10, r21, r22 are tiny but, being products
    # of sines and cosines, keep their relative precision: the usual formulas
    # stay exact there (AL5D's shoulder sits 1.8e-9 rad from it). Only exactly
    # at +-90 degrees is roll -+ yaw all that is defined; it all goes in roll.
    cos_pitch = math.hypot(r[0, 0], r[1, 0])
    pitch = math.atan2(-r[2, 0], cos_pitch)
    if cos_pitch < 1e-15:
        yaw = 0.0
        roll = math.atan2(-r[1, 2], r[1, 1])
    else:
        yaw = math.atan2(r[1, 0], r[0, 0])
        roll = math.atan2(r[2, 1], r[2, 2])
    return roll, pitch, yaw


def _origin_fields(t):
    """xyz_mm and rpy_deg of a 4x4 transform (metres in, mm out)."""
    roll, pitch, yaw = _rpy_of(t[:3, :3])
    xyz = [float(v) * 1000.0 for v in t[:3, 3]]
    return [_clean(v) for v in xyz], [_clean(math.degrees(a)) for a in (roll, pitch, yaw)]


def _clean(v):
    """-0.0 and float dust below 1e-12 written as 0 (files stay readable; FK unchanged)."""
    return 0.0 if abs(v) < 1e-12 else float(v)


def load(path):
    """The yourdfpy model of a URDF file (kinematics only)."""
    import yourdfpy
    try:
        return yourdfpy.URDF.load(str(path), load_meshes=False, build_scene_graph=False,
                                  load_collision_meshes=False, build_collision_scene_graph=False)
    except Exception as e:     # lxml and yourdfpy raise many kinds; all mean "not a usable URDF"
        raise UrdfError("%s: cannot read the URDF: %s" % (path, e))


def serial_chain(model, tip=None):
    """The joints of model (yourdfpy.URDF) from the root link to tip (a link name; default the only leaf)."""
    robot = model.robot
    children = {}
    parents = set()
    for j in robot.joints:
        children.setdefault(j.parent, []).append(j)
        parents.add(j.child)
    roots = [link.name for link in robot.links if link.name not in parents]
    if len(roots) != 1:
        raise UrdfError("the URDF has %d root links (%s); one is needed" % (len(roots), ", ".join(roots)))
    by_child = {j.child: j for j in robot.joints}
    if tip is None:
        leaves = [link.name for link in robot.links if link.name not in children]
        if len(leaves) != 1:
            raise UrdfError("the URDF branches into %d tip links (%s): choose one with --tip"
                               % (len(leaves), ", ".join(sorted(leaves))))
        tip = leaves[0]
    if tip not in by_child and tip != roots[0]:
        raise UrdfError("no link named %r" % tip)
    path = []
    link = tip
    while link != roots[0]:
        j = by_child[link]
        path.append(j)
        link = j.parent
    return list(reversed(path))


def chain_description(model, tip=None, servo_range_deg=SERVO_RANGE_DEG):
    """(joints, tool, notes): the board's chain joints (no servo fields yet), tool transform, notes."""
    joints = []
    notes = []
    pending = np.eye(4)
    for j in serial_chain(model, tip):
        if j.mimic is not None:
            raise UrdfError("joint %s mimics %s: one servo per joint cannot follow another's angle"
                               % (j.name, j.mimic.joint))
        origin = np.eye(4) if j.origin is None else np.asarray(j.origin, dtype=float)
        if j.type == "fixed":
            pending = pending @ origin
            continue
        if j.type not in DRIVEN:
            raise UrdfError("joint %s is %s: a hobby servo drives revolute and continuous joints only"
                               % (j.name, j.type))
        xyz, rpy = _origin_fields(pending @ origin)
        pending = np.eye(4)
        axis = [1.0, 0.0, 0.0] if j.axis is None else [_clean(float(v)) for v in j.axis]
        if j.type == "continuous" or j.limit is None or j.limit.lower is None or j.limit.upper is None:
            lo, hi = -servo_range_deg, servo_range_deg
            notes.append("%s: continuous, given the servo's range %g..%g deg" % (j.name, lo, hi))
        else:
            lo, hi = math.degrees(j.limit.lower), math.degrees(j.limit.upper)
            if lo < -servo_range_deg or hi > servo_range_deg:
                notes.append("%s: limits %.3f..%.3f deg narrowed to the servo's range" % (j.name, lo, hi))
                lo, hi = max(lo, -servo_range_deg), min(hi, servo_range_deg)
            if lo >= hi:
                raise UrdfError("joint %s: no angle inside both its limits and the servo's range" % j.name)
        home = min(max(0.0, lo), hi)
        joints.append({"name": j.name, "xyz_mm": xyz, "rpy_deg": rpy, "axis": axis,
                       "min_deg": lo, "max_deg": hi, "home_deg": home})
    if not joints:
        raise UrdfError("no revolute or continuous joint between the root and the tip")
    txyz, trpy = _origin_fields(pending)
    return joints, {"xyz_mm": txyz, "rpy_deg": trpy}, notes


def _with_servos(joints):
    out = []
    for i, j in enumerate(joints):
        entry = {"name": j["name"], "channel": i, "offset_deg": 0, "sign": 1}
        entry.update({k: j[k] for k in ("min_deg", "max_deg", "home_deg")})
        entry.update(SERVO)
        for k in ("xyz_mm", "rpy_deg", "axis"):
            if k in j:
                entry[k] = j[k]
        out.append(entry)
    return out


def _analytic_candidate(c):
    """The planar or arm5 arm section whose FK might equal chain c, or None."""
    joints, end = c.frames(c.home)
    origins = joints[:, :3, 3]
    tip = end[:3, 3]
    if c.n == 2:
        return {"kind": "planar", "l1_mm": float(np.linalg.norm(origins[1] - origins[0])),
                "l2_mm": float(np.linalg.norm(tip - origins[1]))}
    if c.n == 5:
        return {"kind": "arm5", "l1_mm": float(np.linalg.norm(origins[2] - origins[1])),
                "l2_mm": float(np.linalg.norm(origins[3] - origins[2])),
                "l3_mm": float(np.linalg.norm(tip - origins[3])), "base_mm": float(origins[1][2])}
    return None


def _same_fk(chain_a, chain_b, rng):
    q = chain_a.random_poses(MATCH_POSES, rng)
    pa, pb = chain_a.fk(q), chain_b.fk(q)
    if chain_a.kind == "planar" or chain_b.kind == "planar":
        # The planar arm works in the z = 0 plane.
        return bool(np.max(np.abs(pa - pb)) < MATCH_MM)
    da, db = chain_a.tool_direction(q), chain_b.tool_direction(q)
    return bool(np.max(np.abs(pa - pb)) < MATCH_MM and np.max(np.abs(da - db)) < MATCH_MM)


def board_dict(model, name, title=None, tip=None, seed=0, floor=True):
    """(board description dict, notes) for a URDF model (yourdfpy.URDF); floor: a chain
    arm's workspace gets the table at z = 0 (see the module's docstring)."""
    from armfw import board as fw_board
    joints, tool, notes = chain_description(model, tip)
    head = {"name": name, "title": title or "%s (imported from its URDF)" % model.robot.name,
            "mcu": "unix", "driver": {"kind": "sim", "freq_hz": 50}}
    chain_board = dict(head, arm={"kind": "chain", "tool": tool, "tool_axis": [0.0, 0.0, 1.0]},
                       joints=_with_servos(joints))
    c = chain_mod.from_board(fw_board.from_dict(chain_board, name))
    arm = _analytic_candidate(c)
    if arm is not None:
        plain = [{k: v for k, v in j.items() if k not in ("xyz_mm", "rpy_deg", "axis")} for j in joints]
        analytic_board = dict(head, arm=arm, joints=_with_servos(plain))
        try:
            candidate = chain_mod.from_board(fw_board.from_dict(analytic_board, name))
        except fw_board.BoardError:
            candidate = None
        if candidate is not None and _same_fk(c, candidate, np.random.default_rng(seed)):
            notes.append("exactly the %s arm: analytic kind" % arm["kind"])
            return analytic_board, notes
    notes.append("a serial chain of %d joints: kind chain (IK on the host)" % c.n)
    if floor:
        workspace = {"floor": {"height_mm": 0.0, "clearance_mm": FLOOR_CLEARANCE_MM}}
        with_floor = dict(chain_board, workspace=workspace)
        try:
            fw_board.from_dict(with_floor, name)
        except fw_board.BoardError as e:
            notes.append("no floor: the home pose already reaches below z = 0 of the root frame (%s)" % e)
        else:
            notes.append("floor at z = 0 of the root frame, links %g mm clear of it (--no-floor: none)"
                         % FLOOR_CLEARANCE_MM)
            column = _base_column(c, 0.0)
            if column is not None:
                workspace["zones"] = [column]
                try:
                    fw_board.from_dict(with_floor, name)
                except fw_board.BoardError as e:
                    del workspace["zones"]
                    notes.append("no base column: %s" % e)
                else:
                    notes.append("base column: radius %g mm about the first joint's axis, up to its origin "
                                 "%g mm above the floor" % (column["radius_mm"], column["top_mm"]))
            return with_floor, notes
    return chain_board, notes


def _base_column(c, floor_mm):
    """The keep-out cylinder of the root link (see the module doc) for chain c, or None where
    its first joint does not turn about a vertical axis above the floor (or it has < 3 links)."""
    joints, _ = c.frames(c.home)
    origin = joints[0, :3, 3]
    axis = joints[0, :3, :3] @ c.axes[0]
    if c.n < 3 or abs(abs(float(axis[2])) - 1.0) > 1e-9 or not origin[2] > floor_mm:
        return None
    return {"name": "base", "kind": "cylinder", "x_mm": _clean(float(origin[0])), "y_mm": _clean(float(origin[1])),
            "radius_mm": BASE_RADIUS_MM, "bottom_mm": floor_mm, "top_mm": _clean(float(origin[2])),
            "links": ["link%d" % (i + 1) for i in range(2, c.n)]}


def import_file(path, name=None, tip=None, floor=True):
    """(board dict, notes) for the URDF at path; the loader's checks have passed."""
    model = load(path)
    if name is None:
        name = "".join(ch if ch.isalnum() else "_" for ch in model.robot.name.lower()) or "arm"
    return board_dict(model, name, tip=tip, floor=floor)
