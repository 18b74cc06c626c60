# SPDX-License-Identifier: MIT
"""armctl.calibrate: servo and link-length fits, and the guided session end to end on the simulator."""

import argparse
import contextlib
import io
import json
import math
import sys

import pytest

from armctl import calibrate as cal
from armctl import calibrate_fit, calibrate_store
from armctl import cli
from armctl.commands import calibrate as calibrate_command
from armctl.deploy import restart
from armctl.link import Link
from armctl.sim import Simulator
from armfw import board as boardlib
from armfw import kinematics

from conftest import BOARDS, OnATerminal

RAD = math.pi / 180


def test_servo_fit_two_poses_by_hand():
    # Servo reversed, 400 us/rad, sits 30 us above centre at math zero:
    # offset = 30 us / 400 us/rad = 0.075 rad = 4.2972 deg; at +90 deg the
    # pulse is 1530 - 400 * pi/2 = 901.68 us.
    fit = calibrate_fit.fit_servo([0.0, math.pi / 2], [1530, 1530 - 400 * math.pi / 2], 1500)
    assert fit["sign"] == -1
    assert fit["us_per_rad"] == pytest.approx(400.0, abs=1e-3)
    assert fit["offset_deg"] == pytest.approx(4.2972, abs=1e-3)
    assert fit["residual_us"] == pytest.approx([0, 0], abs=1e-6)


def test_servo_fit_residuals_show_a_bent_servo():
    # Three poses, the middle pulse 6 us off a straight line: least squares
    # spreads it as +4, -2 ... the residuals sum to zero and the middle one is 2/3 of 6.
    fit = calibrate_fit.fit_servo([0.0, math.pi / 4, math.pi / 2], [1500, 1500 + 424.448 * math.pi / 4 + 6,
                                                          1500 + 424.448 * math.pi / 2], 1500)
    assert sum(fit["residual_us"]) == pytest.approx(0, abs=1e-3)
    assert fit["residual_us"][1] == pytest.approx(4.0, abs=1e-3)
    assert fit["residual_us"][0] == pytest.approx(-2.0, abs=1e-3)


def test_servo_fit_refuses_degenerate_input():
    with pytest.raises(ValueError):
        calibrate_fit.fit_servo([0.5, 0.5], [1500, 1600], 1500)
    with pytest.raises(ValueError, match="connected"):
        calibrate_fit.fit_servo([0.0, 1.0], [1500, 1500], 1500)


def test_length_fit_planar_by_hand():
    # True arm 110/90 mm against the board's 100/80: stretched along x the tip
    # is at 200 mm, stretched along y at (0, 200), elbow at +90 deg at (110, 90).
    arm = boardlib.load(str(BOARDS / "sim_planar.json")).solver
    report = calibrate_fit.fit_lengths(arm, [[0, 0], [math.pi / 2, 0], [0, math.pi / 2]],
                             [[200, 0], [0, 200], [110, 90]])
    assert report["lengths"] == {"l1_mm": pytest.approx(110, abs=1e-6), "l2_mm": pytest.approx(90, abs=1e-6)}
    # Nominal model misses: 20 mm, 20 mm, hypot(10, 10) mm.
    assert report["before_mm"] == pytest.approx([20, 20, math.hypot(10, 10)], abs=1e-3)
    assert report["rms_after_mm"] == pytest.approx(0, abs=1e-6)


