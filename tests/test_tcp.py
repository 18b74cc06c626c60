# SPDX-License-Identifier: MIT
"""armctl.tcp: four-point tool offset calibration against synthetic touches with a known offset."""

import math

import numpy as np
import pytest

from armctl import tcp
from armfw import board as boardlib
from armfw import kinematics
from armfw.status import OK, SINGULAR

from conftest import BOARDS

RAD = math.pi / 180


def _rotation(axis, angle):
    """Rodrigues' formula: rotation by angle about a unit axis (independent of tcp's Rz/Ry)."""
    k = np.asarray(axis, dtype=float)
    k = k / np.linalg.norm(k)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * kx + (1 - math.cos(angle)) * kx @ kx


def _touches(rotations, offset, point, noise_mm, rng):
    positions = [point - r @ offset + rng.normal(0.0, noise_mm, 3) for r in rotations]
    return positions


def test_known_offset_comes_back_within_the_noise():
    rng = np.random.default_rng(14)
    offset = np.array([3.0, -12.5, 41.0])
    point = np.array([180.0, 40.0, 60.0])
    rotations = [_rotation(rng.normal(size=3), rng.uniform(0.6, 1.6)) for _ in range(8)]
    noise = 0.1
    result = tcp.solve(rotations, _touches(rotations, offset, point, noise, rng))
    # Eight well-spread touches with 0.1 mm noise per coordinate: the error is
    # about noise / smallest singular value, a few tenths of a mm at worst.
    bound = 5 * noise / result["singular_values"][-1]
    assert np.linalg.norm(np.array(result["offset_mm"]) - offset) < bound
    assert np.linalg.norm(np.array(result["point_mm"]) - point) < bound
    assert result["redo"] == []
    assert result["rms_mm"] < 3 * noise


def test_exact_touches_give_the_offset_to_rounding():
    rotations = [_rotation((1, 0, 0), 0.0), _rotation((1, 0, 0), 1.0),
                 _rotation((0, 1, 0), 1.0), _rotation((0, 0, 1), 1.0)]
    offset = np.array([0.0, 7.0, 25.0])
    point = np.array([100.0, 0.0, 50.0])
    result = tcp.solve(rotations, [point - r @ offset for r in rotations])
    assert result["offset_mm"] == pytest.approx(list(offset), abs=1e-9)
    assert max(result["residual_mm"]) < 1e-9


def test_a_slipped_touch_is_named():
    rng = np.random.default_rng(3)
    offset = np.array([0.0, 10.0, 30.0])
    point = np.array([150.0, -30.0, 40.0])
    rotations = [_rotation(rng.normal(size=3), rng.uniform(0.7, 1.5)) for _ in range(7)]
    positions = _touches(rotations, offset, point, 0.05, rng)
    positions[4] = positions[4] + np.array([4.0, -3.0, 2.0])      # the tip slid 5.4 mm off
    result = tcp.solve(rotations, positions)
    assert 5 in result["redo"]
    assert int(np.argmax(result["residual_mm"])) == 4


@pytest.mark.parametrize("what, rotations", [
    ("nearly the same orientation", [_rotation((1, 2, 3), a) for a in (0.50, 0.505, 0.51, 0.515, 0.52)]),
    ("all turned about one axis", [_rotation((0, 0, 1), a) for a in (0.0, 1.0, 2.0, 3.0, 4.0)]),
])
def test_degenerate_orientations_are_refused_with_the_singular_values(what, rotations):
    rng = np.random.default_rng(1)
    positions = _touches(rotations, np.array([0.0, 5.0, 30.0]), np.array([100.0, 0.0, 50.0]), 0.1, rng)
    with pytest.raises(tcp.DegenerateTouches, match="singular value"):
        tcp.solve(rotations, positions)


def test_fewer_than_four_touches_are_refused():
    rotations = [_rotation((1, 0, 0), a) for a in (0.0, 1.0, 2.0)]
    with pytest.raises(tcp.DegenerateTouches, match="at least 4"):
        tcp.solve(rotations, [np.zeros(3)] * 3)


def test_flange_frame_z_is_the_tool_direction_of_fk():
    # Lengthening the tool by d moves the FK tip by d along the flange z axis;
    # at roll 0 the flange y axis is horizontal, across the arm's plane.
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    s = board.solver
    longer = kinematics.Arm5Solver(s.l1, s.l2, s.l3 + 10.0, s.base, s.names, s.lo, s.hi, s.home)
    for q in ([0.3, 0.4, 0.9, 0.2, 0.0], [-1.2, -0.5, 1.1, -0.7, 0.8], [2.0, 0.1, -0.3, 1.4, -1.5]):
        rot, p = tcp.flange_pose(s, q)
        tip = np.array(longer.fk(q, [0.0] * 4)[:3])
        assert tip - p == pytest.approx(10.0 * rot[:, 2], abs=1e-9)
        assert rot.T @ rot == pytest.approx(np.eye(3), abs=1e-12)
        if q[4] == 0.0:
            assert rot[2, 1] == pytest.approx(0.0, abs=1e-12)
            assert rot[:, 1] == pytest.approx([-math.sin(q[0]), math.cos(q[0]), 0.0], abs=1e-12)


