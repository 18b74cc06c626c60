# SPDX-License-Identifier: MIT
"""Calibration a person can trust: the simulator holds a hidden physical arm (its true servo
maps and tool), a simulated person sees only what a person sees (the screen, and the arm
through armctl.sim_camera.Camera), and the calibration is checked against that truth."""

import argparse
import contextlib
import io
import json
import math
import signal
import sys

import numpy as np
import pytest

from armctl import calibrate_fit, calibrate_store
from armctl import cli, tcp
from armctl.commands import calibrate as calibrate_command
from armctl.link import Link
from armctl.sim import Simulator
from armfw import board as boardlib

from conftest import BOARDS, OnATerminal
from test_calibrate import key_toward

RAD = math.pi / 180

# The physical arm: shoulder mounted 7 deg off, elbow reversed, wrist pitch a 5 % stronger servo.
TRUE_JOINTS = [{}, {"offset_deg": 7.0}, {"sign": -1}, {"us_per_rad": 424.448 * 1.05}, {}]
# The tool sim_arm5_tool's board file describes (across, lateral, along; mm).
TRUE_TOOL = [4.0, 12.0, 25.0]


def write_truth(tmp_path, joints=TRUE_JOINTS, tool=None):
    truth = {"joints": joints}
    if tool is not None:
        truth["tool_mm"] = tool
    path = tmp_path / "truth.json"
    path.write_text(json.dumps(truth))
    return path


def narrowed_board(tmp_path, source="sim_arm5.json", limit_deg=125):
    """source with every joint limited to +-limit_deg: room in the pulse window for the true map."""
    data = json.loads((BOARDS / source).read_text())
    for joint in data["joints"]:
        joint["min_deg"], joint["max_deg"] = -limit_deg, limit_deg
    path = tmp_path / ("narrow_" + source)
    path.write_text(json.dumps(data))
    return path


def latest_us(sim, channel):
    return [us for _, ch, us in sim.pulses() if ch == channel][-1]


class Person:
    """Presses keys until the joint physically sits at the pose the screen asks for: looks at
    the arm (sim.camera), never at the board file. Checks that the pulse the screen shows is
    the one the servo has, every time it looks."""

    def __init__(self, sim):
        self.sim = sim
        self.keys = 0

    def read(self, task):
        assert latest_us(self.sim, task.channel) == task.us, "the screen shows a pulse the servo does not have"
        # The pulse that puts the joint where it should be: what a person finds by eye and key.
        self.keys += 1
        return key_toward(self.sim.camera.servos.exact_us(task.joint, task.pose_deg * RAD) - task.us, 100, 10, 0.5)


def args_for(sim, board_path, tmp_path, joints=None, poses=(0.0, 90.0)):
    return argparse.Namespace(port=sim.port, board=str(board_path), joints=joints, poses=list(poses),
                              measure=False, save=str(tmp_path / "cal.json"), baud=115200, fresh=False)


def run(args, keys):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = calibrate_command.run(args, keys=keys, out=out)
    return code, out.getvalue(), err.getvalue()


def targets(board_path):
    """Tool tip targets (x, y, z mm, pitch deg) the arm reaches, spread over its workspace:
    the board's own FK at a few joint poses."""
    solver = boardlib.load(str(board_path)).solver
    out = []
    for pose in ((0, 30, 60, 45, 0), (40, 20, 70, 30, 0), (-30, 45, 45, 60, 0), (60, 0, 90, 45, 0)):
        x, y, z, pitch = solver.fk([v * RAD for v in pose], [0.0] * 4)
        out.append((x, y, z, pitch / RAD))
    return out


def tip_misses(sim, board_path):
    """How far the physical tip lands from each of targets(board_path) the board is sent to, mm."""
    misses = []
    with Link(sim.port, timeout=30) as link:
        for target in targets(board_path):
            reply = link.request("move %.3f %.3f %.3f %.3f" % target)
            assert reply.ok, reply.final
            misses.append(math.dist(sim.camera.tip(sim.pulses()), target[:3]))
    return misses


