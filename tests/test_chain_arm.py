# SPDX-License-Identifier: MIT
"""Chain arms on the board (armfw.chain): FK against Robotics Toolbox, under CPython and MicroPython.

The shared vectors (tests/vectors/fk/chain_al5d.json) hold the AL5D's joint
origins and tool tip for 217 poses as Robotics Toolbox for Python computes
them from the URDF (tests/derive_chain_vectors.py). The firmware's chain FK
(board file boards/sim_al5d.json, imported from that URDF by armctl) must
reproduce them under both interpreters, the host's numpy twin
(armctl.chain.from_board) must agree with the firmware, and with every number
rounded to float32 (as on an RP2040 or ESP32) the FK stays within float32-sized
errors. The joint path buffer and the joint-space commands are exercised here
too, on the chain arm, in-process.
"""

import json
import math
import subprocess

import numpy as np
import pytest

import derive_chain_vectors as derive
from armctl import chain as chain_mod
from armctl import upy
from armfw import board, chain as fw_chain, motion, protocol, status
from conftest import BOARDS, MP_SCRIPTS, ROOT
from test_float32 import F32, Libm32

AL5D = BOARDS / "sim_al5d.json"
DOC = json.loads((derive.VECTORS / derive.NAME).read_text())
FK_TOL_MM = 1e-6


def _parse(lines):
    """{index: (tip (3,), origins (n, 3))} from chain_fk.py's lines."""
    out = {}
    assert lines[-1] == "done %d" % len(DOC["cases"]), lines[-3:]
    for line in lines[:-1]:
        head, _, rest = line.partition("|")
        k, *tip = head.split()
        out[int(k)] = (np.array(tip, float), np.array(rest.split(), float).reshape(-1, 3))
    return out


def _check(results):
    worst = 0.0
    for k, case in enumerate(DOC["cases"]):
        tip, origins = results[k]
        worst = max(worst, float(np.max(np.abs(tip - case["tip_mm"]))),
                    float(np.max(np.abs(origins - case["origins_mm"]))))
    return worst


def test_vectors_are_what_robotics_toolbox_says():
    derived = json.loads(derive.render(derive.build()))
    assert len(derived["cases"]) == len(DOC["cases"]) == 217
    for a, b in zip(derived["cases"], DOC["cases"]):
        assert a["q_deg"] == pytest.approx(b["q_deg"], abs=1e-9)
        assert np.allclose(a["origins_mm"], b["origins_mm"], atol=1e-8)


