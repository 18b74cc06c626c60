# SPDX-License-Identifier: MIT
"""`armctl board import`: board files from URDFs, judged by Robotics Toolbox's own model of each file.

The main case is a URDF nobody here wrote: the Lynxmotion AL5D from rtb-data.
Robotics Toolbox for Python reads the same file with its own parser and FK
(rtb.models.URDF.AL5D, rtb.Robot.URDF); the imported board's FK (the
firmware's chain, and its numpy twin) must agree with it on 10,000 random
in-limit poses. Small hand-written URDFs cover what the importer folds,
narrows, refuses and recognises as an analytic arm.
"""

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from armctl import chain as chain_mod
from armctl import cli, urdf
from armfw import board
from conftest import BOARDS

import roboticstoolbox as rtb  # noqa: E402  (test dependencies, pyproject extra "test")
import rtbdata  # noqa: E402

AL5D_URDF = Path(rtbdata.__file__).parent / "xacro/lynxmotion_al5d_description/urdf/al5d_robot.urdf"
POSES = 10000


def _import(path, tmp_path, *extra):
    out = tmp_path / "board.json"
    assert cli.main(["board", "import", str(path), "--output", str(out)] + list(extra)) == 0
    return json.loads(out.read_text()), board.load(str(out))


def _rtb_tips(robot, q):
    return np.array([robot.fkine(row).t for row in q]) * 1000.0


def test_al5d_import_agrees_with_robotics_toolbox_on_10000_poses(tmp_path, report):
    data, b = _import(AL5D_URDF, tmp_path, "--name", "al5d")
    assert data["arm"]["kind"] == "chain" and b.solver.n == 4
    robot = rtb.models.URDF.AL5D()
    c = chain_mod.from_board(b)
    q = c.random_poses(POSES, np.random.default_rng(2026))
    assert np.all(q >= robot.qlim[0] - 1e-12) and np.all(q <= robot.qlim[1] + 1e-12)
    theirs = _rtb_tips(robot, q)
    twin = float(np.max(np.linalg.norm(c.fk(q) - theirs, axis=1)))
    tip = [0.0] * 3
    firmware = max(float(np.linalg.norm(np.array(b.solver.fk(list(row), tip)) - t)) for row, t in zip(q, theirs))
    report("URDF import (AL5D, %d random in-limit poses) vs Robotics Toolbox: firmware chain FK %.1e mm, "
           "numpy twin %.1e mm" % (POSES, firmware, twin))
    assert firmware < 1e-6 and twin < 1e-6
    # Limits and names are the URDF's (+-1.570796325 rad).
    assert [j["name"] for j in data["joints"]] == ["j1", "j2", "j3", "j4"]
    assert all(j["min_deg"] == pytest.approx(-math.degrees(1.570796325), abs=1e-9) for j in data["joints"])


def test_shipped_al5d_board_is_the_import_of_the_rtb_data_urdf(tmp_path):
    data, _ = _import(AL5D_URDF, tmp_path, "--name", "sim_al5d")
    shipped = json.loads((BOARDS / "sim_al5d.json").read_text())
    for key in ("name", "mcu", "driver", "arm", "joints", "workspace"):
        assert shipped[key] == data[key], key


LINK = '<link name="%s"/>'


def _urdf(tmp_path, joints, name="arm"):
    """A URDF file from (name, type, parent, child, xyz, rpy, axis, limits or None) tuples."""
    links = set()
    body = []
    for jname, jtype, parent, child, xyz, rpy, axis, limits in joints:
        links.update((parent, child))
        text = '<joint name="%s" type="%s"><parent link="%s"/><child link="%s"/>' % (jname, jtype, parent, child)
        text += '<origin xyz="%s" rpy="%s"/>' % (xyz, rpy)
        if axis:
            text += '<axis xyz="%s"/>' % axis
        if limits:
            text += '<limit lower="%s" upper="%s" effort="1" velocity="1"/>' % limits
        body.append(text + "</joint>")
    path = tmp_path / (name + ".urdf")
    path.write_text('<?xml version="1.0"?><robot name="%s">%s%s</robot>'
                    % (name, "".join(LINK % l for l in sorted(links)), "".join(body)))
    return path