def touch_poses(tool, board_path=BOARDS / "sim_arm5.json", count=6, point=(200.0, 20.0, 120.0), lowest_pitch=60):
    """count touches (joint degrees) of one point by a tool with this offset on the arm of
    board_path (one without a tool of its own), spread over the orientations of a coarse
    pitch/roll grid that its limits and zones allow."""
    from test_tcp import _touch_joints
    bare = boardlib.load(str(board_path)).solver
    assert bare.tool == (0.0, 0.0, 0.0)
    poses = [_touch_joints(bare, np.array(tool), np.array(point), p * RAD, r * RAD)
             for p in range(lowest_pitch, 180, 15) for r in range(-90, 91, 45)]
    poses_deg = [[v / RAD for v in q] for q in poses if q is not None]
    return poses_deg[::len(poses_deg) // count][:count]


def test_the_whole_calibration_against_the_hidden_truth(micropython, tmp_path, report):
    """Servos, then the tool, as a person does it from the home pose (elbow at 90 deg, where the
    shoulder's +90 deg pose is in the floor): the screen never shows a pulse the servo lacks,
    the fits are the truth, and targets land on the physical tip."""
    from test_tcp import Toucher
    board_path = narrowed_board(tmp_path)                # its tool: none; the physical one: TRUE_TOOL
    with Simulator(board_path, pty=True, truth=write_truth(tmp_path, tool=TRUE_TOOL)) as sim:
        before = tip_misses(sim, board_path)
        person = Person(sim)
        code, out, err = run(args_for(sim, board_path, tmp_path), person)
        assert code == cli.EXIT_OK, out + err
        assert "moved them straight (0 deg) first" in out
        on_flash = json.loads((sim.flash_dir / "calibration.json").read_text())
        truth = sim.camera.servos
        calibrated = boardlib.load(str(board_path), str(sim.flash_dir / "calibration.json")).servos
        misses = []
        for j, fit in enumerate(on_flash["joints"]):
            assert fit["sign"] == truth.signs[j]
            # Whole-microsecond pulses 90 deg apart: the slope within 1 us / (pi/2) rad, the
            # offset within 0.5 us / 424 us/rad, 0.07 deg.
            assert fit["us_per_rad"] == pytest.approx(truth.us_per_rad[j], abs=0.64)
            assert fit["offset_deg"] == pytest.approx(truth.offsets[j] / RAD, abs=0.07)
            misses.append(max(abs(truth.angle(j, calibrated.pulse(j, q * RAD)) / RAD - q) for q in range(-125, 126, 5)))
        servos_only = tip_misses(sim, board_path)
        args = argparse.Namespace(port=sim.port, board=str(board_path), tcp=True, max_residual=1.5,
                                  save=str(tmp_path / "tcp.json"), baud=115200)
        # Limits of +-125 deg leave fewer orientations for one point: a higher one, more pitches.
        toucher = Toucher(touch_poses(TRUE_TOOL, board_path, 8, (150.0, 0.0, 220.0), 30))
        assert calibrate_command.run(args, keys=toucher, out=io.StringIO()) == cli.EXIT_OK
        tool = json.loads((sim.flash_dir / "calibration.json").read_text())["tool_mm"]
        after = tip_misses(sim, board_path)
    report("calibrate (true map shoulder +7 deg, elbow reversed, wrist x1.05; tool 4 / 12 / 25 mm): worst angle "
           "error per joint %s deg over +-125 deg, %d key presses; tool fitted %s mm; tip error worst of %d "
           "targets: %.1f mm uncalibrated, %.1f mm servos only, %.2f mm servos and tool"
           % (" ".join("%.3f" % m for m in misses), person.keys, " / ".join("%.2f" % v for v in tool),
              len(after), max(before), max(servos_only), max(after)))
    assert max(misses) < 0.15
    assert tool == pytest.approx(TRUE_TOOL, abs=0.5)
    assert max(after) < 1.0 < max(servos_only)


def test_a_pose_refused_from_everywhere_is_not_jogged_and_says_what_to_do(micropython, tmp_path):
    """Shoulder +135 deg reaches into the floor whatever the other joints do: the session
    stops there with the way out, and records nothing it did not measure."""
    board_path = BOARDS / "sim_arm5.json"
    with Simulator(board_path, pty=True) as sim:
        keys = Person.__new__(Person)
        keys.sim, keys.keys = sim, 0
        sim.camera = type("Exact", (), {"servos": boardlib.load(str(board_path)).servos})()
        code, out, err = run(args_for(sim, board_path, tmp_path, joints=[2], poses=(0.0, 135.0)), keys)
        assert code == cli.EXIT_REFUSED
    assert "shoulder at +135 deg (2500 us) is refused" in err
    assert "Move the other joints clear first" in err and "--poses" in err
    kept = json.loads((tmp_path / "cal.json.progress.json").read_text())
    assert kept["pulses"] == {"1": [1500, None]}


class JogIntoTheFloor:
    """At the shoulder's 0 deg pose (elbow at 90 deg) presses +100 us until the board refuses
    twice, then Enter; notes the pulse the screen shows each time."""

    def __init__(self, sim):
        self.sim = sim
        self.refused = 0
        self.shown = []

    def read(self, task):
        self.shown.append((task.us, latest_us(self.sim, task.channel)))
        if task.pose_deg != 0.0:
            return "q"
        if len(self.shown) > 1 and self.shown[-1][0] == self.shown[-2][0]:
            self.refused += 1
        self.recorded = task.us
        return "c" if self.refused < 2 else "\n"


def test_a_refused_jog_never_changes_the_shown_pulse(micropython, tmp_path):
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as sim:
        keys = JogIntoTheFloor(sim)
        code, out, err = run(args_for(sim, BOARDS / "sim_arm5.json", tmp_path, joints=[2]), keys)
    assert code == cli.EXIT_REFUSED
    assert "board refused" in out and "COLLISION" in out
    assert keys.refused == 2
    # What the screen said the servo had is what it had, every key.
    assert all(shown == servo for shown, servo in keys.shown)
    recorded = json.loads((tmp_path / "cal.json.progress.json").read_text())["pulses"]["1"][0]
    assert recorded == keys.recorded and keys.recorded > 1500


def test_pulse_windows_are_checked_as_each_joint_is_measured(micropython, tmp_path):
    """sim_arm5's limits use its whole 500..2500 us window: the true shoulder offset and the
    stronger wrist servo leave it. Each is named right after its joint, with the fixes."""
    board_path = BOARDS / "sim_arm5.json"
    with Simulator(board_path, pty=True, truth=write_truth(tmp_path)) as sim:
        code, out, err = run(args_for(sim, board_path, tmp_path), Person(sim))
        assert code == cli.EXIT_REFUSED
        assert not (sim.flash_dir / "calibration.json").exists()
    # Named as soon as the shoulder is measured, before the elbow's turn.
    assert out.index("does not fit the board file: shoulder") < out.index("joint 3 elbow")
    # Shoulder: 135 + 7 deg at 424.448 us/rad is 2552 us; the window allows
    # (2500 - 1500) us / 424.448 us/rad - 7 deg = 127.99 deg.
    assert "shoulder (joints[1]): max_deg 135 deg needs 2552 us" in err
    assert "narrow max_deg to 127.9, or widen max_us to 2552" in err
    # Wrist pitch at 445.67 us/rad: +-135 deg needs 1500 +- 1050 us, both ends out; the window
    # allows +-1000 / 445.67 rad = +-128.56 deg.
    assert "wrist_pitch (joints[3]): min_deg -135 deg needs 450 us" in err
    assert "narrow min_deg to -128.5, or widen min_us to 450" in err
    assert "wrist_pitch (joints[3]): max_deg 135 deg needs 2550 us" in err
    assert "3 joint limits" in err
    # No temporary file named: the only path is the person's own progress file.
    assert "tmp" not in err.replace(str(tmp_path), "") and "armsim" not in out + err
    assert (tmp_path / "cal.json.progress.json").exists()      # the measuring is kept for the next run


def test_the_suggested_limit_is_the_last_one_the_window_takes():
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    fit = {"offset_deg": 7.0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500}
    [line] = calibrate_fit.window_misses(board, 1, fit)
    assert "narrow max_deg to 127.9" in line
    zero = 1500 + 7.0 * RAD * 424.448
    assert zero + 127.9 * RAD * 424.448 <= 2500 < zero + 128.0 * RAD * 424.448


def test_a_known_point_after_tcp_calibration_lands_on_the_true_tip(micropython, tmp_path, report):
    """sim_arm5_tool: the board file already says the true tool, 4 / 12 / 25 mm. Touches of one
    point fit the whole tool offset (not a correction to the board's), and a target sent
    afterwards lands on the physical tip."""
    from test_tcp import Toucher
    board_path = BOARDS / "sim_arm5_tool.json"
    poses_deg = touch_poses(TRUE_TOOL)
    assert len(poses_deg) == 6
    with Simulator(board_path, pty=True, truth=write_truth(tmp_path, [{}] * 5, TRUE_TOOL)) as sim:
        args = argparse.Namespace(port=sim.port, board=str(board_path), tcp=True, max_residual=1.5,
                                  save=str(tmp_path / "tcp.json"), baud=115200)
        out = io.StringIO()
        assert calibrate_command.run(args, keys=Toucher(poses_deg), out=out) == cli.EXIT_OK, out.getvalue()
        tool = json.loads((sim.flash_dir / "calibration.json").read_text())["tool_mm"]
        misses = tip_misses(sim, board_path)
    report("calibrate --tcp (true tool 4 / 12 / 25 mm): fitted %s mm; targets miss the true tip by %s mm"
           % (" / ".join("%.2f" % v for v in tool), " ".join("%.2f" % m for m in misses)))
    assert tool == pytest.approx(TRUE_TOOL, abs=0.5)
    assert max(misses) < 0.5
    # The screen says which joint is jogged and where the tip is.
    text = out.getvalue()
    assert "jogging 1 base" in text and "tip 2" in text


def test_flange_pose_takes_out_the_solvers_own_tool():
    """One flange for one pose, whatever tool the solver carries: t is absolute."""
    with_tool = boardlib.load(str(BOARDS / "sim_arm5_tool.json")).solver
    bare = boardlib.load(str(BOARDS / "sim_arm5.json")).solver
    for q in ([0.3, 0.4, 0.9, 0.2, 0.0], [-1.2, -0.5, 1.1, -0.7, 0.8]):
        r1, p1 = tcp.flange_pose(with_tool, q)
        r0, p0 = tcp.flange_pose(bare, q)
        assert p1 == pytest.approx(p0, abs=1e-9) and r1 == pytest.approx(r0, abs=1e-12)
        # ...and the solver's tip is that flange plus the tool in its frame.
        assert with_tool.fk(q, [0.0] * 4)[:3] == pytest.approx(list(p0 + r0 @ np.array(TRUE_TOOL)), abs=1e-9)


def dated_calibration(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"date": "2026-12-04T03:10:00Z", "joints": [{"offset_deg": -85}, {}]}))
    return path