def test_firmware_chain_fk_matches_robotics_toolbox_in_cpython_and_micropython(micropython, report):
    script = MP_SCRIPTS / "chain_fk.py"
    spec = __import__("importlib.util").util.spec_from_file_location("chain_fk", script)
    module = __import__("importlib.util").util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cpython = _parse(module.lines(str(derive.VECTORS / derive.NAME), str(BOARDS)) + ["done %d" % len(DOC["cases"])])
    out = subprocess.run([micropython, str(script), str(derive.VECTORS / derive.NAME), str(BOARDS)],
                         capture_output=True, text=True, timeout=120, env=upy.env(), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    mp = _parse(out.stdout.split("\n")[:-1])
    worst_cp = _check(cpython)
    worst_mp = _check(mp)
    report("chain FK (AL5D, %d poses) vs Robotics Toolbox: CPython %.1e mm, MicroPython %.1e mm"
           % (len(DOC["cases"]), worst_cp, worst_mp))
    assert worst_cp < FK_TOL_MM and worst_mp < FK_TOL_MM


def test_numpy_twin_agrees_with_the_firmware_on_the_vectors():
    b = board.load(str(AL5D))
    c = chain_mod.from_board(b)
    q = np.radians([case["q_deg"] for case in DOC["cases"]])
    points = c.joint_points(q)
    axes = np.swapaxes(c.jacobian(q)[0][:, 3:, :], 1, 2)     # angular rows: world joint axes
    tip = [0.0] * 3
    for k in range(len(q)):
        b.solver.fk(list(q[k]), tip)
        assert np.allclose(points[k, -1], tip, atol=1e-9, rtol=0)
        assert np.allclose(points[k, :-1].ravel(), b.solver.origins[:3 * b.solver.n], atol=1e-9, rtol=0)
        assert np.allclose(axes[k].ravel(), b.solver.joint_axes, atol=1e-12, rtol=0)
    # The tool direction too: the firmware's and the twin's end frames agree.
    b.solver.fk(list(q[5]), tip)
    assert np.allclose(c.tool_direction(q[5]), b.solver.direction, atol=1e-12)


def test_chain_fk_in_float32_stays_within_float32_errors(monkeypatch, report):
    libm = Libm32(seed=17)
    libm.install(monkeypatch)
    for name in ("sin", "cos"):
        monkeypatch.setattr(fw_chain, name, _wrapped(libm, name))
    monkeypatch.setattr(fw_chain, "sqrt", lambda v: F32(math.sqrt(v)))
    monkeypatch.setattr(fw_chain, "DEG", F32(math.pi) / F32(180.0))
    data = json.loads(AL5D.read_text(), parse_float=F32)
    arm = board.from_dict(data).solver
    assert isinstance(arm.fixed[4], F32) and isinstance(arm.xyz[3], F32)
    tip = [0.0] * 3
    worst = 0.0
    for case in DOC["cases"]:
        q = [F32(math.radians(a)) for a in case["q_deg"]]
        arm.fk(q, tip)
        assert all(isinstance(v, F32) and math.isfinite(v) for v in tip)
        worst = max(worst, max(abs(a - b) for a, b in zip(tip, case["tip_mm"])))
    report("chain FK in emulated float32 (AL5D): worst %.1e mm from Robotics Toolbox" % worst)
    # ~30 rounded operations on a 322 mm reach: a few float32 ulps (2e-5 mm each) of error.
    assert worst < 1e-3


def _wrapped(libm, name):
    def f(v):
        return libm.nudge(getattr(math, name)(v))
    return f


class _Driver:
    def __init__(self):
        self.sent = []

    def set_us(self, channel, us):
        self.sent.append((channel, us))

    def sleep_ms(self, ms):
        pass


def _protocol(b=None):
    """A protocol on a chain arm (default the AL5D) whose servos have been sent home (the pose is
    known), no pulse recorded."""
    controller = motion.ArmController(b or board.load(str(AL5D)), _Driver())
    replies = []
    p = protocol.Protocol(controller, replies.append)
    assert _ask(p, replies, "home").startswith("ok OK")
    controller.driver.sent.clear()
    return p, controller, replies


def _ask(p, replies, line):
    """The final reply to line; a motion it starts is stepped to its end, as the console's session does."""
    p.handle(line.encode())
    while p.machine.moving:
        if p.controller.step() < 0:
            p.motion_done()
    return replies[-1]


def test_joint_space_commands_drive_a_chain_arm():
    p, controller, replies = _protocol()
    sent = controller.driver.sent
    assert _ask(p, replies, "info").startswith("ok name=sim_al5d arm=chain joints=j1,j2,j3,j4")
    reply = _ask(p, replies, "joints 20 30 -40 10")
    assert reply.startswith("ok OK 20.000 30.000 -40.000 10.000 x=")
    case = [c for c in DOC["cases"] if c["q_deg"] == [0.0, 0.0, 0.0, 0.0]][0]
    assert _ask(p, replies, "fk 0 0 0 0") == "ok " + " ".join("%.3f" % v for v in case["tip_mm"]).replace(
        "-0.000", "0.000")
    assert _ask(p, replies, "home").startswith("ok OK 0.000 0.000 0.000 0.000 x=175.510 y=0.000 z=215.370")
    # servo: a pulse us on channel 1 puts j2 at (us - 1500) / 424.448 rad (the hand formula).
    us = 1574
    assert _ask(p, replies, "servo 1 %d" % us).startswith(
        "ok OK 0.000 %.3f 0.000 0.000" % math.degrees((us - 1500) / 424.448))
    assert sent[-1] == (1, us)
    for request in ("ik 100 0 100", "move 100 0 100", "line 100 0 100"):
        assert _ask(p, replies, request).startswith("error %s " % status.NO_CLOSED_FORM)


def test_path_runs_through_every_waypoint_as_one_motion():
    p, controller, replies = _protocol()
    poses = []
    real_step = controller.step

    def record():
        wait = real_step()
        if wait >= 0:
            poses.append([round(math.degrees(a), 3) for a in controller.q])
        return wait
    controller.step = record
    waypoints = [[10, 0, 0, 0], [10, 20, 0, 0], [10, 20, -30, 0], [0, 0, 0, 5]]
    assert _ask(p, replies, "path clear") == "ok 0"
    for k, w in enumerate(waypoints):
        assert _ask(p, replies, "path add " + " ".join(str(v) for v in w)) == "ok %d" % (k + 1)
    reply = _ask(p, replies, "path run")
    assert reply.startswith("ok OK 0.000 0.000 0.000 5.000")
    for w in waypoints:
        assert any(pose == pytest.approx(w, abs=1e-3) for pose in poses), w
    # Speed limit: 90 deg/s, 20 ms steps: no joint turns more than 1.8 deg per step.
    previous = [0.0] * 4
    for pose in poses:
        assert max(abs(a - b) for a, b in zip(pose, previous)) <= 1.8 + 1e-3
        previous = pose
    steps = int(reply.split("steps=")[1])
    assert steps == len(poses)
    assert _ask(p, replies, "path") == "ok 0"       # a path runs once


def test_path_refuses_what_it_cannot_run_and_moves_nothing():
    p, controller, replies = _protocol()
    sent = controller.driver.sent
    assert _ask(p, replies, "path add 95 0 0 0").startswith("error JOINT_LIMIT j1 95.000 deg is outside")
    assert _ask(p, replies, "path add 1 2 3").startswith("error BAD_INPUT expected 4 numbers")
    assert _ask(p, replies, "path add nan 0 0 0").startswith("error BAD_INPUT")
    assert _ask(p, replies, "path run").startswith("error BAD_INPUT the path is empty")
    for k in range(motion.MAX_WAYPOINTS):
        assert _ask(p, replies, "path add %d 0 0 0" % (k % 2)) == "ok %d" % (k + 1)
    assert _ask(p, replies, "path add 0 0 0 0").startswith("error BAD_INPUT path full (128 waypoints)")
    assert sent == []
    assert _ask(p, replies, "path clear") == "ok 0"
    assert _ask(p, replies, "path run").startswith("error BAD_INPUT")
    assert sent == []


def test_path_pulse_windows_are_checked_before_the_first_step(tmp_path):
    # A servo window narrower than the joint limits' pulses: the loader refuses
    # such a board, so narrow it after loading to reach the path's own check.
    p, controller, replies = _protocol()
    controller.servos.max_us[2] = 1600
    sent = controller.driver.sent
    reply = _ask(p, replies, "path add 0 0 30 0")
    assert reply.startswith("error JOINT_LIMIT waypoint 1 not added") and "pulse outside" in reply
    assert _ask(p, replies, "path add 0 0 10 0") == "ok 1"
    assert sent == []


def test_chain_board_checks(tmp_path):
    data = json.loads(AL5D.read_text())

    def refused(change, words):
        d = json.loads(json.dumps(data))
        change(d)
        with pytest.raises(board.BoardError) as e:
            board.from_dict(d, "b")
        assert words in str(e.value), str(e.value)

    refused(lambda d: d["joints"][1].__setitem__("axis", [0, 0, 0]), "b.joints[1].axis: must not be zero")
    refused(lambda d: d["joints"][1].pop("axis"), "b.joints[1].axis: missing")
    refused(lambda d: d["joints"][0].__setitem__("xyz_mm", [0, 1]), "b.joints[0].xyz_mm: must be three numbers")
    refused(lambda d: d["joints"][0].__setitem__("rpy_deg", [0, "x", 0]), "must be three finite numbers")
    refused(lambda d: d["arm"].__setitem__("l1_mm", 100), "b.arm.l1_mm: not a chain setting")
    refused(lambda d: d.__setitem__("joints", d["joints"] * 3), "a chain arm has 1..8 joints, got 12")
    refused(lambda d: d["joints"][2].__setitem__("max_deg", 140), "b.joints[2].max_deg")


def test_zones_check_every_link_of_a_chain_arm():
    """A chain arm's links (joint origin to joint origin, the last to the tip) go through armfw.zones."""
    data = json.loads(AL5D.read_text())
    # armctl board import's table and base column.
    assert data["workspace"]["floor"] == {"height_mm": 0.0, "clearance_mm": 5.0}
    assert [z["name"] for z in data["workspace"]["zones"]] == ["base"]
    del data["workspace"]
    assert board.from_dict(data).solver.zones.n_zones == 0      # no default zones for a chain
    data["workspace"] = {"floor": {"height_mm": 0.0, "clearance_mm": 5.0}, "link_radius_mm": {"link4": 10.0}}
    b = board.from_dict(data)
    z = b.solver.zones
    assert z.link_names == ("link1", "link2", "link3", "link4") and z.radii == [10.0] * 4
    case = DOC["cases"][7]
    q = [math.radians(a) for a in case["q_deg"]]
    assert np.allclose(np.reshape(b.solver.joint_points(q), (-1, 3)), case["origins_mm"] + [case["tip_mm"]], atol=1e-6)
    # Reaching down past the table (Robotics Toolbox's tip below 5 mm clearance + 10 mm radius).
    low = min(DOC["cases"], key=lambda c: c["tip_mm"][2])
    assert low["tip_mm"][2] < 15.0
    high = [c for c in DOC["cases"] if min(o[2] for o in c["origins_mm"]) > 30.0][0]
    p, controller, replies = _protocol(b)
    p.handle(("path add " + " ".join("%.6f" % a for a in low["q_deg"])).encode())
    assert replies[-1].startswith("error COLLISION waypoint 1 not added"), replies[-1]
    p.handle(("path add " + " ".join("%.6f" % a for a in high["q_deg"])).encode())
    assert replies[-1] == "ok 1"
    assert controller.driver.sent == []


def test_armctl_solve_takes_a_chain_board(capsys):
    from armctl import cli
    b = board.load(str(AL5D))
    target = b.solver.fk([math.radians(a) for a in (15.0, 20.0, -30.0, 0.0)], [0.0] * 3)
    assert cli.main(["solve", "--board", "sim_al5d"] + ["%.6f" % v for v in target]) == 0
    out = capsys.readouterr().out
    assert "method: dls (numerical, position mode)" in out
    assert float(out.split("fk_error: ")[1].split()[0]) < 0.01
    assert cli.main(["solve", "--board", "sim_al5d", "--method", "analytic", "100", "0", "100"]) == cli.EXIT_USAGE
    assert "a chain arm has no analytic solver" in capsys.readouterr().err


@pytest.mark.parametrize("argv, words", [
    (["demo", "--board", "sim_al5d"], "a chain arm has none"),
    (["plot", "workspace", "--board", "sim_al5d"], "a chain arm has none"),
    (["calibrate", "--port", "/dev/null", "--board", "sim_al5d", "--measure"], "a chain arm's geometry"),
])
def test_commands_that_need_the_boards_own_ik_say_so(argv, words, capsys, tmp_path):
    from armctl import cli
    assert cli.main(argv) == cli.EXIT_USAGE
    assert words in capsys.readouterr().err
