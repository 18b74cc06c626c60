# SPDX-License-Identifier: MIT
"""`calibrate --by-hand`'s procedure (armctl.calibrate_by_hand.ByHand) on the SO-101 board, against
fake STS3215 servos (tests/fake_uart.py) that a simulated person turns with the torque off.

The person's arm has horns mounted off by known angles and joints that stop at
known angles; the expected offsets, limits and windows are worked from those
with the STS3215's 4096 ticks a turn, never from the code under test.
"""

import io
import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_uart import FakeSTSBus  # noqa: E402

from armctl import calibrate_by_hand, calibrate_store  # noqa: E402
from armfw import board as board_file, drivers  # noqa: E402
from armfw.servobus import Bus  # noqa: E402
from armfw.sts import STSServos  # noqa: E402
from conftest import BOARDS, ProtocolLink  # noqa: E402

SO101 = BOARDS / "so101.json"
TICKS_PER_DEG = 4096 / 360
HORN_OFF_DEG = [4.0, -7.5, 2.25, 10.0, -3.0]           # how far each horn sits from the board's zero
STOPS_DEG = [(-100, 100), (-90, 95), (-90, 88), (-85, 90), (-150, 150)]


def tick(j, q_deg):
    """What joint j's servo reads at joint angle q_deg (sign +1, 2048 at the servo's middle)."""
    return round(2048 + (HORN_OFF_DEG[j] + q_deg) * TICKS_PER_DEG)


class Person:
    """Puts the arm at its zero pose when asked, then swings each joint stop to stop."""

    def __init__(self, bus, ids, steps=40):
        self.bus = bus
        self.ids = ids
        self.steps = steps
        self.asked = []
        self._path = None

    def ask(self, text):
        self.asked.append(text)
        for j, servo in enumerate(self.ids):
            self.bus.move_by_hand(servo, tick(j, 0.0))

    def moving(self, j):
        if self._path is None:
            lo, hi = STOPS_DEG[j]
            down = [lo * k / self.steps for k in range(self.steps + 1)]
            up = [lo + (hi - lo) * k / (2 * self.steps) for k in range(2 * self.steps + 1)]
            self._path = iter(down + up)
        q = next(self._path, None)
        if q is None:
            self._path = None
            return True
        self.bus.move_by_hand(self.ids[j], tick(j, q))
        return False


def setup():
    b = board_file.load(str(SO101))
    ids = drivers.channels(b)
    bus = FakeSTSBus(ids)
    driver = STSServos(Bus(bus), ids)
    for servo in ids:
        bus.servo(servo).memory[40] = 1
    out = [0] * len(ids)
    person = Person(bus, ids[:5])
    said = []
    session = calibrate_by_hand.ByHand(lambda: list(driver.positions(out)), driver.off, person.ask, person.moving,
                               said.append)
    return b, bus, ids, session, person, said


def test_by_hand_finds_each_horns_offset_and_each_joints_stops(tmp_path):
    b, bus, ids, session, person, said = setup()
    fits, limits = session.run(b)
    assert [bus.servo(i).torque for i in ids] == [0] * 6       # limp while the person moves it
    assert len(person.asked) == 1 and person.asked[0].startswith("Torque is off.")
    for j in range(5):
        # The offset is the horn's, to the tick the servo reads (360/4096 deg).
        assert fits[j]["offset_deg"] == pytest.approx(HORN_OFF_DEG[j], abs=0.5 / TICKS_PER_DEG + 1e-3)
        assert fits[j]["sign"] == 1 and fits[j]["center_us"] == 2048
        assert fits[j]["us_per_rad"] == pytest.approx(4096 / (2 * math.pi), abs=1e-4)
        lo, hi = STOPS_DEG[j]
        assert limits[j]["min_us"] == tick(j, lo) and limits[j]["max_us"] == tick(j, hi)
        assert limits[j]["min_deg"] == pytest.approx(lo + 1.0, abs=0.1)
        assert limits[j]["max_deg"] == pytest.approx(hi - 1.0, abs=0.1)
    # Written out, the board loads with them, and the known pose maps to the ticks it read.
    cal = tmp_path / "calibration.json"
    cal.write_text(json.dumps(calibrate_store.calibration_file(b, fits)))
    board_path = tmp_path / "so101.json"
    board_path.write_text(json.dumps(calibrate_by_hand.limits_into(json.loads(SO101.read_text()), limits)))
    calibrated = board_file.load(str(board_path), calibration=str(cal))
    for j in range(5):
        assert calibrated.servos.pulse(j, 0.0) == tick(j, 0.0)
        lo, hi = STOPS_DEG[j]
        assert calibrated.solver.lo[j] == pytest.approx(math.radians(lo + 1.0), abs=math.radians(0.1))