def test_length_fit_arm5_recovers_lengths_and_reports_noise():
    # Measurements from the arm5 closed form (docs/KINEMATICS.md frame) with other
    # lengths, plus +-0.5 mm of alternating "ruler" noise.
    l1, l2, l3, base = 135.0, 118.0, 160.0, 180.0
    arm = boardlib.load(str(BOARDS / "sim_arm5.json")).solver
    poses = [[d * RAD for d in pose] for pose in cal.MEASURE_POSES["arm5"]]
    measured = []
    for k, q in enumerate(poses):
        a2, a3, a4 = q[1], q[1] + q[2], q[1] + q[2] + q[3]
        s = l1 * math.sin(a2) + l2 * math.sin(a3) + l3 * math.sin(a4)
        z = base + l1 * math.cos(a2) + l2 * math.cos(a3) + l3 * math.cos(a4)
        noise = 0.5 if k % 2 else -0.5
        measured.append([s * math.cos(q[0]) + noise, s * math.sin(q[0]), z - noise])
    report = calibrate_fit.fit_lengths(arm, poses, measured)
    for name, true in (("l1_mm", l1), ("l2_mm", l2), ("l3_mm", l3), ("base_mm", base)):
        assert report["lengths"][name] == pytest.approx(true, abs=1.0)
    assert report["rms_before_mm"] > 5.0      # the model error is visible...
    assert report["rms_after_mm"] < 1.0       # ...and gone after the fit: only the noise is left


def test_length_fit_refuses_poses_that_cannot_separate_lengths():
    arm = boardlib.load(str(BOARDS / "sim_planar.json")).solver
    # Elbow straight in every pose: only l1 + l2 is observable.
    with pytest.raises(ValueError, match="varied"):
        calibrate_fit.fit_lengths(arm, [[0, 0], [0.5, 0], [1.0, 0]], [[180, 0], [158, 86], [97, 151]])


def test_calibration_file_keeps_skipped_joints_and_loads(tmp_path):
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    # 400 us/rad leaves room for a 20 us offset inside 500..2500 us at +-135 deg.
    fits = {1: calibrate_fit.fit_servo([0.0, math.pi / 2], [1520, 1520 + 400 * math.pi / 2], 1500)}
    data = calibrate_store.calibration_file(board, fits)
    assert len(data["joints"]) == 5
    assert data["joints"][0] == {"offset_deg": 0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500}
    path = tmp_path / "calibration.json"
    calibrate_store.write_json_atomically(path, data)
    assert not (tmp_path / "calibration.json.tmp").exists()
    loaded = boardlib.load(str(BOARDS / "sim_arm5.json"), calibration=str(path))
    assert loaded.servos.pulse(1, 0.0) == 1520
    assert loaded.servos.pulse(1, math.pi / 2) == round(1520 + 400 * math.pi / 2)


def test_calibration_that_breaks_a_limit_window_is_refused():
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    # 30 deg of offset: +135 deg would need 1500 + 165 deg * 424.448 us/rad = 2722 us > 2500.
    fits = {1: calibrate_fit.fit_servo([0.0, math.pi / 2], [1500 + 30 * RAD * 424.448,
                                                  1500 + 120 * RAD * 424.448], 1500)}
    with pytest.raises(boardlib.BoardError, match="pulse window"):
        calibrate_store.check_calibration(BOARDS / "sim_arm5.json", calibrate_store.calibration_file(board, fits))


# -- the guided session end to end on the simulator ---------------------------

# The physical arm the "person" looks at: its servos are not what the board
# file says. Shoulder: mounted 5 deg off and a weaker servo (400 us/rad);
# elbow: mounted reversed; wrist pitch: 3 deg the other way, 410 us/rad.
TRUE_SERVOS = {1: (5.0, 1, 400.0), 2: (0.0, -1, 424.448), 3: (-3.0, 1, 410.0)}
# ...and its links are not the board file's either (mm).
TRUE_LENGTHS = (131.0, 121.5, 146.0, 192.5)


def true_board():
    """The sim_arm5 board with the physical arm's servo mounting laid over it."""
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    for j, (offset_deg, sign, us_per_rad) in TRUE_SERVOS.items():
        board.servos.offsets[j] = offset_deg * RAD
        board.servos.signs[j] = sign
        board.servos.us_per_rad[j] = us_per_rad
    return board


def true_us(servos, j, deg):
    """The pulse (us, unrounded) that puts the physical joint at deg: the servo model, by hand."""
    return servos.center_us[j] + (servos.offsets[j] + servos.signs[j] * deg * RAD) * servos.us_per_rad[j]


