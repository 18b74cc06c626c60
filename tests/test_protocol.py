# SPDX-License-Identifier: MIT
"""The line protocol (firmware/PROTOCOL.md) as the MicroPython simulator speaks it.

Every request goes to the unmodified firmware on the real MicroPython Unix
port over a pipe. Expected numbers come from hand calculation (docs/KINEMATICS.md's
worked example, FK written out below) or from the servo formula, never from
the firmware's own output.
"""

import json
from math import cos, radians, sin

import pytest

from armctl.sim import Simulator
from conftest import BOARDS

ARM5 = BOARDS / "sim_arm5.json"
PLANAR = BOARDS / "sim_planar.json"
L1, L2, L3, BASE = 126.14, 126.14, 150.6, 189.0
US_PER_RAD = 424.448


def arm5_fk(q_deg):
    """docs/KINEMATICS.md: angles from vertical, J2..J4 pitch about horizontal axes, J1 yaw."""
    q1, a2 = radians(q_deg[0]), radians(q_deg[1])
    a3 = a2 + radians(q_deg[2])
    a4 = a3 + radians(q_deg[3])
    s = L1 * sin(a2) + L2 * sin(a3) + L3 * sin(a4)
    return s * cos(q1), s * sin(q1), BASE + L1 * cos(a2) + L2 * cos(a3) + L3 * cos(a4)


def final(lines):
    return lines[-1]


def words(line):
    return line.split()


def numbers(line):
    """The positional numbers of a final line (after ok and the status word)."""
    out = []
    for w in line.split()[1:]:
        if "=" in w:
            continue
        try:
            out.append(float(w))
        except ValueError:
            pass
    return out