def test_a_range_across_the_servos_tick_zero_is_refused_naming_the_joint():
    b, bus, ids, session, person, said = setup()
    HORN_OFF_DEG[4] += 175.0            # the roll's horn half a turn round: its range wraps
    try:
        with pytest.raises(calibrate_by_hand.ByHandError, match=r"^wrist_roll: the range crosses the servo's tick 0"):
            session.run(b)
    finally:
        HORN_OFF_DEG[4] -= 175.0


def test_a_joint_not_moved_is_named():
    b, bus, ids, session, person, said = setup()
    ticks = [tick(j, 0.0) for j in range(5)]
    with pytest.raises(calibrate_by_hand.ByHandError, match=r"^elbow_flex: it moved only 3 ticks"):
        calibrate_by_hand.by_hand_fit(b, ticks, [(t - 200, t + 200) if j != 2 else (t, t + 3) for j, t in enumerate(ticks)])


def test_calibrate_by_hand_from_the_command_line_writes_the_board_file(tmp_path, monkeypatch):
    """`armctl calibrate --by-hand` end to end: the firmware's protocol (`relax`, `servo read`)
    over fake STS3215s a simulated person turns, into the board file."""
    import argparse
    from armctl.commands import calibrate as command
    from armfw import protocol
    from armfw.motion import ArmController
    b = board_file.load(str(SO101))
    ids = drivers.channels(b)
    bus = FakeSTSBus(ids)
    arm = ArmController(b, STSServos(Bus(bus), ids), None, sleep_ms=lambda ms: None)
    replies = []
    p = protocol.Protocol(arm, replies.append)
    p.handle(b"home")
    assert [bus.servo(i).torque for i in ids[:5]] == [1] * 5
    monkeypatch.setattr(command, "Link", lambda port, baud: ProtocolLink(p, replies))
    monkeypatch.chdir(tmp_path)
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    args = parser.parse_args(["--board", str(SO101), "--by-hand", "--port", "fake"])
    before = SO101.read_text()
    person = Person(bus, ids[:5])
    said = io.StringIO()
    assert command.run(args, person=person, out=said) == 0
    assert [bus.servo(i).torque for i in ids] == [0] * 6       # relaxed before the person touched it
    assert SO101.read_text() == before                        # the board file given is left alone
    board_path = "so101-by-hand.json"
    calibrated = board_file.load(board_path)
    for j in range(5):
        lo, hi = STOPS_DEG[j]
        assert calibrated.servos.pulse(j, 0.0) == tick(j, 0.0)
        assert calibrated.servos.offsets[j] == pytest.approx(math.radians(HORN_OFF_DEG[j]),
                                                             abs=math.radians(0.5 / TICKS_PER_DEG))
        assert (calibrated.servos.min_us[j], calibrated.servos.max_us[j]) == (tick(j, lo), tick(j, hi))
        assert calibrated.solver.lo[j] == pytest.approx(math.radians(lo + 1.0), abs=math.radians(0.1))
        assert calibrated.solver.hi[j] == pytest.approx(math.radians(hi - 1.0), abs=math.radians(0.1))
    assert "written %s" % board_path in said.getvalue()


def test_calibrate_by_hand_refuses_a_board_without_bus_servos():
    import argparse
    from armctl import cli
    from armctl.commands import calibrate as command
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    args = parser.parse_args(["--board", str(BOARDS / "sim_arm5.json"), "--by-hand", "--port", "fake"])
    with pytest.raises(cli.UsageError, match="--by-hand needs bus servos"):
        command.run(args)