def key_toward(miss, big, step, close):
    """The key a person presses to close miss (in the keys' unit: us, or deg): the biggest
    step (z/c big, a/d step) that does not overshoot, the finest (A/D) while more than close
    off, Enter when within close."""
    for key, size in (("c", big), ("z", -big), ("d", step), ("a", -step)):
        if miss / size >= 1:
            return key
    if abs(miss) > close:
        return "D" if miss > 0 else "A"
    return "\n"


class Person:
    """Looks at the arm (the pulses the simulator's servos got, read through the true servo
    map) and presses keys until the joint sits at the pose the screen asks for; measures tips."""

    def __init__(self, sim, truth):
        self.sim = sim
        self.truth = truth.servos
        self.solver = kinematics.Arm5Solver(*TRUE_LENGTHS, truth.solver.names, truth.solver.lo, truth.solver.hi, truth.solver.home)
        self.keys = 0

    def servo_now(self, channel):
        for t, ch, us in reversed(self.sim.pulses()):
            if ch == channel and us > 0:
                return us
        raise AssertionError("channel %d never got a pulse" % channel)

    def read(self, task):
        now = self.servo_now(task.channel)
        assert now == task.us                   # what the screen says is what the servo got
        self.keys += 1
        return key_toward(true_us(self.truth, task.joint, task.pose_deg) - now, 100, 10, 0.5)

    def measure(self, prompt):
        """The tip as a ruler would find it: true lengths, angles the servos really took."""
        q = [self.truth.angle(j, self.servo_now(ch)) for j, ch in enumerate(self.truth.channels)]
        x, y, z, _ = self.solver.fk(q, [0.0] * 4)
        return "%.2f %.2f %.2f" % (x, y, z)


def _physical_deg(person, board):
    return [person.truth.angle(j, person.servo_now(ch)) / RAD for j, ch in enumerate(board.servos.channels)]


def assert_true_servos(joints):
    """joints (calibration.json's) are the physical arm's servo maps, TRUE_SERVOS.

    The recorded pulses are the whole microseconds nearest the true ones (at
    most 0.5 us off each): the slope over pi/2 rad is then within 1 us / (pi/2)
    = 0.64 us/rad, the offset within about 0.5 us / 400 us/rad = 0.07 deg.
    """
    for j in range(5):
        offset_deg, sign, us_per_rad = TRUE_SERVOS.get(j, (0.0, 1, 424.448))
        assert joints[j]["sign"] == sign
        assert joints[j]["us_per_rad"] == pytest.approx(us_per_rad, abs=0.64)
        assert joints[j]["offset_deg"] == pytest.approx(offset_deg, abs=0.1)


