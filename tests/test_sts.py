# SPDX-License-Identifier: MIT
"""The Feetech STS driver (armfw.sts) against fake STS3215 servos (tests/fake_uart.py),
with Feetech's own SDK (ftservo-python-sdk, module scservo_sdk) as the referee.

The SDK builds the packets for the same operations, and both sides' bytes must
be equal; the SDK also talks to the same fake servos, so what our driver
writes the SDK reads back, and what the SDK writes our driver reads. No
expected number here comes from our own driver.
"""

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_uart import FakeSTSBus, SDKSerial  # noqa: E402

from armfw import board as board_file, drivers, feedback, status  # noqa: E402
from armfw.fields import BoardError  # noqa: E402
from armfw.servobus import Bus, BusError  # noqa: E402
from armfw.sts import STSServos  # noqa: E402
from conftest import BOARDS, MP_SCRIPTS, ROOT, bus_board  # noqa: E402

scs = pytest.importorskip("scservo_sdk", reason="ftservo-python-sdk (the test extra) is not installed")

IDS = [1, 2, 3, 4, 5, 6]


def sdk_on(bus):
    """Feetech's sms_sts packet handler talking to bus."""
    port = scs.PortHandler("fake")
    port.ser = SDKSerial(bus)
    port.is_open = True
    port.tx_time_per_byte = 10.0 / 1000.0    # 1 Mbit/s, ms per byte as the SDK counts
    return scs.sms_sts(port)


def sdk_bytes(bus, action):
    """The packets the SDK writes while action() runs."""
    bus.record = []
    action()
    out, bus.record = bus.record, None
    return out


def driver_on(bus, ids=IDS):
    return STSServos(Bus(bus), ids)


def test_start_pings_every_id_and_turns_torque_off():
    bus = FakeSTSBus(IDS)
    for i in IDS:
        bus.servo(i).memory[40] = 1         # left holding by a previous run
    driver_on(bus)
    assert [bus.servo(i).torque for i in IDS] == [0] * 6


def test_missing_ids_are_named():
    bus = FakeSTSBus([1, 2, 4, 6])
    with pytest.raises(BusError) as e:
        STSServos(Bus(bus), IDS, place="UART 1 (tx GPIO 4, rx GPIO 5, 1000000 baud)")
    assert str(e.value) == ("no STS servo answers at ID 3, 5 on UART 1 (tx GPIO 4, rx GPIO 5, 1000000 baud): "
                            "check the servo power, the wiring and each servo's ID")


def test_ping_bytes_are_the_sdks():
    bus = FakeSTSBus(IDS)
    driver = driver_on(bus)
    sdk = sdk_on(bus)
    for servo, there in ((1, True), (6, True), (253, False)):
        theirs = sdk_bytes(bus, lambda: sdk.ping(servo))
        bus.readinto(bytearray(64))         # drop what the servo answered the SDK
        ours = sdk_bytes(bus, lambda: driver.ping(servo) == there or pytest.fail("ping %d" % servo))
        assert ours == theirs[:1]           # the SDK then reads the model number


def test_sync_write_of_goals_is_the_sdks_packet():
    rng = random.Random(29)
    bus = FakeSTSBus(IDS)
    driver = driver_on(bus)
    sdk = sdk_on(bus)
    for _ in range(20):
        goals = [rng.randrange(0, 4096) for _ in IDS]
        group = scs.GroupSyncWrite(sdk, 42, 2)
        for servo, goal in zip(IDS, goals):
            group.addParam(servo, [sdk.scs_lobyte(goal), sdk.scs_hibyte(goal)])
        theirs = sdk_bytes(bus, group.txPacket)
        ours = sdk_bytes(bus, lambda: driver.set_many(IDS, goals))
        assert ours[0] == theirs[0]
        # ... and the servos took them: the SDK reads each goal register back.
        for servo, goal in zip(IDS, goals):
            value, result, error = sdk.read2ByteTxRx(servo, 42)
            assert (value, result, error) == (goal, scs.COMM_SUCCESS, 0)