def _rotation(rpy):
    r, p, y = rpy
    rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def _hand_fk(joints, q):
    """The URDF rules written out: origin (xyz m, R = Rz Ry Rx), then a turn about the unit axis."""
    t = np.eye(4)
    k = 0
    for _, jtype, _, _, xyz, rpy, axis, _ in joints:
        origin = np.eye(4)
        origin[:3, :3] = _rotation([float(v) for v in rpy.split()])
        origin[:3, 3] = [float(v) for v in xyz.split()]
        t = t @ origin
        if jtype != "fixed":
            a = np.array([float(v) for v in axis.split()])
            a /= np.linalg.norm(a)
            cross = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
            turn = np.eye(4)
            turn[:3, :3] = np.eye(3) + math.sin(q[k]) * cross + (1 - math.cos(q[k])) * cross @ cross
            t = t @ turn
            k += 1
    return t[:3, 3] * 1000.0


def _agrees_with_rtb(path, b, count=500):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)     # rtb 1.x: Robot.URDF still does the job
        robot = rtb.Robot.URDF(str(path))
    c = chain_mod.from_board(b)
    q = c.random_poses(count, np.random.default_rng(5))
    return float(np.max(np.linalg.norm(c.fk(q) - _rtb_tips(robot, q), axis=1)))


def test_fixed_joints_fold_and_continuous_joints_get_the_servo_range(tmp_path, capsys):
    joints = [
        ("mount", "fixed", "world", "base", "0 0 0.05", "0 0 0.3", None, None),
        ("yaw", "continuous", "base", "l1", "0 0 0.02", "0 0 0", "0 0 1", None),
        ("bracket", "fixed", "l1", "l1b", "0.01 0.003 0.04", "0.2 -0.1 0.05", None, None),
        ("shoulder", "revolute", "l1b", "l2", "0 0 0.01", "1.5707963 0 0", "0 0 -1", ("-3", "3")),
        ("elbow", "revolute", "l2", "l3", "0.12 0 0", "0 0 0", "0 0.6 0.8", ("-1", "1.2")),
        ("tool", "fixed", "l3", "tip", "0.09 0.01 0", "0 0.4 0", None, None),
    ]
    path = _urdf(tmp_path, joints, "folded")
    data, b = _import(path, tmp_path)
    notes = capsys.readouterr().err
    assert [j["name"] for j in data["joints"]] == ["yaw", "shoulder", "elbow"]
    assert "yaw: continuous, given the servo's range -135..135 deg" in notes
    assert "shoulder: limits -171.887..171.887 deg narrowed to the servo's range" in notes
    assert (data["joints"][0]["min_deg"], data["joints"][0]["max_deg"]) == (-135.0, 135.0)
    assert (data["joints"][1]["min_deg"], data["joints"][1]["max_deg"]) == (-135.0, 135.0)
    assert data["joints"][2]["max_deg"] == pytest.approx(math.degrees(1.2))
    assert data["arm"]["kind"] == "chain"
    # Judged by the URDF rules written out here: Robotics Toolbox's reader turns
    # a link's frame to put a slanted joint axis on z, which moves the tool
    # fixed in that link (the elbow's 0 0.6 0.8 axis), so it is no judge here.
    c = chain_mod.from_board(b)
    q = c.random_poses(300, np.random.default_rng(9))
    assert max(float(np.linalg.norm(c.fk(row) - _hand_fk(joints, row))) for row in q) < 1e-6