def test_guided_calibration_recovers_a_known_miscalibration(micropython, tmp_path, report):
    board_path = BOARDS / "sim_arm5.json"
    truth = true_board()
    with Simulator(board_path, pty=True) as sim:
        person = Person(sim, truth)
        pose = "joints 0 45 -30 20 0"
        with Link(sim.port, timeout=10) as link:
            assert link.request(pose).ok
        # Uncalibrated, the board's pulses put the physical joints elsewhere:
        # shoulder 45 * 424.448 / 400 - 5 = 42.75 deg, elbow reversed +30 deg,
        # wrist 20 * 424.448 / 410 + 3 = 23.70 deg.
        assert _physical_deg(person, truth) == pytest.approx([0, 42.75, 30, 23.70, 0], abs=0.2)

        save = tmp_path / "cal.json"
        args = argparse.Namespace(port=sim.port, board=str(board_path), joints=None, poses=[0.0, 90.0],
                                  measure=True, save=str(save), baud=115200)
        out = io.StringIO()
        code = calibrate_command.run(args, keys=person, lines=person.measure, out=out)
        print(out.getvalue())
        assert code == cli.EXIT_OK, out.getvalue()

        saved = json.loads(save.read_text())
        on_flash = json.loads((sim.flash_dir / "calibration.json").read_text())
        assert on_flash == {key: saved[key] for key in on_flash}
        assert sorted(on_flash) == ["board", "date", "joints", "residuals_us", "version"]
        assert on_flash["board"] == "sim_arm5" and on_flash["version"] == calibrate_store.FORMAT_VERSION
        # Two poses per joint: a fitted line meets both pulses; where the board's own values
        # were kept, each pulse is its exact value rounded to a whole microsecond.
        assert sorted(on_flash["residuals_us"]) == sorted(truth.solver.names)
        assert all(len(r) == 2 and max(map(abs, r)) <= 0.5 for r in on_flash["residuals_us"].values())
        assert not (sim.flash_dir / "calibration.json.tmp").exists()
        assert_true_servos(saved["joints"])
        # The length fit found the physical links (pose quantisation: ~0.1 deg, ~1 mm).
        lengths = saved["lengths"]
        for name, true in zip(("l1_mm", "l2_mm", "l3_mm", "base_mm"), TRUE_LENGTHS):
            assert lengths["lengths"][name] == pytest.approx(true, abs=1.5)
        assert lengths["rms_before_mm"] > 5.0 and lengths["rms_after_mm"] < 1.0
        assert "model error" in out.getvalue()
        report("calibrate: worst offset miss %.3f deg, worst us/rad miss %.3f; lengths rms %.2f -> %.2f mm, "
               "%d key presses" % (
                   max(abs(saved["joints"][j]["offset_deg"] - TRUE_SERVOS.get(j, (0.0,))[0]) for j in range(5)),
                   max(abs(saved["joints"][j]["us_per_rad"] - TRUE_SERVOS.get(j, (0, 1, 424.448))[2])
                       for j in range(5)),
                   lengths["rms_before_mm"], lengths["rms_after_mm"], person.keys))

        # Calibrated, the same command puts the physical joints where it says...
        with Link(sim.port, timeout=10) as link:
            assert link.request(pose).ok
        assert _physical_deg(person, truth) == pytest.approx([0, 45, -30, 20, 0], abs=0.2)
        # ...and still does after another soft reset.
        boots = sim.boots
        restart(sim.port)
        assert sim.boots > boots
        with Link(sim.port, timeout=10) as link:
            assert link.request("joints 0 -60 80 10 0").ok
        assert _physical_deg(person, truth) == pytest.approx([0, -60, 80, 10, 0], abs=0.2)


def test_quitting_writes_nothing(micropython, tmp_path):
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as sim:
        class Quitter:
            def read(self, task):
                return "q"
        args = argparse.Namespace(port=sim.port, board=str(BOARDS / "sim_arm5.json"), joints=[2],
                                  poses=[0.0, 90.0], measure=False, save=str(tmp_path / "cal.json"),
                                  baud=115200)
        assert calibrate_command.run(args, keys=Quitter(), out=io.StringIO()) == cli.EXIT_REFUSED
        assert not (sim.flash_dir / "calibration.json").exists()
        assert not (tmp_path / "cal.json").exists()


def test_calibrating_one_joint_keeps_the_others_calibration(micropython, tmp_path):
    earlier = {"joints": [{"offset_deg": 0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500}
                          for _ in range(5)]}
    earlier["joints"][1] = {"offset_deg": 5.0, "sign": 1, "us_per_rad": 400.0, "center_us": 1500}
    cal_path = tmp_path / "earlier.json"
    cal_path.write_text(json.dumps(earlier))
    with Simulator(BOARDS / "sim_arm5.json", pty=True, calibration=cal_path) as sim:
        person = Person(sim, true_board())
        args = argparse.Namespace(port=sim.port, board=str(BOARDS / "sim_arm5.json"), joints=[3],
                                  poses=[0.0, 90.0], measure=False, save=str(tmp_path / "cal.json"),
                                  baud=115200)
        out = io.StringIO()
        assert calibrate_command.run(args, keys=person, lines=person.measure, out=out) == cli.EXIT_OK, \
            out.getvalue()
        on_flash = json.loads((sim.flash_dir / "calibration.json").read_text())
    assert on_flash["joints"][1] == earlier["joints"][1]
    assert on_flash["joints"][2]["sign"] == -1
    assert on_flash["joints"][3] == earlier["joints"][3]


