# SPDX-License-Identifier: MIT
"""Measured angles and teach-by-hand on a bus servo board: `where` and `?` report what
the servos read, `pose save` and `path record` keep the pose a person moved the arm to,
`engage` takes the torque back there, `servo read` answers raw ticks.

The servos are fake STS3215s (tests/fake_uart.py) whose positions the test sets.
Every expected angle is worked here from those ticks and the servo map the test
writes (4096 ticks a turn, 2048 at the middle; the shoulder mounted reversed with
its horn 10 degrees off), never read from the code under test.
"""

import io
import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_uart import FakeSTSBus  # noqa: E402

from armfw import board as board_file, protocol, session  # noqa: E402
from armfw.motion import ArmController  # noqa: E402
from armfw.servobus import Bus  # noqa: E402
from armfw.sts import STSServos  # noqa: E402
from conftest import BOARDS, NoConsole, ProtocolLink, bus_board  # noqa: E402

IDS = [1, 2, 3, 4, 5, 6]
SHOULDER_OFFSET_DEG = 10.0      # the shoulder's horn, and its sign -1


def degrees(joint, ticks):
    """The joint angle (degrees) a servo reading ticks means, on this test's servo map."""
    servo_deg = (ticks - 2048) * 360.0 / 4096
    if joint == 1:
        return -(servo_deg - SHOULDER_OFFSET_DEG)
    return servo_deg


def ticks_of(joint, deg):
    """The tick a servo at joint angle deg reads (the inverse of degrees, to the nearest tick)."""
    servo_deg = SHOULDER_OFFSET_DEG - deg if joint == 1 else deg
    return round(2048 + servo_deg * 4096 / 360.0)


def shown(values):
    return ",".join("%.3f" % v for v in values)


@pytest.fixture
def arm(tmp_path, monkeypatch):
    """(protocol, session, bus, replies) on a bus board; poses.json in a fresh directory."""
    monkeypatch.chdir(tmp_path)
    d = bus_board("sts")
    d["joints"][1].update(sign=-1, offset_deg=SHOULDER_OFFSET_DEG, min_deg=-100, max_deg=100)
    bus = FakeSTSBus(IDS)
    arm = ArmController(board_file.from_dict(d), STSServos(Bus(bus), IDS), None, sleep_ms=lambda ms: None)
    out = []
    p = protocol.Protocol(arm, out.append)
    return p, session.Session(p, NoConsole()), bus, out


def ask(p, out, line):
    p.handle(line.encode())
    return out[-1]


def run(p, s):
    while p.machine.moving:
        s.tick()


def put_by_hand(bus, q_deg):
    ticks = [ticks_of(j, q) for j, q in enumerate(q_deg)]
    for servo, t in zip(IDS, ticks):
        bus.move_by_hand(servo, t)
    return ticks


def test_where_and_status_report_the_measured_angles_beside_the_commanded(arm):
    p, s, bus, out = arm
    assert ask(p, out, "relax") == "ok RELAXED"
    ticks = [2162, 1820, 3000, 1700, 2048]
    for servo, t in zip(IDS, ticks):
        bus.move_by_hand(servo, t)
    measured = shown(degrees(j, t) for j, t in enumerate(ticks))
    assert ask(p, out, "where") == "ok RELAXED measured=%s grip=none" % measured
    assert p.status_line() == "# status state=relaxed joints=?,?,?,?,? measured=%s" % measured
    # Torque on: the servos reach their goals (this fake follows at once), and the
    # measured angles are the commanded ones to within a tick (0.088 deg).
    assert ask(p, out, "home").startswith("ok OK 0.000 0.000 90.000 0.000 0.000 ")
    field = re.search(r" measured=(\S+)", ask(p, out, "where")).group(1)
    assert [float(v) for v in field.split(",")] == pytest.approx([0, 0, 90, 0, 0], abs=360 / 4096)
    assert "joints=0.000,0.000,90.000,0.000,0.000 measured=" in p.status_line()


def test_the_status_line_in_a_motion_reads_nothing_more_from_the_bus(arm):
    p, s, bus, out = arm
    ask(p, out, "home")
    p.handle(b"joints 20 10 60 0 0")
    s.tick()
    s.tick()
    before = bus.packets
    line = p.status_line()
    assert bus.packets == before                # the last step's feedback read, shown again
    field = re.search(r" measured=(\S+)", line).group(1)
    expected = [degrees(j, bus.servo(servo).present) for j, servo in enumerate(IDS[:5])]
    assert [float(v) for v in field.split(",")] == pytest.approx(expected, abs=0.0005)
    run(p, s)
    assert out[-1].startswith("ok OK 20.000 10.000 60.000 0.000 0.000 ")


def test_a_silent_bus_is_a_bus_error_for_where_and_a_question_mark_in_the_status(arm):
    p, s, bus, out = arm
    ask(p, out, "relax")
    bus.silent(3)
    assert ask(p, out, "where") == "error BUS_ERROR servo bus: no answer from ID 3 to a position read (read timeout)"
    assert p.status_line() == "# status state=relaxed joints=?,?,?,?,? measured=?"


def test_pose_save_when_relaxed_keeps_the_pose_the_arm_was_moved_to(arm):
    p, s, bus, out = arm
    ask(p, out, "home")
    assert ask(p, out, "relax") == "ok RELAXED"
    ticks = put_by_hand(bus, [30, -20, 45, 15, -60])
    q = [degrees(j, t) for j, t in enumerate(ticks)]
    text = " ".join("%.3f" % v for v in q)
    assert ask(p, out, "pose save reach") == "ok reach " + text
    saved = json.loads(Path("poses.json").read_text())["reach"]
    assert saved == pytest.approx(q, abs=1e-4)
    # A joint pushed past its limit is not a pose to keep.
    bus.move_by_hand(2, ticks_of(1, -110))
    assert ask(p, out, "pose save past") == "error JOINT_LIMIT shoulder %.3f deg is outside -100.000..100.000" % (
        degrees(1, ticks_of(1, -110)))
    assert "past" not in json.loads(Path("poses.json").read_text())