@pytest.mark.parametrize("jtype", ["prismatic", "floating", "planar"])
def test_joints_a_servo_cannot_drive_are_refused(tmp_path, capsys, jtype):
    path = _urdf(tmp_path, [
        ("yaw", "revolute", "base", "l1", "0 0 0", "0 0 0", "0 0 1", ("-1", "1")),
        ("slide", jtype, "l1", "l2", "0 0 0.1", "0 0 0", "1 0 0", ("0", "0.1")),
    ])
    assert cli.main(["board", "import", str(path), "--output", str(tmp_path / "b.json")]) == cli.EXIT_USAGE
    assert "joint slide is %s: a hobby servo drives revolute and continuous joints only" % jtype \
        in capsys.readouterr().err
    assert not (tmp_path / "b.json").exists()


def test_a_branching_urdf_needs_a_tip(tmp_path, capsys):
    path = _urdf(tmp_path, [
        ("yaw", "revolute", "base", "l1", "0 0 0", "0 0 0", "0 0 1", ("-1", "1")),
        ("left", "revolute", "l1", "fl", "0 0.01 0.1", "0 0 0", "1 0 0", ("0", "0.5")),
        ("right", "revolute", "l1", "fr", "0 -0.01 0.1", "0 0 0", "1 0 0", ("-0.5", "0")),
    ])
    out = tmp_path / "b.json"
    assert cli.main(["board", "import", str(path), "--output", str(out)]) == cli.EXIT_USAGE
    assert "branches into 2 tip links (fl, fr): choose one with --tip" in capsys.readouterr().err
    data, _ = _import(path, tmp_path, "--tip", "fr")
    assert [j["name"] for j in data["joints"]] == ["yaw", "right"]


def test_mimic_joints_are_refused(tmp_path, capsys):
    path = _urdf(tmp_path, [("yaw", "revolute", "base", "l1", "0 0 0", "0 0 0", "0 0 1", ("-1", "1"))])
    text = path.read_text().replace(
        "</robot>", '<link name="l2"/><joint name="twin" type="revolute"><parent link="l1"/><child link="l2"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/><mimic joint="yaw"/>'
        '</joint></robot>')
    path.write_text(text)
    assert cli.main(["board", "import", str(path), "--output", str(tmp_path / "b.json")]) == cli.EXIT_USAGE
    assert "joint twin mimics yaw" in capsys.readouterr().err


def _two_link(tmp_path, elbow_z_m, name):
    """A two-link arm about z (100 mm, 80 mm), its elbow elbow_z_m above the shoulder's plane."""
    return _urdf(tmp_path, [
        ("shoulder", "revolute", "base", "a", "0 0 0", "0 0 0", "0 0 1", ("-2", "2")),
        ("elbow", "revolute", "a", "b", "0.1 0 %r" % elbow_z_m, "0 0 0", "0 0 1", ("-2", "2")),
        ("tool", "fixed", "b", "tip", "0.08 0 0", "0 0 0", None, None),
    ], name)


def test_a_two_link_planar_urdf_becomes_the_planar_kind(tmp_path):
    path = _two_link(tmp_path, 0.0, "planar")
    data, b = _import(path, tmp_path)
    assert data["arm"] == {"kind": "planar", "l1_mm": pytest.approx(100.0), "l2_mm": pytest.approx(80.0)}
    assert "xyz_mm" not in data["joints"][0]
    assert _agrees_with_rtb(path, b) < 1e-6
    # An elbow 1 mm above the plane is no longer the planar arm: a chain.
    shifted = _two_link(tmp_path, 0.001, "shifted")
    data, b = _import(shifted, tmp_path)
    assert data["arm"]["kind"] == "chain"
    assert _agrees_with_rtb(shifted, b) < 1e-6