def test_calibration_file_carries_forward_what_is_not_a_joint_fit():
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    earlier = {"joints": [{"offset_deg": 2.0, "sign": 1, "us_per_rad": 410.0, "center_us": 1500}] * 5,
               "tool_mm": [0, 8, 35], "probe_mm": 12.5}
    fits = {j: {"offset_deg": -1.0, "sign": -1, "us_per_rad": 420.0, "center_us": 1500, "residual_us": [0.0]}
            for j in range(5)}
    data = calibrate_store.calibration_file(board, fits, earlier)
    # Every joint measured: only the new fits, none of the earlier joint entries.
    assert data["joints"] == [{"offset_deg": -1.0, "sign": -1, "us_per_rad": 420.0, "center_us": 1500}] * 5
    assert data["tool_mm"] == [0, 8, 35] and data["probe_mm"] == 12.5
    lines = calibrate_store.carried_forward(board, earlier, fits)
    assert lines == ["kept tool offset 0 / 8 / 35 mm from the earlier calibration",
                     "kept probe_mm 12.5 from the earlier calibration"]
    dropped = calibrate_store.calibration_file(board, fits, earlier, drop={"tool_mm": "dropped"})
    assert "tool_mm" not in dropped and dropped["probe_mm"] == 12.5
    # The tcp step measures no joint: all five keep their earlier entries.
    assert calibrate_store.calibration_file(board, {}, earlier)["joints"] == earlier["joints"]
    assert calibrate_store.carried_forward(board, earlier, (), {"tool_mm": "replaced"})[:2] == [
        "kept the servo calibration of every joint from the earlier calibration",
        "replaced tool offset 0 / 8 / 35 mm of the earlier calibration"]
    assert calibrate_store.carried_forward(board, {}, {3: fits[3]}) == [
        "no earlier servo calibration on the board: base, shoulder, elbow, wrist_roll keep the board file's values"]


# An earlier calibration on the board: a tool offset from `calibrate --tcp` and joint
# fits that are not the physical arm's (the shoulder 3 deg off, the elbow not reversed).
# The board runs it while the joints are measured (from test_guided_calibration_recovers_a_known_miscalibration's
# pose): its shoulder error is on the side that keeps the raw +90 deg pulse (2167 us:
# 87.5 deg to this board) out of the floor zone.
EARLIER_TOOL_MM = [0.0, 8.0, 35.0]


def _earlier_calibration(tmp_path):
    joints = [{"offset_deg": 0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500} for _ in range(5)]
    joints[1] = {"offset_deg": 8.0, "sign": 1, "us_per_rad": 400.0, "center_us": 1500}
    path = tmp_path / "earlier.json"
    path.write_text(json.dumps({"joints": joints, "tool_mm": EARLIER_TOOL_MM}))
    return path


def assert_tip_of_the_earlier_tool(fk_reply):
    """fk_reply, the board's `fk 0 0 90 0 0`, puts the tip EARLIER_TOOL_MM past the wrist's tool end.

    Elbow at 90 deg, everything else 0: the forearm points along +x at the top
    of the upper arm, so the l3 tool end is at x = l2 + l3, z = base + l1; the
    offset adds 35 mm along the tool (+x) and 8 mm to its left (+y).
    """
    arm = boardlib.load(str(BOARDS / "sim_arm5.json")).solver
    assert fk_reply.ok, fk_reply.final
    assert fk_reply.values[:3] == pytest.approx([arm.l2 + arm.l3 + 35.0, 8.0, arm.base + arm.l1], abs=0.01)