def _touch_joints(solver, offset, point, pitch, roll):
    """Joint angles whose flange puts a tool with this offset on point (base facing the flange)."""
    yaw = math.atan2(point[1], point[0])
    for _ in range(50):
        rot = tcp._rz(yaw) @ tcp._ry(pitch) @ tcp._rz(roll)
        flange = point - rot @ offset
        yaw = math.atan2(flange[1], flange[0])
    q = [0.0] * 5
    current = [yaw, 0.0, 0.0, 0.0, roll]
    if solver.ik([flange[0], flange[1], flange[2], pitch], q, current) not in (OK, SINGULAR):
        return None
    return q


def test_touches_as_joint_angles_recover_the_offset():
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    offset = np.array([0.0, 8.0, 35.0])
    point = np.array([200.0, 20.0, 120.0])
    # Every reachable orientation of a coarse pitch/roll grid: the arm's own
    # limits decide which, as they would for a person touching the point.
    poses = [_touch_joints(board.solver, offset, point, p * RAD, r * RAD)
             for p in range(60, 180, 15) for r in range(-90, 91, 45)]
    poses = [q for q in poses if q is not None]
    assert len(poses) >= 6
    result = tcp.solve_from_joints(board.solver, poses)
    assert result["offset_mm"] == pytest.approx(list(offset), abs=1e-6)
    assert result["point_mm"] == pytest.approx(list(point), abs=1e-6)


TOUCH_OFFSET = np.array([0.0, 8.0, 35.0])
TOUCH_POINT = np.array([200.0, 20.0, 120.0])