def test_torque_packets_are_the_sdks_and_the_goal_goes_first():
    bus = FakeSTSBus(IDS)
    driver = driver_on(bus)
    sdk = sdk_on(bus)
    group_on = scs.GroupSyncWrite(sdk, 40, 1)
    for servo in (2, 5):
        group_on.addParam(servo, [1])
    expected_on = sdk_bytes(bus, group_on.txPacket)
    goals = scs.GroupSyncWrite(sdk, 42, 2)
    goals.addParam(2, [0x00, 0x08])
    goals.addParam(5, [0x34, 0x02])
    expected_goals = sdk_bytes(bus, goals.txPacket)
    driver.off()
    sent = sdk_bytes(bus, lambda: driver.set_many([2, 5], [0x800, 0x234]))
    assert sent == expected_goals + expected_on
    assert [bus.servo(i).torque for i in IDS] == [0, 1, 0, 0, 1, 0]
    # Torque on already: the goals alone.
    assert sdk_bytes(bus, lambda: driver.set_many([2, 5], [0x800, 0x234])) == expected_goals
    group_off = scs.GroupSyncWrite(sdk, 40, 1)
    for servo in IDS:
        group_off.addParam(servo, [0])
    assert sdk_bytes(bus, driver.off) == sdk_bytes(bus, group_off.txPacket)
    assert [sdk.read1ByteTxRx(i, 40)[0] for i in IDS] == [0] * 6


def test_set_us_writes_one_goal_and_torque():
    bus = FakeSTSBus(IDS)
    driver = driver_on(bus)
    sdk = sdk_on(bus)
    driver.set_us(3, 1234)
    assert sdk.read2ByteTxRx(3, 42)[0] == 1234 and sdk.read1ByteTxRx(3, 40)[0] == 1
    assert [sdk.read1ByteTxRx(i, 40)[0] for i in IDS] == [0, 0, 1, 0, 0, 0]


def test_sync_read_request_is_the_sdks_and_positions_match_what_the_sdk_reads():
    rng = random.Random(7)
    present = [rng.randrange(0, 4096) for _ in IDS]
    bus = FakeSTSBus(IDS, present=present)
    driver = driver_on(bus)
    sdk = sdk_on(bus)
    group = scs.GroupSyncRead(sdk, 56, 8)
    for servo in IDS:
        group.addParam(servo)
    theirs = sdk_bytes(bus, group.txPacket)
    bus.readinto(bytearray(256))            # the servos' answers to the SDK's request
    sdk.portHandler.is_using = False        # (its rxPacket would have freed the port)
    out = [0] * 6
    ours = sdk_bytes(bus, lambda: driver.positions(out))
    assert ours[0] == theirs[0]
    assert group.txRxPacket() == scs.COMM_SUCCESS
    assert out == [group.getData(i, 56, 2) for i in IDS] == present
    assert out == [sdk.ReadPos(i)[0] for i in IDS]


def test_status_is_what_the_sdk_decodes():
    bus = FakeSTSBus(IDS)
    driver = driver_on(bus)
    sdk = sdk_on(bus)
    bus.servo(4).memory[62] = 118
    bus.servo(4).memory[63] = 47
    driver.set_many(IDS, [2048, 2048, 2048, 3000, 2048, 2048])
    bus.block(4)                              # held at 2048, away from 3000, by a hand
    driver.positions([0] * 6)
    load, volts10, temp_c, errors = driver.status(3)
    raw_load = sdk.read2ByteTxRx(4, 60)[0]
    assert load == sdk.scs_tohost(raw_load, 10) and load > 0
    assert (volts10, temp_c, errors) == (sdk.read1ByteTxRx(4, 62)[0], sdk.read1ByteTxRx(4, 63)[0], 0) == (118, 47, 0)


def test_goals_are_checked_before_anything_is_sent():
    bus = FakeSTSBus(IDS)
    driver = driver_on(bus)
    before = bus.packets
    for servos, ticks in (([1, 2], [100, 4096]), ([1, 7], [100, 100]), ([1, 2], [100, -1]),
                          ([1, 2], [100, 2.5]), ([1, 2], [100])):
        with pytest.raises(ValueError):
            driver.set_many(servos, ticks)
    with pytest.raises(ValueError):
        driver.set_us(1, 4096)
    with pytest.raises(ValueError):
        driver.off(9)
    assert bus.packets == before


def test_a_silent_servo_is_a_read_timeout_naming_it():
    bus = FakeSTSBus(IDS)
    driver = driver_on(bus)
    bus.silent(3)
    with pytest.raises(BusError, match=r"^servo bus: no answer from ID 3 to a position read \(read timeout\)$"):
        driver.positions([0] * 6)
    # The SDK sees the same silence.
    sdk = sdk_on(bus)
    assert sdk.read2ByteTxRx(3, 56)[1] == scs.COMM_RX_TIMEOUT