def test_restarting_the_simulator_keeps_its_calibration(micropython, tmp_path):
    flash = tmp_path / "flash"
    with Simulator(BOARDS / "sim_planar.json", flash_dir=flash, calibration=dated_calibration(tmp_path)) as sim:
        assert sim.request("where")[-1].startswith("ok")
    # Like `armctl sim --flash F --board B` again: a deploy of the same board keeps it too.
    with Simulator(BOARDS / "sim_planar.json", flash_dir=flash) as sim:
        assert sim.request("where")[-1].startswith("ok")
    assert json.loads((flash / "calibration.json").read_text())["date"] == "2026-12-04T03:10:00Z"
    with Simulator(BOARDS / "sim_planar.json", flash_dir=flash, reset_calibration=True) as sim:
        assert sim.request("where")[-1].startswith("ok")
    assert not (flash / "calibration.json").exists()


def test_the_board_says_which_calibration_it_runs(micropython, tmp_path):
    with Simulator(BOARDS / "sim_planar.json", calibration=dated_calibration(tmp_path)) as sim:
        banner = sim.readline()
        info = sim.request("info")[-1]
    assert "calibration 2026-12-04T03:10:00Z" in banner and " calibration=2026-12-04T03:10:00Z " in info
    with Simulator(BOARDS / "sim_planar.json") as sim:
        banner = sim.readline()
        info = sim.request("info")[-1]
    assert "calibration none" in banner and " calibration=none " in info


