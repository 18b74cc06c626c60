# SPDX-License-Identifier: MIT
"""The Dynamixel Protocol 2.0 driver (armfw.dynamixel) against fake XL330 servos
(tests/fake_uart.py), with ROBOTIS's own SDK (dynamixel-sdk) as the referee:
the SDK builds the packets for the same operations (CRC, stuffing) and reads
back what our driver wrote; the fake's CRC is computed bit by bit from the
polynomial, the driver's from a table.
"""

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_uart import FakeDynamixelBus, SDKSerial, crc16_8005  # noqa: E402

from armfw import board as board_file, feedback, status  # noqa: E402
from armfw.dynamixel import DynamixelServos, crc16  # noqa: E402
from armfw.fields import BoardError  # noqa: E402
from armfw.servobus import Bus, BusError  # noqa: E402
from conftest import bus_board  # noqa: E402

dxl = pytest.importorskip("dynamixel_sdk", reason="dynamixel-sdk (the test extra) is not installed")

IDS = [1, 2, 3, 4, 5, 6]


class SDK:
    """ROBOTIS's packet handler and a port on a fake bus."""

    def __init__(self, bus):
        self.port = dxl.PortHandler("fake")
        self.port.ser = SDKSerial(bus)
        self.port.is_open = True
        self.port.tx_time_per_byte = 10.0 / 1000.0
        self.ph = dxl.PacketHandler(2.0)


def sdk_bytes(bus, action):
    bus.record = []
    action()
    out, bus.record = bus.record, None
    return out


def test_crc_is_the_polynomials():
    rng = random.Random(3)
    DynamixelServos(Bus(FakeDynamixelBus([1])), [1])     # the table is made with the first bus
    for _ in range(50):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        assert crc16(0, data, 0, len(data)) == crc16_8005(data, 0, len(data))
    # ROBOTIS's e-Manual example: a PING to ID 1 ends in CRC 19 4E.
    ping = bytes([0xFF, 0xFF, 0xFD, 0x00, 0x01, 0x03, 0x00, 0x01])
    assert crc16(0, ping, 0, len(ping)) == 0x4E19


def test_start_pings_and_names_the_missing():
    with pytest.raises(BusError, match=r"^no Dynamixel servo answers at ID 2, 6 on the bus"):
        DynamixelServos(Bus(FakeDynamixelBus([1, 3, 4, 5])), IDS)
    bus = FakeDynamixelBus(IDS)
    for i in IDS:
        bus.servo(i).memory[64] = 1
    DynamixelServos(Bus(bus), IDS)
    assert [bus.servo(i).torque for i in IDS] == [0] * 6


def test_ping_and_sync_write_bytes_are_the_sdks():
    rng = random.Random(29)
    bus = FakeDynamixelBus(IDS)
    driver = DynamixelServos(Bus(bus), IDS)
    sdk = SDK(bus)
    theirs = sdk_bytes(bus, lambda: sdk.ph.ping(sdk.port, 3))
    ours = sdk_bytes(bus, lambda: driver.ping(3))
    assert ours == theirs
    for _ in range(20):
        goals = [rng.randrange(0, 4096) for _ in IDS]
        group = dxl.GroupSyncWrite(sdk.port, sdk.ph, 116, 4)
        for servo, goal in zip(IDS, goals):
            group.addParam(servo, list(goal.to_bytes(4, "little")))
        theirs = sdk_bytes(bus, group.txPacket)
        ours = sdk_bytes(bus, lambda: driver.set_many(IDS, goals))
        assert ours[0] == theirs[0]
        for servo, goal in zip(IDS, goals):
            assert sdk.ph.read4ByteTxRx(sdk.port, servo, 116) == (goal, dxl.COMM_SUCCESS, 0)
    # Torque went on after the first goals, one packet, as the SDK builds it.
    assert [sdk.ph.read1ByteTxRx(sdk.port, i, 64)[0] for i in IDS] == [1] * 6
    group = dxl.GroupSyncWrite(sdk.port, sdk.ph, 64, 1)
    for servo in IDS:
        group.addParam(servo, [0])
    assert sdk_bytes(bus, driver.off) == sdk_bytes(bus, group.txPacket)