def test_the_teaching_arm_urdf_becomes_the_arm5_kind(tmp_path):
    """docs/KINEMATICS.md's 5-joint arm written as a URDF (metres) is recognised, lengths and all."""
    path = _urdf(tmp_path, [
        ("base", "revolute", "world", "l1", "0 0 0", "0 0 0", "0 0 1", ("-2.356", "2.356")),
        ("shoulder", "revolute", "l1", "l2", "0 0 0.189", "0 0 0", "0 1 0", ("-2.356", "2.356")),
        ("elbow", "revolute", "l2", "l3", "0 0 0.12614", "0 0 0", "0 1 0", ("-2.356", "2.356")),
        ("wrist_pitch", "revolute", "l3", "l4", "0 0 0.12614", "0 0 0", "0 1 0", ("-2.356", "2.356")),
        ("wrist_roll", "revolute", "l4", "l5", "0 0 0", "0 0 0", "0 0 1", ("-2.356", "2.356")),
        ("tool", "fixed", "l5", "tip", "0 0 0.1506", "0 0 0", None, None),
    ], "teaching")
    data, b = _import(path, tmp_path)
    assert data["arm"]["kind"] == "arm5"
    assert [data["arm"][k] for k in ("l1_mm", "l2_mm", "l3_mm", "base_mm")] == pytest.approx(
        [126.14, 126.14, 150.6, 189.0])
    assert _agrees_with_rtb(path, b) < 1e-6
    # The analytic board solves the worked example on the board itself.
    q = [0.0] * 5
    assert b.solver.ik((157.3, 0.0, 342.4, math.radians(90)), q) <= 1


def test_a_chain_arm_gets_the_table_and_the_base_column_its_first_link_gives(tmp_path):
    """The root link runs from the table (z = 0) to the first joint (60 mm up, off the origin):
    the board gets the floor there and a keep-out column about the first joint's axis up to
    it, which the forearm and the last link may not enter (judged here by sampling the
    host chain's links against the cylinder written out)."""
    path = _urdf(tmp_path, [
        ("yaw", "revolute", "world", "l1", "0.01 0.02 0.06", "0 0 0", "0 0 1", ("-2.3", "2.3")),
        ("shoulder", "revolute", "l1", "l2", "0 0 0.03", "0 0 0", "0 1 0", ("-2.3", "2.3")),
        ("elbow", "revolute", "l2", "l3", "0 0 0.12", "0 0 0", "0 1 0", ("-2.3", "2.3")),
        ("wrist", "revolute", "l3", "l4", "0 0 0.1", "0 0 0", "0 1 0", ("-2.3", "2.3")),
        ("tool", "fixed", "l4", "tip", "0 0 0.05", "0 0 0", None, None),
    ], "column")
    data, b = _import(path, tmp_path)
    assert data["arm"]["kind"] == "chain"
    ws = data["workspace"]
    assert ws["floor"] == {"height_mm": 0.0, "clearance_mm": urdf.FLOOR_CLEARANCE_MM}
    (column,) = ws["zones"]
    assert column["kind"] == "cylinder" and column["links"] == ["link3", "link4"]
    assert [column[k] for k in ("x_mm", "y_mm", "bottom_mm", "top_mm")] == pytest.approx([10.0, 20.0, 0.0, 60.0])
    # Poses the column refuses: exactly those where a sample of link 3 or 4 (grown by its
    # radius) lies inside it, away from the edges by a margin for the sampling.
    c = chain_mod.from_board(b)
    zones = b.solver.zones
    radius = zones.radii[2]
    grown = column["radius_mm"] + radius
    refused = 0
    for q in c.random_poses(3000, np.random.default_rng(7)):
        pts = c.joint_points(q)
        f = np.linspace(0.0, 1.0, 200)[:, None]
        samples = np.concatenate([pts[k] + (pts[k + 1] - pts[k]) * f for k in (2, 3)])
        across = np.hypot(samples[:, 0] - 10.0, samples[:, 1] - 20.0) - grown
        above = samples[:, 2] - (60.0 + radius)
        depth = np.max(np.minimum(-across, -above))          # > 0: inside the grown column
        clear = zones.clear(q.tolist())
        if not clear and zones.zone_names[zones.hit_zone] == "base":
            refused += 1
            assert depth > -0.5, q
        elif depth > 0.5:
            assert not clear, q
    assert refused > 5