def fields(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


@pytest.fixture(scope="module")
def arm5(micropython):
    with Simulator(ARM5) as sim:
        yield sim


@pytest.fixture(scope="module")
def planar(micropython):
    with Simulator(PLANAR) as sim:
        yield sim


def test_spec_worked_example_both_branches(arm5):
    # docs/KINEMATICS.md: tip (157.3, 0, 342.4) mm, tool horizontal.
    up = final(arm5.request("ik 157.3 0 342.4 90"))
    assert words(up)[:2] == ["ok", "OK"]
    q = numbers(up)
    assert len(q) == 5
    for got, want in zip(q[1:4], (-50.024, 105.019, 35.004)):
        assert abs(got - want) < 0.02
    assert fields(up)["elbow"] == "up"
    assert float(fields(up)["err_mm"]) < 0.001
    # The other branch needs wrist 140 deg, past the 135 deg limit: the
    # preference falls back and says so.
    down = arm5.request("ik 157.3 0 342.4 90 elbow=down")
    assert down[0].startswith("# elbow down has no valid solution")
    assert numbers(final(down)) == q


def test_elbow_option_picks_the_branch(arm5):
    up = numbers(final(arm5.request("ik 200 0 300 90 elbow=up")))
    down = numbers(final(arm5.request("ik 200 0 300 90 elbow=DOWN")))
    assert up[2] > 0 > down[2]
    for q in (up, down):
        x, y, z = arm5_fk(q)
        assert abs(x - 200) < 0.01 and abs(y) < 0.01 and abs(z - 300) < 0.01
        assert abs(q[1] + q[2] + q[3] - 90) < 0.01      # tool pitch


@pytest.mark.parametrize("q, tool", [
    ((0, 0, 0, 0, 0), (0, 0, BASE + L1 + L2 + L3, 0)),
    ((0, 90, 0, 0, 0), (L1 + L2 + L3, 0, BASE, 90)),
    ((90, 90, 0, 0, 0), (0, L1 + L2 + L3, BASE, 90)),
    ((0, 90, -90, 0, 0), (L1, 0, BASE + L2 + L3, 0)),
    ((0, 0, 90, 90, 0), (L2, 0, BASE + L1 - L3, 180)),
])
def test_fk_hand_values(arm5, q, tool):
    reply = final(arm5.request("fk " + " ".join(map(str, q))))
    assert reply.startswith("ok ")
    got = numbers(reply)
    assert len(got) == 4
    for a, b in zip(got, tool):
        assert abs(a - b) < 0.002


def test_ik_fk_round_trip(arm5):
    for target in ((200, 50, 150, 180), (-120, 180, 250, 120), (100, -100, 400, 45)):
        reply = final(arm5.request("ik %g %g %g %g" % target))
        assert reply.startswith("ok "), reply
        back = numbers(final(arm5.request("fk " + " ".join("%.3f" % v for v in numbers(reply)))))
        for a, b in zip(back[:3], target[:3]):
            assert abs(a - b) < 0.05      # 0.0005 deg printed precision on ~400 mm of arm


@pytest.mark.parametrize("line, word", [
    ("ik 600 0 0 90", "TOO_FAR"),
    ("ik 200 0 200 90", "JOINT_LIMIT"),
    ("ik 1 2 3", "BAD_INPUT"),
    ("ik 1 2 3 4 5 6", "BAD_INPUT"),     # X Y Z PITCH [ROLL]: six is one too many
    ("ik nan 0 0 0", "BAD_INPUT"),
    ("ik inf 0 0 0", "BAD_INPUT"),
    ("ik -inf 0 0 0", "BAD_INPUT"),
    ("ik 1e999 0 0 0", "BAD_INPUT"),
    ("ik 0x10 0 0 0", "BAD_INPUT"),
    ("ik . 0 0 0", "BAD_INPUT"),
    ("ik 1_0 0 0 0", "BAD_INPUT"),
    ("ik 200 0 300 90 elbow=left", "BAD_INPUT"),
    ("ik 200 0 300 90 speed=3", "BAD_INPUT"),
    ("line 200 0 300 90 elbow=up", "BAD_INPUT"),
    ("joints 0 0 0 0", "BAD_INPUT"),
    ("joints 0 0 0 0 136", "JOINT_LIMIT"),
    ("servo 0 2501", "BAD_INPUT"),
    ("servo 0 499", "BAD_INPUT"),
    ("servo 9 1500", "BAD_INPUT"),
    ("servo 0.5 1500", "BAD_INPUT"),
    ("servo 5 2600", "BAD_INPUT"),
    ("grip", "BAD_INPUT"),
    ("grip sideways", "BAD_INPUT"),
    ("speed 0", "BAD_INPUT"),
    ("speed 0.5", "BAD_INPUT"),
    ("speed -5", "BAD_INPUT"),
    ("speed 91", "BAD_INPUT"),
    ("speed nan", "BAD_INPUT"),
    ("where now", "BAD_INPUT"),
    ("pick 1 2", "BAD_INPUT"),
    ("fly 1 2 3", "BAD_COMMAND"),
    ("ik\x01 1 2 3 4", "BAD_COMMAND"),
    ("\x1b[A", "BAD_COMMAND"),
    ("ik 1 2 3 4\x07", "BAD_COMMAND"),
])
def test_bad_requests_get_one_error_and_move_nothing(arm5, line, word):
    before = len(arm5.pulses())
    reply = arm5.request(line)
    assert len(reply) == 1
    assert words(reply[0])[:2] == ["error", word], reply
    assert len(arm5.pulses()) == before


def test_non_ascii_and_binary_bytes(arm5):
    for raw in (b"ik \xff\xfe 0 0", "ik 1 2 3 4\u00b0".encode(), b"\x00\x00", b"\xc3\x28"):
        reply = arm5.request(raw)
        assert len(reply) == 1 and reply[0].startswith("error BAD_COMMAND"), reply


def test_overlong_line_is_one_error_then_the_link_works(arm5):
    arm5.write(b"ik " + b"1" * 10000 + b"\n")
    assert arm5.readline() == "error BAD_COMMAND line too long (max 128 bytes)"
    assert final(arm5.request("speed")).startswith("ok ")
    # 128 bytes exactly still fits.
    line = "ik 157.3 0 342.4 90" + " " * (128 - 19)
    assert final(arm5.request(line)).startswith("ok OK")


def test_line_ends_and_empty_lines(arm5):
    arm5.write(b"speed\r\nspeed\rspeed\n\n")
    got = [arm5.readline() for _ in range(4)]
    assert got[:3] == ["ok 90.000"] * 3 and got[3] == "ok"
    assert final(arm5.request("  SPEED\t ")) == "ok 90.000"


def test_help_lists_every_command(arm5):
    reply = arm5.request("help")
    assert reply[-1] == "ok"
    listed = {line[2:].split()[0] for line in reply[:-1]}
    assert all(line.startswith("# ") for line in reply[:-1])
    assert listed >= {"ik", "fk", "move", "line", "joints", "servo", "where", "home",
                      "grip", "pick", "place", "speed", "help", "info", "jog", "relax", "unlock",
                      "progress", "echo", "?"}
    for command in listed:
        assert not final(arm5.request(command)).startswith("error BAD_COMMAND"), command
    assert final(arm5.request("home")).startswith("ok")       # `relax` turned the servos off


def test_info(arm5):
    f = fields(final(arm5.request("info")))
    assert f["name"] == "sim_arm5" and f["arm"] == "arm5" and f["gripper"] == "5"
    assert f["joints"].split(",") == ["base", "shoulder", "elbow", "wrist_pitch", "wrist_roll"]


def test_servo_raw_pulse_sets_the_joint_angle(arm5):
    assert final(arm5.request("home")).startswith("ok")
    reply = final(arm5.request("servo 1 1712"))
    q = numbers(reply)
    # The board's servo formula by hand: angle = (us - 1500) / us_per_rad.
    assert abs(q[1] - (1712 - 1500) / US_PER_RAD * 57.29577951) < 0.001
    pulses = arm5.pulses()
    assert pulses[-1][1:] == (1, 1712)
    assert final(arm5.request("servo 5 1234")) == "ok 5 1234"
    assert arm5.pulses()[-1][1:] == (5, 1234)
    assert fields(final(arm5.request("where")))["grip"] == "unknown"
    assert final(arm5.request("grip close")) == "ok closed"
    assert arm5.pulses()[-1][1:] == (5, 1900)
    assert fields(final(arm5.request("where")))["grip"] == "closed"


def test_move_reaches_the_target_and_where_agrees(arm5):
    reply = final(arm5.request("move 150 100 150 180"))
    assert words(reply)[:2] == ["ok", "OK"]
    f = fields(reply)
    assert abs(float(f["x"]) - 150) < 0.001 and abs(float(f["z"]) - 150) < 0.001
    assert abs(float(f["pitch"]) - 180) < 0.001
    x, y, z = arm5_fk(numbers(reply))
    assert abs(x - 150) < 0.01 and abs(y - 100) < 0.01 and abs(z - 150) < 0.01
    where = final(arm5.request("where"))
    assert numbers(where) == numbers(reply)
    assert final(arm5.request("move 150 100 150 180")).endswith("steps=0")


def test_joints_accept_what_the_solver_accepts_at_a_limit(arm5):
    # The solver counts an angle up to kinematics.LIMIT_EPS (1e-5 rad, 0.000573 deg)
    # past a limit as inside (float32 slack); `joints` takes the same angles back.
    # -135.0005 deg is 8.7e-6 rad past the wrist's -135 deg limit; its pulse rounds
    # to the window's 500 us edge (1500 - 424.448 * 2.35620 = 499.996).
    assert final(arm5.request("joints 0 0 90 -135.0005 0")).startswith("ok")
    reply = final(arm5.request("joints 0 0 90 -135.001 0"))      # 1.75e-5 rad past
    assert words(reply)[:2] == ["error", "JOINT_LIMIT"]
    assert "wrist_pitch" in reply
    assert numbers(final(arm5.request("where")))[3] == -135.0     # printed %.3f: unmoved
    assert final(arm5.request("joints 0 0 90 0 0")).startswith("ok")


def test_speed_sets_the_step_count(arm5):
    assert final(arm5.request("joints 0 0 0 0 0")).startswith("ok")
    assert final(arm5.request("speed 45")) == "ok 45.000"
    # 90 deg of elbow at 45 deg/s, accelerating at 360 deg/s^2 (the standard servo class):
    # 90 / 45 + 45 / 360 = 2.125 s, 107 steps of 20 ms (100 at constant speed); at 90 deg/s
    # 1 + 0.25 = 1.25 s, 63 steps (50).
    assert fields(final(arm5.request("joints 0 0 90 0 0")))["steps"] == "107"
    assert final(arm5.request("speed 90")) == "ok 90.000"
    assert fields(final(arm5.request("joints 0 0 0 0 0")))["steps"] == "63"


def test_planar_commands(planar):
    reply = final(planar.request("ik 100 80"))
    assert words(reply)[:2] == ["ok", "OK"]
    t1, t2 = (radians(v) for v in numbers(reply))
    x = 100 * cos(t1) + 80 * cos(t1 + t2)
    y = 100 * sin(t1) + 80 * sin(t1 + t2)
    assert abs(x - 100) < 0.01 and abs(y - 80) < 0.01
    assert final(planar.request("ik 180 0")).startswith("ok SINGULAR")
    assert final(planar.request("ik 181 0")).startswith("error TOO_FAR")
    assert final(planar.request("ik 0 0")).startswith("error ")
    assert final(planar.request("ik 1 2 3 4")).startswith("error BAD_INPUT")
    assert final(planar.request("fk 90 -90")) == "ok 80.000 100.000"
    assert final(planar.request("pick 100 50")).startswith("error BAD_COMMAND no gripper")
    assert final(planar.request("grip open")).startswith("error BAD_COMMAND no gripper")
    assert fields(final(planar.request("where")))["grip"] == "none"


def test_bad_board_answers_every_request_with_its_reason(micropython, tmp_path):
    data = json.loads(ARM5.read_text())
    data["joints"][1]["min_us"] = 1200       # limit -135 deg needs 500 us
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    with Simulator(broken, flash_dir=tmp_path / "flash") as sim:
        first = sim.readline()
        assert first.startswith("error BAD_BOARD") and "joints[1]" in first and "min_deg" in first
        reply = sim.request("ik 157.3 0 342.4 90")
        assert len(reply) == 1 and reply[0].startswith("error BAD_BOARD")
        assert sim.request("help")[-1] == "ok"
        assert sim.pulses() == []
    (tmp_path / "flash2").mkdir()
    (tmp_path / "bad.json").write_text("{not json")
    with Simulator(tmp_path / "bad.json", flash_dir=tmp_path / "flash2") as sim:
        assert sim.readline().startswith("error BAD_BOARD")
        assert final(sim.request("where")).startswith("error BAD_BOARD")


def test_calibration_file_in_flash_is_applied(micropython, tmp_path):
    cal = tmp_path / "cal.json"
    cal.write_text(json.dumps({"joints": [{"center_us": 1520, "us_per_rad": 400}, {}, {}, {}, {}]}))
    with Simulator(ARM5, flash_dir=tmp_path / "flash", calibration=cal) as sim:
        assert final(sim.request("where")).startswith("ok OK")
        # Boot parks at home (base 0 deg): the calibrated centre.
        assert [p[2] for p in sim.pulses() if p[1] == 0] == [1520]
        reply = final(sim.request("joints 90 0 90 0 0"))
        assert sim.pulses()[-1] == (sim.pulses()[-1][0], 0, round(1520 + radians(90) * 400))
        assert numbers(reply)[0] == 90.0
    # A calibration that would push a limit outside its pulse window is refused.
    cal.write_text(json.dumps({"joints": [{"offset_deg": 10}, {}, {}, {}, {}]}))
    with Simulator(ARM5, flash_dir=tmp_path / "flash3", calibration=cal) as sim:
        first = sim.readline()
        assert first.startswith("error BAD_BOARD") and "joints[0].max_deg" in first


def test_cpython_imports_the_same_protocol():
    # The host may drive a Protocol directly (no MicroPython): one implementation.
    from armfw import board, protocol
    from armfw.gripper import Gripper
    from armfw.motion import ArmController
    from armfw.simservo import SimServo
    b = board.load(str(ARM5))
    driver = SimServo(b.driver)
    arm = ArmController(b, driver, Gripper(driver, b.gripper))
    out = []
    p = protocol.Protocol(arm, out.append)
    for line in (b"ik 157.3 0 342.4 90", b"bogus"):
        p.handle(line)
    assert out[0].startswith("ok OK 0.000 -50.0") and out[1].startswith("error BAD_COMMAND")


def parked_protocol():
    """(arm, protocol, replies): CPython's Protocol on the 5-joint arm, parked at home; the
    replies written go into the list."""
    from armfw import board, protocol
    from armfw.motion import ArmController
    from armfw.simservo import SimServo
    b = board.load(str(ARM5))
    arm = ArmController(b, SimServo(b.driver))
    arm.park()
    out = []
    return arm, protocol.Protocol(arm, out.append), out


def test_check_mode_makes_no_g_code_face():
    """`check on` and `check off` without G-code make no G-code face (armfw.gcode stays
    unloaded on a board); the real pose and alarm come back at `check off`."""
    arm, p, out = parked_protocol()
    p.machine.lock("aborted")
    real = list(arm.q)
    for line in (b"check on", b"unlock", b"joints 10 20 80 0 0", b"check off"):
        p.handle(line)
        if p.machine.moving:
            while arm.step() >= 0:
                pass
            p.motion_done()
    assert out[:2] == ["ok check on", "ok"] and out[-1] == "ok check off", out
    assert len(out) == 4 and out[2].startswith("ok OK 10.000 20.000 80.000"), out
    assert p.gcode is None
    assert arm.q == real and p.machine.alarm and p.machine.alarm_reason == "aborted"


def test_move_solves_its_target_once_and_refuses_with_the_ik_words():
    """`move` on CPython's Protocol: one IK for the target (the check pass's, not a second
    one to answer), the motion it starts ends where the hand-calculated FK puts the
    target; a target no pose reaches is refused in the ik command's words."""
    arm, p, out = parked_protocol()
    solver = arm.board.solver
    solves = []
    solve = solver.ik

    def counted(*args):
        solves.append(args[0][:])
        return solve(*args)

    solver.ik = counted
    p.handle(b"move 200 50 150 150")
    assert p.machine.moving and out == [] and len(solves) == 1
    while arm.step() >= 0:
        pass
    p.motion_done()
    q = numbers(out[-1])[:5]
    assert all(abs(a - w) < 0.05 for a, w in zip(arm5_fk(q), (200, 50, 150)))
    del solves[:]
    p.handle(b"move 900 0 150 90")
    assert out[-1] == "error TOO_FAR no solution for 900 0 150 90" and len(solves) == 1