def test_full_recalibration_measures_every_joint_anew_and_keeps_the_tool_offset(micropython, tmp_path):
    truth = true_board()
    with Simulator(BOARDS / "sim_arm5.json", pty=True, calibration=_earlier_calibration(tmp_path)) as sim:
        person = Person(sim, truth)
        with Link(sim.port, timeout=10) as link:
            assert link.request("joints 0 45 -30 20 0").ok
        out = io.StringIO()
        code = calibrate_command.run(_args(sim, tmp_path, None), keys=person, lines=person.measure, out=out)
        assert code == cli.EXIT_OK, out.getvalue()
        on_flash = json.loads((sim.flash_dir / "calibration.json").read_text())
        assert "kept tool offset 0 / 8 / 35 mm from the earlier calibration" in out.getvalue()
        # The board restarted with it: its solver puts the tool tip on the target.
        with Link(sim.port, timeout=10) as link:
            reply = link.request("fk 0 0 90 0 0")
    assert on_flash["tool_mm"] == EARLIER_TOOL_MM
    # Every joint is the physical arm's: the earlier shoulder and elbow entries are gone.
    assert_true_servos(on_flash["joints"])
    assert_tip_of_the_earlier_tool(reply)


def test_reset_tool_drops_the_earlier_tool_offset(micropython, tmp_path):
    earlier = _earlier_calibration(tmp_path)
    with Simulator(BOARDS / "sim_arm5.json", pty=True, calibration=earlier) as sim:
        args = _args(sim, tmp_path, [5])
        args.reset_tool = True
        out = io.StringIO()
        assert calibrate_command.run(args, keys=Script(["\n", "\n"]), out=out) == cli.EXIT_OK, out.getvalue()
        on_flash = json.loads((sim.flash_dir / "calibration.json").read_text())
    assert "dropped (--reset-tool) tool offset 0 / 8 / 35 mm of the earlier calibration" in out.getvalue()
    assert "tool_mm" not in on_flash
    assert on_flash["joints"][:4] == json.loads(earlier.read_text())["joints"][:4]


def calibrate_on_a_terminal(sim, tmp_path):
    """`armctl calibrate --joints 5` on a pseudo-terminal."""
    return OnATerminal([sys.executable, "-m", "armctl.cli", "calibrate", "--port", sim.port,
                        "--board", str(BOARDS / "sim_arm5.json"), "--joints", "5",
                        "--save", str(tmp_path / "cal.json")])


def test_keyboard_on_a_terminal(micropython, tmp_path):
    """`armctl calibrate` on a real terminal: single keys without Enter, arrow keys."""
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as sim:
        term = calibrate_on_a_terminal(sim, tmp_path)
        try:
            term.until(b"to +0 deg")
            term.type(b"\r")                                 # record the start pulse at 0 deg
            term.until(b"to +90 deg")
            term.type(b"\x1b[C")                             # right arrow: +10 us
            term.until(b"wrist_roll 2177 us")
            term.type(b"\x1b[B")                             # down arrow: -1 us
            term.until(b"wrist_roll 2176 us")
            term.type(b"D")                                  # back to the board's own pulse
            term.until(b"wrist_roll 2177 us")
            term.type(b"a")
            term.until(b"wrist_roll 2167 us")
            term.type(b"\r")
            term.until(b"Enter writes it to the board")      # shown first, written on Enter
            term.type(b"\r")
            assert term.finish() == cli.EXIT_OK
        finally:
            term.close()
        assert b"the board's values give every recorded pulse; kept" in term.screen
        saved = json.loads((sim.flash_dir / "calibration.json").read_text())
    assert saved["joints"][4] == {"offset_deg": 0.0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500}


def _first_pulse(sim, channel):
    return next(us for _, ch, us in sim.pulses() if ch == channel)