def _spread_touches(board, count):
    """count touches of TOUCH_POINT with TOUCH_OFFSET (joint degrees), spread over the
    reachable orientations of a coarse pitch/roll grid."""
    poses = [_touch_joints(board.solver, TOUCH_OFFSET, TOUCH_POINT, p * RAD, r * RAD)
             for p in range(60, 180, 15) for r in range(-90, 91, 45)]
    poses_deg = [[v / RAD for v in q] for q in poses if q is not None]
    poses_deg = poses_deg[::max(1, len(poses_deg) // count)][:count]
    assert len(poses_deg) >= 5
    return poses_deg


class Toucher:
    """A person at the keyboard touching the point: picks each joint with its number key and
    steps it (10, 1, 0.1 deg) to the angles that touch; slips once on the first try of one touch."""

    def __init__(self, poses_deg, slip=None):
        self.poses_deg = poses_deg
        self.slip = slip            # (touch number, base error deg) for its first try
        self.tries = {}
        self.joint = 0

    def read(self, task):
        goal = list(self.poses_deg[task.number - 1]) if task.number <= len(self.poses_deg) else None
        if goal is None:
            return "f"
        first = self.tries.get(task.number, 0) == 0
        if self.slip and task.number == self.slip[0] and first:
            goal[0] += self.slip[1]
        for j in range(5):
            miss = goal[j] - task.q_deg[j]
            if abs(miss) < 0.05:
                continue
            if task.joint != j:
                return str(j + 1)
            for key, step in (("c", 10), ("z", -10), ("d", 1), ("a", -1), ("D", 0.1), ("A", -0.1)):
                if miss / step >= 0.99:
                    return key
            return "D" if miss > 0 else "A"
        self.tries[task.number] = self.tries.get(task.number, 0) + 1
        return "\n"


def test_tcp_step_on_the_simulator_writes_the_offset(micropython, tmp_path):
    import argparse
    import io
    import json

    from armctl import cli
    from armctl.commands import calibrate as calibrate_command
    from armctl.sim import Simulator

    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    poses_deg = _spread_touches(board, 6)
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as sim:
        person = Toucher(poses_deg, slip=(3, 4.0))
        save = tmp_path / "tcp.json"
        args = argparse.Namespace(port=sim.port, board=str(BOARDS / "sim_arm5.json"), tcp=True,
                                  max_residual=1.5, save=str(save), baud=115200)
        out = io.StringIO()
        code = calibrate_command.run(args, keys=person, out=out)
        assert code == cli.EXIT_OK, out.getvalue()
        text = out.getvalue()
        assert "touch 3 disagrees" in text          # the slipped touch was named and redone
        on_flash = json.loads((sim.flash_dir / "calibration.json").read_text())
        # Touches quantised to 0.1 deg: the tip sits within ~0.5 mm of the point.
        assert on_flash["tool_mm"] == pytest.approx(list(TOUCH_OFFSET), abs=1.5)
        assert len(on_flash["joints"]) == 5
        loaded = boardlib.load(str(BOARDS / "sim_arm5.json"), calibration=str(sim.flash_dir / "calibration.json"))
        assert loaded.tool_mm == on_flash["tool_mm"]
        assert json.loads(save.read_text())["tcp"]["redo"] == []


def test_tcp_step_refuses_touches_from_one_orientation(micropython, tmp_path):
    import argparse
    import io

    from armctl import cli
    from armctl.commands import calibrate as calibrate_command
    from armctl.sim import Simulator

    same = [[10.0, 30.0, 60.0, 20.0, r] for r in (0.0, 0.1, 0.2, 0.3)]
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as sim:
        args = argparse.Namespace(port=sim.port, board=str(BOARDS / "sim_arm5.json"), tcp=True,
                                  max_residual=None, save=str(tmp_path / "tcp.json"), baud=115200)
        err = io.StringIO()
        import contextlib
        with contextlib.redirect_stderr(err):
            code = calibrate_command.run(args, keys=Toucher(same), out=io.StringIO())
        assert code == cli.EXIT_REFUSED
        assert "singular value" in err.getvalue()
        assert not (sim.flash_dir / "calibration.json").exists()


def test_tcp_step_homes_a_relaxed_arm_first(micropython, tmp_path):
    """A board that boots with its servos off: the step moves home before jogging."""
    import argparse
    import io
    import json

    from armctl import cli
    from armctl.commands import calibrate as calibrate_command
    from armctl.sim import Simulator

    data = json.loads((BOARDS / "sim_arm5.json").read_text())
    data["boot"] = "relaxed"
    board_path = tmp_path / "relaxed.json"
    board_path.write_text(json.dumps(data))
    poses_deg = _spread_touches(boardlib.load(str(board_path)), 5)
    with Simulator(board_path, pty=True) as sim:
        args = argparse.Namespace(port=sim.port, board=str(board_path), tcp=True, max_residual=1.5,
                                  save=str(tmp_path / "tcp.json"), baud=115200)
        out = io.StringIO()
        assert calibrate_command.run(args, keys=Toucher(poses_deg), out=out) == cli.EXIT_OK, out.getvalue()
        assert "moves to its home pose first" in out.getvalue()
        on_flash = json.loads((sim.flash_dir / "calibration.json").read_text())
        assert on_flash["tool_mm"] == pytest.approx(list(TOUCH_OFFSET), abs=1.5)


def test_tcp_step_keeps_the_servo_calibration_the_board_has(micropython, tmp_path):
    """After a servo calibration: every joint's fit stays as it was, the tool offset is the new one."""
    import argparse
    import io
    import json

    from armctl import cli
    from armctl.commands import calibrate as calibrate_command
    from armctl.sim import Simulator

    joints = [{"offset_deg": 0.0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500} for _ in range(5)]
    joints[1] = {"offset_deg": 5.0, "sign": 1, "us_per_rad": 400.0, "center_us": 1500}
    joints[2] = {"offset_deg": 0.0, "sign": -1, "us_per_rad": 424.448, "center_us": 1500}
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"joints": joints, "tool_mm": [1.0, 2.0, 3.0]}))
    poses_deg = _spread_touches(boardlib.load(str(BOARDS / "sim_arm5.json")), 5)
    with Simulator(BOARDS / "sim_arm5.json", pty=True, calibration=earlier) as sim:
        args = argparse.Namespace(port=sim.port, board=str(BOARDS / "sim_arm5.json"), tcp=True, max_residual=1.5,
                                  save=str(tmp_path / "tcp.json"), baud=115200)
        out = io.StringIO()
        assert calibrate_command.run(args, keys=Toucher(poses_deg), out=out) == cli.EXIT_OK, out.getvalue()
        on_flash = json.loads((sim.flash_dir / "calibration.json").read_text())
    assert on_flash["joints"] == joints
    assert on_flash["tool_mm"] == pytest.approx(list(TOUCH_OFFSET), abs=1.5)
    assert "kept the servo calibration of every joint from the earlier calibration" in out.getvalue()
    assert "replaced tool offset 1 / 2 / 3 mm of the earlier calibration" in out.getvalue()