def test_a_calibration_without_a_date_is_reported_undated(micropython, tmp_path):
    calibration = tmp_path / "c.json"
    calibration.write_text(json.dumps({"date": "two words", "joints": [{}, {}]}))
    with Simulator(BOARDS / "sim_planar.json", calibration=calibration) as sim:
        assert " calibration=undated " in sim.request("info")[-1]


def test_sim_command_has_reset_calibration():
    from armctl.commands import sim as sim_command
    parser = argparse.ArgumentParser()
    sim_command.add_arguments(parser)
    assert parser.parse_args(["--reset-calibration"]).reset_calibration is True
    assert parser.parse_args([]).reset_calibration is False


def threads_taking_ctrl_c(pid):
    """The threads of process pid, other than its main thread, that do not block SIGINT
    (Linux's /proc/PID/task/TID/status, SigBlk: a hexadecimal mask, bit N-1 for signal N;
    None where there is no /proc to read them from)."""
    import os
    if not os.path.isdir("/proc/%d/task" % pid):
        return None
    taking = []
    for tid in os.listdir("/proc/%d/task" % pid):
        if int(tid) == pid:
            continue
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            blocked = int(f.read().split("SigBlk:")[1].split()[0], 16)
        if not blocked & (1 << (signal.SIGINT - 1)):
            taking.append(int(tid))
    return taking