def test_engage_takes_the_torque_back_where_the_arm_stands_and_path_run_replays_the_record(arm):
    p, s, bus, out = arm
    ask(p, out, "relax")
    assert ask(p, out, "path clear") == "ok 0"
    waypoints = [[10, 20, 30, 0, 0], [25, 10, 60, 10, -20], [40, -10, 80, 20, -40]]
    recorded = []
    for i, q in enumerate(waypoints):
        recorded.append(put_by_hand(bus, q))
        assert ask(p, out, "path record") == "ok %d" % (i + 1)
        # A person pausing: the same pose again, a tick off, adds nothing.
        bus.move_by_hand(1, recorded[-1][0] + 1)
        assert ask(p, out, "path record") == "ok %d" % (i + 1)
    # The person leaves the arm somewhere else; engage holds it there: every goal is
    # the tick the servo reports, so nothing moves.
    left = put_by_hand(bus, [0, 0, 45, 0, 0])
    reply = ask(p, out, "engage")
    assert reply.startswith("ok OK %s " % " ".join("%.3f" % degrees(j, t) for j, t in enumerate(left)))
    assert reply.endswith(" steps=1")
    assert [bus.servo(servo).goal for servo in IDS[:5]] == left
    assert all(bus.servo(servo).torque for servo in IDS[:5])
    p.handle(b"path run")
    run(p, s)
    last = [degrees(j, t) for j, t in enumerate(recorded[-1])]
    assert out[-1].startswith("ok OK %s " % " ".join("%.3f" % v for v in last)), out[-1]
    assert [bus.servo(servo).present for servo in IDS[:5]] == recorded[-1]


def test_servo_read_answers_every_servos_ticks(arm):
    p, s, bus, out = arm
    ticks = [100, 2048, 4000, 1500, 2600, 3100]
    for servo, t in zip(IDS, ticks):
        bus.move_by_hand(servo, t)
    assert ask(p, out, "servo read") == "ok " + " ".join(str(t) for t in ticks)
    assert ask(p, out, "servo read 1") == "error BAD_INPUT expected 0 numbers (none), got 1 words"


@pytest.fixture
def pwm_arm(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from armfw import drivers
    b = board_file.load(str(BOARDS / "sim_arm5.json"))
    arm = ArmController(b, drivers.make(b), None)
    out = []
    return protocol.Protocol(arm, out.append), out


def test_a_board_whose_servos_cannot_report_changes_nothing_and_refuses_what_needs_a_reading(pwm_arm):
    p, out = pwm_arm
    ask(p, out, "home")
    assert "measured" not in ask(p, out, "where") and "measured" not in p.status_line()
    assert ask(p, out, "pose save here").startswith("ok here 0.000 ")
    assert set(p._families) == {"motion", "poses"}      # the teach family is not loaded for these
    assert ask(p, out, "servo read") == ("error BAD_COMMAND these servos cannot report where they are "
                                         "(servo read needs bus servos)")
    ask(p, out, "relax")
    for line in ("pose save limp", "path record", "engage"):
        assert ask(p, out, line) == ("error HOME_FIRST servos off, pose unknown: these servos cannot report "
                                     "where they are (send home, or joints Q1..Qn)"), line


def test_under_micropython_a_status_line_reads_the_bus_once_and_a_pwm_boards_costs_what_it_did(micropython, report):
    import os
    import subprocess
    from conftest import MP_SCRIPTS, ROOT
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    proc = subprocess.run([micropython, str(MP_SCRIPTS / "status_cost.py")], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {m[0]: (int(m[1]), int(m[2]), int(m[3]))
            for m in re.findall(r"^(\w+) lines=\d+ us=(\d+) alloc=(-?\d+) bus_packets=(\d+)$", proc.stdout, re.M)}
    assert set(rows) == {"pwm", "sts"}, proc.stdout
    assert rows["pwm"][2] == 0 and rows["sts"][2] == 1          # one sync read per idle status line
    for name, (us, alloc, _) in rows.items():
        report("status line (%s, Unix port): %d us, %d bytes allocated" % (name, us, alloc))


def test_armctl_teach_records_what_the_hand_does_and_replays_it(arm, monkeypatch):
    import argparse
    from armctl.commands import teach
    p, s, bus, out = arm
    ask(p, out, "home")
    monkeypatch.setattr(teach, "Link", lambda port, baud: ProtocolLink(p, out, s))
    # The person: holds still at the first pose for two samples, then two more poses.
    poses = [[10, 20, 30, 0, 0], [10, 20, 30, 0, 0], [25, 10, 60, 10, -20], [40, -10, 80, 20, -40]]

    class Hand:
        samples = 0

        def wait(self, seconds):
            if self.samples == len(poses):
                return True
            put_by_hand(bus, poses[self.samples])
            self.samples += 1
            return False

    parser = argparse.ArgumentParser()
    teach.add_arguments(parser)
    said = io.StringIO()
    args = parser.parse_args(["--port", "fake", "--replay"])
    assert teach.run(args, Hand(), said) == 0
    assert "recorded 3 waypoints" in said.getvalue()
    last = [degrees(j, ticks_of(j, v)) for j, v in enumerate(poses[-1])]
    assert out[-1].startswith("ok OK %s " % " ".join("%.3f" % v for v in last)), out[-1]
    assert [bus.servo(servo).present for servo in IDS[:5]] == [ticks_of(j, v) for j, v in enumerate(poses[-1])]