def test_stuffing_is_the_sdks():
    """A goal whose bytes make FF FF FD is stuffed as the SDK's addStuffing stuffs it.

    The SDK's own txPacket (dynamixel-sdk 4.1.0) drops what addStuffing returns
    when stuffing lengthens the packet, and so sends it unstuffed: the reference
    here is addStuffing and updateCRC, called on the SDK's unstuffed packet.
    """
    bus = FakeDynamixelBus([1, 2])
    driver = DynamixelServos(Bus(bus), [1, 2], ticks_per_rev=1 << 24)
    sdk = SDK(bus)
    goal = 0xFDFFFF        # little-endian FF FF FD
    group = dxl.GroupSyncWrite(sdk.port, sdk.ph, 116, 4)
    group.addParam(1, list(goal.to_bytes(4, "little")))
    group.addParam(2, [0, 8, 0, 0])
    unstuffed = sdk_bytes(bus, group.txPacket)[0]
    stuffed = sdk.ph.addStuffing(list(unstuffed))
    crc = sdk.ph.updateCRC(0, stuffed, len(stuffed) - 2)
    stuffed[-2:] = [crc & 0xFF, crc >> 8]
    ours = sdk_bytes(bus, lambda: driver.set_many([1, 2], [goal, 0x800]))
    assert b"\xff\xff\xfd\xfd" in bytes(stuffed) and ours[0] == bytes(stuffed)
    assert bus.servo(1).goal == goal
    # A present position that reads FF FF FD comes back unstuffed.
    bus.move_by_hand(1, goal)
    bus.servo(1).memory[64] = 0
    out = [0, 0]
    driver.positions(out)
    assert out[0] == goal == sdk.ph.read4ByteTxRx(sdk.port, 1, 132)[0]


def test_sync_read_request_is_the_sdks_and_positions_match():
    rng = random.Random(11)
    present = [rng.randrange(0, 4096) for _ in IDS]
    bus = FakeDynamixelBus(IDS, present=present)
    driver = DynamixelServos(Bus(bus), IDS)
    sdk = SDK(bus)
    group = dxl.GroupSyncRead(sdk.port, sdk.ph, 126, 21)
    for servo in IDS:
        group.addParam(servo)
    theirs = sdk_bytes(bus, group.txPacket)
    bus.readinto(bytearray(512))
    sdk.port.is_using = False
    out = [0] * 6
    ours = sdk_bytes(bus, lambda: driver.positions(out))
    assert ours[0] == theirs[0]
    assert group.txRxPacket() == dxl.COMM_SUCCESS
    assert out == [group.getData(i, 132, 4) for i in IDS] == present
    bus.servo(2).memory[144] = 48
    bus.servo(2).memory[146] = 52
    driver.positions(out)
    assert driver.status(1) == (0, 48, 52, 0)


def test_errors_name_the_servo_and_the_alert_reads_the_hardware_error():
    bus = FakeDynamixelBus(IDS)
    driver = DynamixelServos(Bus(bus), IDS)
    bus.silent(4)
    with pytest.raises(BusError, match=r"^servo bus: no answer from ID 4 to a position read"):
        driver.positions([0] * 6)
    bus.silent(4, False)
    bus.corrupt(2)
    with pytest.raises(BusError, match=r"^servo bus: bad packet from ID 2 to a position read"):
        driver.positions([0] * 6)
    sdk = SDK(bus)
    assert sdk.ph.read4ByteTxRx(sdk.port, 2, 132)[1] == dxl.COMM_RX_CORRUPT
    bus.corrupt(2, False)
    bus.readinto(bytearray(512))
    bus.servo(5).errors = 0x80
    bus.servo(5).memory[70] = 0x04      # overheating
    names = ["a", "b", "c", "d", "e", "gripper"]
    assert feedback.check(driver, [2048] * 5, feedback.Limits({}, names)) == (
        status.OVERHEAT, 4, "e servo at 30 C (limit 0 C) and reports overheating")


def test_a_dynamixel_board_checks_its_ids():
    d = bus_board("dynamixel")
    board_file.from_dict(d)
    d["gripper"]["channel"] = 253
    with pytest.raises(BoardError, match=r"gripper.channel: 253 is not a servo ID on this bus \(0..252\)"):
        board_file.from_dict(d, "b.json")