def test_ctrl_c_says_interrupted_on_one_line(micropython, tmp_path):
    with Simulator(BOARDS / "sim_arm5.json", pty=True) as sim:
        term = OnATerminal([sys.executable, "-m", "armctl.cli", "calibrate", "--port", sim.port,
                            "--board", str(BOARDS / "sim_arm5.json"), "--joints", "5",
                            "--save", str(tmp_path / "cal.json")])
        try:
            term.until(b"to +0 deg (now 1500 us), then press Enter\r\n")      # the whole line shown
            # The kernel gives a process's SIGINT to any thread that does not block it. Given
            # to a helper thread (numpy's BLAS starts one), it never woke the main thread from
            # its read of the terminal, and the command waited for a key: every thread but
            # the main one must block it.
            assert threads_taking_ctrl_c(term.proc.pid) in ([], None)
            # What Ctrl-C on its own terminal does (this pty is not its controlling terminal).
            term.proc.send_signal(signal.SIGINT)
            code = term.finish()
        finally:
            term.close()
    assert code == 130
    lines = [line.strip() for line in term.screen.decode().splitlines()]
    assert "armctl calibrate: interrupted (Ctrl-C); nothing was written to the board" in lines
    assert "armctl calibrate:" not in lines


def test_the_result_is_shown_against_the_calibration_in_force_before_it_is_written(micropython, tmp_path):
    earlier = {"date": "2026-01-01T00:00:00Z", "version": 1, "board": "sim_arm5",
               "joints": [{"offset_deg": 0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500}] * 5,
               "residuals_us": {"wrist_roll": [0.0, 0.0]}}
    path = tmp_path / "earlier.json"
    path.write_text(json.dumps(earlier))
    with Simulator(BOARDS / "sim_arm5.json", pty=True, calibration=path) as sim:
        # wrist_roll: Enter at 0 deg, then 10 us less than the board's at +90 deg.
        keys = iter(["\n", "a", "\n"])
        code, out, err = run(args_for(sim, BOARDS / "sim_arm5.json", tmp_path, joints=[5]),
                             type("Keys", (), {"read": lambda self, task: next(keys)})())
        assert code == cli.EXIT_OK, out + err
        on_flash = json.loads((sim.flash_dir / "calibration.json").read_text())
        backup = json.loads((sim.flash_dir / "calibration.json.bak").read_text())
        with Link(sim.port, timeout=10) as link:
            info = link.request("info").final
    assert backup == earlier
    # 657 us over pi/2 rad: 418.256 us/rad against 424.448 in force.
    assert on_flash["joints"][4]["us_per_rad"] == pytest.approx(657 / (math.pi / 2), abs=1e-3)
    shown = out.index("in force:")
    assert shown < out.index("writing calibration.json")
    row = next(line for line in out[shown:].splitlines() if line.strip().startswith("wrist_roll"))
    assert "424.448" in row and "%.3f" % (657 / (math.pi / 2)) in row
    assert "(unchanged)" in next(line for line in out[shown:].splitlines() if line.strip().startswith("base"))
    # The stamp is the new file's, not carried forward; the board says it runs it.
    assert on_flash["date"] != earlier["date"] and " calibration=%s " % on_flash["date"] in info
    assert "kept date" not in out and "kept residuals_us" not in out