def test_boot_takes_a_lone_calibration_tmp_the_fat_rename_left(tmp_path):
    """FAT: the old calibration.json is removed before the rename; a power cut
    there leaves only the complete .tmp, and the board must boot with it.
    sim_planar's shoulder: offset -90 deg, 318.31 us/rad, home 90 deg, so the
    parked pulse is 1500 us; with offset -85 deg it is 1500 + 5 deg = 1528 us."""
    fit = {"joints": [{"offset_deg": -85}, {}]}
    with Simulator(BOARDS / "sim_planar.json", flash_dir=tmp_path / "flash") as sim:
        assert sim.request("where")[-1].startswith("ok")
        assert _first_pulse(sim, 0) == 1500
    (tmp_path / "flash" / "calibration.json.tmp").write_text(json.dumps(fit))
    with Simulator(flash_dir=tmp_path / "flash") as sim:
        assert sim.request("where")[-1].startswith("ok")
        assert _first_pulse(sim, 0) == round(1500 + math.radians(5) * 318.31)


def test_boot_ignores_a_calibration_tmp_beside_the_real_one(tmp_path):
    """A .tmp next to calibration.json may be half-written (cut mid-copy): not read."""
    with Simulator(BOARDS / "sim_planar.json", flash_dir=tmp_path / "flash",
                   calibration=None) as sim:
        assert sim.request("where")[-1].startswith("ok")
    flash = tmp_path / "flash"
    (flash / "calibration.json").write_text(json.dumps({"joints": [{"offset_deg": -85}, {}]}))
    (flash / "calibration.json.tmp").write_text('{"joints": [{"offset_d')
    with Simulator(flash_dir=flash) as sim:
        assert sim.request("where")[-1].startswith("ok")
        assert _first_pulse(sim, 0) == round(1500 + math.radians(5) * 318.31)


def _args(sim, tmp_path, joints, fresh=False, poses=(0.0, 90.0)):
    return argparse.Namespace(port=sim.port, board=str(BOARDS / "sim_arm5.json"), joints=joints,
                              poses=list(poses), measure=False, save=str(tmp_path / "cal.json"),
                              baud=115200, fresh=fresh)


class Script:
    """Presses the given keys in order, and notes which pose each key was pressed at."""

    def __init__(self, keys):
        self.keys = list(keys)
        self.asked = []

    def read(self, task):
        self.asked.append((task.joint, task.pose_deg))
        return self.keys.pop(0)


def test_a_pose_pair_with_one_pulse_is_explained_and_measured_again(micropython, tmp_path):
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    down = board.servos.pulse(4, 90 * RAD) - board.servos.pulse(4, 0.0)     # 667 us for wrist_roll
    assert down == 667
    # First try: Enter at 0 deg, then jog the +90 deg pose back to the 0 deg pulse (6 x 100, 6 x 10, 7 x 1).
    # Second try: Enter at each start pulse (the board's own values).
    script = Script(["\n"] + ["z"] * 6 + ["a"] * 6 + ["A"] * 7 + ["\n", "\n", "\n"])
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as sim:
        out = io.StringIO()
        code = calibrate_command.run(_args(sim, tmp_path, [5]), keys=script, out=out)
    assert code == cli.EXIT_OK, out.getvalue()
    text = out.getvalue()
    assert "hardly changes" in text and "measure wrist_roll again" in text
    assert script.asked[-2:] == [(4, 0.0), (4, 90.0)]
    assert not (tmp_path / "cal.json.progress.json").exists()      # done: no progress left behind


POSES = (0.0, 30.0)