def test_a_bad_checksum_is_an_error_naming_the_servo():
    bus = FakeSTSBus(IDS)
    driver = driver_on(bus)
    bus.corrupt(5)
    with pytest.raises(BusError, match=r"^servo bus: bad packet from ID 5 to a position read"):
        driver.positions([0] * 6)
    sdk = sdk_on(bus)
    assert sdk.read2ByteTxRx(5, 56)[1] == scs.COMM_RX_CORRUPT
    bus.corrupt(5, False)
    assert driver.positions([0] * 6) == [2048] * 6
    bus.corrupt(2)
    with pytest.raises(BusError, match="bad packet from ID 2 to a ping"):
        driver.ping(2)


class RecordingPin:
    def __init__(self, bus):
        self.bus = bus
        self.level = 0
        self.changes = []

    def value(self, v):
        self.level = v
        self.changes.append(v)


def test_direction_pin_is_high_only_while_sending_and_echo_is_dropped():
    bus = FakeSTSBus(IDS, present=1000)
    bus.echo = True
    levels = []
    write = bus.write
    bus.write = lambda buf: (levels.append(pin.level), write(buf))[1]
    pin = RecordingPin(bus)
    driver = STSServos(Bus(bus, pin, echo=True), IDS)
    assert driver.positions([0] * 6) == [1000] * 6
    assert set(levels) == {1} and pin.level == 0 and pin.changes == [1, 0] * len(levels)


def test_feedback_names_the_blocked_joint_its_lag_and_load():
    bus = FakeSTSBus(IDS)
    driver = driver_on(bus)
    names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
    limits = feedback.Limits({"max_lag": 40, "max_load": 600, "max_temp_c": 60, "min_volts": 6.0,
                              "max_volts": 8.4}, names)
    goals = [2048, 2100, 2048, 2048, 2048]
    driver.set_many(IDS[:5], goals)
    assert feedback.check(driver, goals, limits) is None
    bus.block(2)
    goals[1] = 2300
    driver.set_many(IDS[:5], goals)
    word, joint, message = feedback.check(driver, goals, limits)
    assert (word, joint) == (status.BLOCKED, 1)
    assert message == "shoulder_lift lags its goal by -200 ticks with load 1000 per mille"
    bus.block(2, False)
    assert feedback.check(driver, goals, limits) is None
    bus.servo(6).memory[63] = 71
    assert feedback.check(driver, goals, limits) == (status.OVERHEAT, 5, "gripper servo at 71 C (limit 60 C)")
    bus.servo(6).memory[63] = 30
    bus.servo(1).memory[62] = 55
    assert feedback.check(driver, goals, limits) == (
        status.VOLTAGE, 0, "shoulder_pan servo supply at 5.5 V (limits 6.0..8.4 V)")
    bus.servo(1).memory[62] = 74
    bus.silent(4)
    assert feedback.check(driver, goals, limits) == (
        status.BUS_ERROR, -1, "servo bus: no answer from ID 4 to a position read (read timeout)")


def test_feedback_lag_below_the_threshold_passes_and_zero_turns_a_check_off():
    bus = FakeSTSBus(IDS, follow=0.5)
    driver = driver_on(bus)
    names = ["a", "b", "c", "d", "e", "gripper"]
    goals = [2048 + 60, 2048, 2048, 2048, 2048]
    driver.set_many(IDS[:5], goals)
    # Half way after one read: 30 ticks behind.
    assert feedback.check(driver, goals, feedback.Limits({"max_lag": 31}, names)) is None
    driver.set_many(IDS[:5], [2048 + 200] + goals[1:])
    failure = feedback.check(driver, [2048 + 200] + goals[1:], feedback.Limits({"max_lag": 31}, names))
    assert failure[:2] == (status.BLOCKED, 0)
    assert feedback.check(driver, goals, feedback.Limits({}, names)) is None


# -- the board file ---------------------------------------------------------

def test_an_sts_board_loads_and_its_windows_are_ticks():
    b = board_file.from_dict(bus_board("sts"))
    assert drivers.channels(b) == IDS
    # 125 deg from the middle: 2048 + 125 deg * 4096/360 ticks, rounded.
    assert b.servos.pulse(0, 125 * 3.141592653589793 / 180) == round(2048 + 125 * 4096 / 360)