class LooksAndJogs:
    """--verify's person: jogs the joint (degrees) until the camera shows it at the pose, to
    within half a microsecond's turn (0.07 deg), the finest a pulse can place it."""

    def __init__(self, sim):
        self.sim = sim
        self.keys = 0

    def read(self, task):
        self.keys += 1
        assert self.keys < 500, "the joint never reached the pose"
        return key_toward(task.pose_deg - self.sim.camera.joints(self.sim.pulses())[task.joint] / RAD, 10, 1, 0.07)


def verify_args(sim, board_path, joints):
    return argparse.Namespace(port=sim.port, board=str(board_path), joints=joints, poses=None, verify=True,
                              measure=False, save=None, baud=115200, fresh=False)


@pytest.mark.parametrize("calibrated", [False, True])
def test_verify_reports_the_error_of_the_calibration_in_force_and_writes_nothing(micropython, tmp_path,
                                                                                 calibrated, report):
    """The true shoulder is 7 deg off: uncalibrated, the board must command 7 deg more than the
    pose to get there (the error); with the true map as calibration, the error is the pulse's
    own step at most."""
    board_path = narrowed_board(tmp_path)
    truth = write_truth(tmp_path)
    with Simulator(board_path, pty=True, truth=truth, calibration=truth if calibrated else None) as sim:
        before = sorted(p.name for p in sim.flash_dir.iterdir())
        code, out, err = run(verify_args(sim, board_path, [2, 4]), LooksAndJogs(sim))
        assert code == cli.EXIT_OK, out + err
        after = sorted(p.name for p in sim.flash_dir.iterdir())
    errors = [float(line.rsplit("error ", 1)[1].split()[0])
              for line in out.splitlines() if ": the board commands" in line]
    assert len(errors) == 4                              # shoulder and wrist pitch at -45 and +45 deg
    report("calibrate --verify, %s: errors %s deg (shoulder -45 +45, wrist_pitch -45 +45)"
           % ("true map in force" if calibrated else "board file in force", " ".join("%+.2f" % e for e in errors)))
    if calibrated:
        assert max(map(abs, errors)) <= 0.15
    else:
        # Shoulder: 7 deg at both poses. Wrist pitch: the board's pulse for q, 424.448 us/rad,
        # turns a servo of 445.67 us/rad by q / 1.05, so reaching +-45 deg takes +-47.25 deg:
        # an error of +-2.25 deg (measured by 0.1 deg jogs, to half a microsecond's turn).
        assert errors[:2] == pytest.approx([7.0, 7.0], abs=0.15)
        assert errors[2:] == pytest.approx([-2.25, 2.25], abs=0.15)
    assert "nothing was written" in out
    assert after == before and not list(tmp_path.glob("calibration-*.json"))