def test_an_interrupted_calibration_resumes_where_it_stopped(micropython, tmp_path):
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as sim:
        first = Script(["\n", "a", "\n", "\n", "q"])    # shoulder: 0 and +90 deg; elbow: 0 deg; quit
        first_out = io.StringIO()
        # Small poses: +90 deg at the shoulder would put the tool into the floor zone.
        assert calibrate_command.run(_args(sim, tmp_path, [2, 3], poses=POSES), keys=first, out=first_out) == \
            cli.EXIT_REFUSED
        assert "refused" not in first_out.getvalue()
        kept = json.loads((tmp_path / "cal.json.progress.json").read_text())
        board = boardlib.load(str(BOARDS / "sim_arm5.json"))
        start = [board.servos.pulse(j, d * RAD) for j, d in ((1, POSES[0]), (1, POSES[1]), (2, POSES[0]))]
        assert kept["pulses"] == {"1": [start[0], start[1] - 10], "2": [start[2], None]}
        out = io.StringIO()
        second = Script(["\n"])                              # only the elbow's +90 deg is left
        assert calibrate_command.run(_args(sim, tmp_path, [2, 3], poses=POSES), keys=second, out=out) == \
            cli.EXIT_OK, out.getvalue()
        assert second.asked == [(2, POSES[1])]
        assert "resuming" in out.getvalue()
        saved = json.loads((tmp_path / "cal.json").read_text())
    # Shoulder: the line through its two recorded pulses, the second 10 us below the board's.
    assert saved["joints"][1]["us_per_rad"] == pytest.approx(
        (start[1] - 10 - start[0]) / ((POSES[1] - POSES[0]) * RAD), abs=0.001)
    assert not (tmp_path / "cal.json.progress.json").exists()


def test_jog_keys_typed_ahead_are_dropped_and_u_undoes(micropython, tmp_path):
    """On a terminal: 20 jog keys at once move the servo one step, not twenty; u goes back."""
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as sim:
        term = calibrate_on_a_terminal(sim, tmp_path)
        try:
            term.until(b"to +0 deg")
            term.type(b"\r")
            term.until(b"to +90 deg (now 2167 us)")
            term.type(b"d" * 20)                             # one write: all typed ahead of the first jog
            term.until(b"wrist_roll 2177 us")
            term.type(b"u")
            term.until(b"wrist_roll 2167 us (undone)")
            term.type(b"\r")
            term.until(b"Enter writes it to the board")
            term.type(b"\r")
            assert term.finish() == cli.EXIT_OK
        finally:
            term.close()
        assert b"2187" not in term.screen
        jogged = [us for _, ch, us in sim.pulses() if ch == sim_channel(4)]
    assert max(jogged) == 2177


def sim_channel(joint):
    return boardlib.load(str(BOARDS / "sim_arm5.json")).servos.channels[joint]


def test_reset_tool_with_tcp_is_a_usage_error(tmp_path):
    args = argparse.Namespace(port="/dev/null", board=str(BOARDS / "sim_arm5.json"), tcp=True, reset_tool=True,
                              max_residual=None, save=str(tmp_path / "tcp.json"), baud=115200)
    with pytest.raises(cli.UsageError, match="--tcp measures a new tool offset"):
        calibrate_command.run(args, keys=Script([]), out=io.StringIO())


def test_a_fit_that_breaks_a_pulse_window_writes_nothing_and_leaves_the_board_running(micropython, tmp_path):
    """The board's file was read (its loop stopped) when the check refuses: it is restarted, unchanged."""
    earlier = _earlier_calibration(tmp_path)
    # wrist_roll: 1500 us at 0 deg, then 3 x +100 us past the board's 2167 us at +90 deg:
    # 967 us over pi/2 rad is 615.6 us/rad, and -135 deg would need 1500 - 1451 us < 500 us.
    script = Script(["\n", "c", "c", "c", "\n"])
    with Simulator(BOARDS / "sim_arm5.json", pty=True, calibration=earlier) as sim:
        err = io.StringIO()
        out = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = calibrate_command.run(_args(sim, tmp_path, [5]), keys=script, out=out)
        assert code == cli.EXIT_REFUSED, out.getvalue()
        assert "pulse window" in err.getvalue() and "nothing written" in err.getvalue()
        assert (sim.flash_dir / "calibration.json").read_text() == earlier.read_text()
        with Link(sim.port, timeout=10) as link:
            reply = link.request("fk 0 0 90 0 0")
    assert_tip_of_the_earlier_tool(reply)            # the protocol answers again, on the earlier tool offset
    assert not (tmp_path / "cal.json").exists()