@pytest.mark.parametrize("change, message", [
    ({"tx": 40}, ".driver.tx: GPIO 40 cannot drive an output on rp2040"),
    ({"baud": 300}, ".driver.baud: must be a whole number 9600..4500000, got 300"),
    ({"dir_pin": 4}, ".driver.dir_pin: GPIO 4 is already tx or rx"),
    ({"echo": 1}, ".driver.echo: must be true or false"),
    ({"max_lag": -1}, ".driver.max_lag: must be >= 0 (0: off), got -1"),
    ({"freq_hz": 50}, ".driver.freq_hz: not a sts setting"),
    ({"ticks_per_rev": 3000}, ".driver.ticks_per_rev: a goal of 3500 ticks is past the last tick "
                              "of a 3000-tick turn"),
])
def test_bad_sts_fields_are_named(change, message):
    with pytest.raises(BoardError) as e:
        board_file.from_dict(bus_board("sts", **change), "b.json")
    assert message in str(e.value)


def test_an_id_past_the_bus_range_is_refused():
    d = bus_board("sts")
    d["gripper"]["channel"] = 254
    with pytest.raises(BoardError, match=r"gripper.channel: 254 is not a servo ID on this bus \(0..253\)"):
        board_file.from_dict(d, "b.json")


def test_set_many_on_every_driver_is_set_us_for_each(tmp_path):
    """set_many gives each channel what set_us would, and refuses as a whole."""
    from fake_i2c import FakePCA9685, FakePWM
    from armfw.pca9685 import PCA9685
    from armfw.pwmservo import PWMServos
    from armfw.simservo import SimServo
    channels = [0, 1, 2, 3]
    pulses = [900, 1500, 2100, 1234]
    chip_a, chip_b = FakePCA9685(), FakePCA9685()
    a, b = PCA9685(chip_a), PCA9685(chip_b)
    a.set_many(channels, pulses)
    for c, p in zip(channels, pulses):
        b.set_us(c, p)
    assert chip_a.regs == chip_b.regs
    with pytest.raises(ValueError):
        a.set_many([0, 16], [1500, 1500])
    assert chip_a.regs == chip_b.regs
    made = {}
    pwm = PWMServos(channels, 50, lambda pin, f: made.setdefault(pin, FakePWM(pin, freq=f, duty_u16=0)))
    pwm.set_many(channels, pulses)
    assert [made[c].pulse_us() for c in channels] == pulses
    with pytest.raises(ValueError):
        pwm.set_many([0, 1], [1500, 30000])
    assert made[0].pulse_us() == 900
    sim = SimServo({"freq_hz": 50})
    sim.set_many(channels, pulses)
    assert [(c, u) for _, c, u in sim.records()] == list(zip(channels, pulses))
    with pytest.raises(ValueError):
        sim.set_many([0, 1], [1500, 0])
    assert sim.count == 4


def test_only_a_bus_board_loads_the_bus_driver(micropython, tmp_path):
    path = tmp_path / "pico_sts.json"
    path.write_text(json.dumps(bus_board("sts")))
    script = ("import sys\nfrom armfw import board\nb = board.load(%r)\n"
              "print(sorted(k for k in sys.modules if k.startswith('armfw')))\n")
    seen = {}
    for name, p in (("sim_arm5", BOARDS / "sim_arm5.json"), ("pico_sts", path)):
        proc = subprocess.run([micropython, "-c", script % str(p)], cwd=str(ROOT / "firmware"),
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        seen[name] = set(eval(proc.stdout))
    assert not {"armfw.sts", "armfw.servobus", "armfw.feedback", "armfw.dynamixel"} & seen["sim_arm5"]
    assert {"armfw.sts", "armfw.servobus"} <= seen["pico_sts"] and "armfw.simservo" not in seen["pico_sts"]


def test_under_micropython_the_bus_drivers_allocate_nothing_per_step(micropython, report):
    env = dict(os.environ, MICROPYPATH=str(ROOT / "firmware"))
    out = subprocess.run([micropython, str(MP_SCRIPTS / "bus_alloc.py")], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    rows = {m[0]: (int(m[1]), int(m[2]), m[3])
            for m in re.findall(r"^(\w+) steps=(\d+) alloc=(-?\d+) locked=(\w+)$", out.stdout, re.M)}
    assert {"sts", "dynamixel"} <= set(rows), out.stdout
    steps, alloc, locked = rows.pop("control_recording_bus")
    assert alloc > 0 and locked == "MemoryError"
    for name, (steps, alloc, locked) in rows.items():
        assert steps >= 500 and alloc == 0 and locked == "ok", (name, rows[name])
        report("%s: %d steps (sync write + sync read) under MicroPython allocated %d bytes" % (name, steps, alloc))
    for name in ("sts", "dynamixel"):
        assert "positions %s [100, 200, 300, 400, 500, 600]" % name in out.stdout.splitlines()