def test_the_camera_command_shows_the_physical_arm(micropython, tmp_path, capsys):
    """`armctl sim --camera`: the joints through the true map. At home the board sends the
    shoulder 1500 us, which the true map (7 deg off) reads as -7 deg."""
    flash = tmp_path / "flash"
    truth = write_truth(tmp_path)
    with Simulator(BOARDS / "sim_arm5.json", flash_dir=flash) as sim:
        assert sim.request("where")[-1].startswith("ok")
        assert cli.main(["sim", "--camera", "--flash", str(flash), "--truth", str(truth)]) == cli.EXIT_OK
    shown = capsys.readouterr().out.splitlines()
    # Elbow reversed: the board's +90 deg home, 2167 us, is -667 us / 424.448 us/rad physically.
    elbow = -667 / 424.448
    assert shown[0] == "joints 0.00 -7.00 %.2f 0.00 0.00 deg" % (elbow / RAD)
    # The arm in its plane (docs/KINEMATICS.md): the upper arm 7 deg back from vertical, the
    # forearm and tool (l2 + l3) straight on from it at -7 deg + elbow.
    a2, a3 = -7 * RAD, -7 * RAD + elbow
    x = 126.14 * math.sin(a2) + (126.14 + 150.6) * math.sin(a3)
    z = 189.0 + 126.14 * math.cos(a2) + (126.14 + 150.6) * math.cos(a3)
    assert shown[1] == "tip %.2f 0.00 %.2f mm" % (x, z)


def test_q_at_the_shown_result_keeps_the_calibration_in_force(micropython, tmp_path):
    """On a terminal: the result is shown, q keeps what the board has, the board runs on."""
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"date": "2026-01-01T00:00:00Z", "joints": [{}] * 5}))
    with Simulator(BOARDS / "sim_arm5.json", pty=True, calibration=earlier) as sim:
        term = OnATerminal([sys.executable, "-m", "armctl.cli", "calibrate", "--port", sim.port,
                            "--board", str(BOARDS / "sim_arm5.json"), "--joints", "5",
                            "--save", str(tmp_path / "cal.json")])
        try:
            term.until(b"to +0 deg (now 1500 us)")
            term.type(b"\r")
            term.until(b"to +90 deg (now 2167 us)")
            term.type(b"a")
            term.until(b"wrist_roll 2157 us")
            term.type(b"\r")
            term.until(b"Enter writes it to the board")
            term.type(b"q")
            assert term.finish() == cli.EXIT_REFUSED
        finally:
            term.close()
        with Link(sim.port, timeout=10) as link:
            info = link.request("info").final
        assert (sim.flash_dir / "calibration.json").read_text() == earlier.read_text()
        assert not (sim.flash_dir / "calibration.json.bak").exists()
    assert b"kept the calibration in force; nothing written" in term.screen
    assert " calibration=2026-01-01T00:00:00Z " in info
    assert not (tmp_path / "cal.json").exists() and (tmp_path / "cal.json.progress.json").exists()


def test_the_last_check_names_no_temporary_file():
    board = boardlib.load(str(BOARDS / "sim_arm5.json"))
    fit = {"offset_deg": 7.0, "sign": 1, "us_per_rad": 424.448, "center_us": 1500}
    with pytest.raises(boardlib.BoardError) as refused:
        calibrate_store.check_calibration(BOARDS / "sim_arm5.json", calibrate_store.calibration_file(board, {1: fit}))
    assert str(refused.value).startswith(str(BOARDS / "sim_arm5.json") + "+the new calibration.joints[1].max_deg")
    # No other path than the board file's (a temporary folder was named here once).
    assert str(refused.value).count("/") == str(BOARDS / "sim_arm5.json").count("/")
